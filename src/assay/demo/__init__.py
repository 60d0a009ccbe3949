"""The demo project: fictional documents written by the Assay authors, bundled in the package."""

from __future__ import annotations

import json
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from assay.corpus.documents import list_documents
from assay.corpus.ingest import IngestReport, Source, ingest_source
from assay.errors import NotFound
from assay.gold.items import create_item, parse_item, set_status
from assay.people.actors import account_for
from assay.records import Project
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace

DEMO_PROJECT = "demo"

DEMO_AUTHOR = "assay-demo"


def demo_files() -> list[Traversable]:
    folder = resources.files("assay.demo") / "documents"
    return sorted((f for f in folder.iterdir() if f.is_file()), key=lambda f: f.name)


def gold_items() -> list[dict[str, Any]]:
    """The demo gold set: queries with their type, answer and evidence texts."""
    text = (resources.files("assay.demo") / "gold.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def open_demo(
    ws: Workspace, name: str = DEMO_PROJECT, *, with_items: bool = False
) -> tuple[Project, IngestReport | None]:
    """Open the demo project, creating and filling it on first use; ``with_items`` also adds
    the demo gold set as accepted items (what ``assay demo`` shows)."""
    try:
        return get_project(ws, name), None
    except NotFound:
        pass
    project = create_project(ws, name, "en")
    report = IngestReport()
    author = account_for(ws, DEMO_AUTHOR)  # an imported account: it never signs in
    for file in demo_files():
        data = file.read_bytes()
        source = Source(file.name, file.read_bytes, len(data), {"path": file.name})
        report.outcomes.append(ingest_source(ws, project, source, author=author))
    if with_items:
        add_gold_items(ws, project)
    return project, report


def add_gold_items(ws: Workspace, project: Project) -> int:
    """The demo gold set as accepted items, evidence located in the documents by its text."""
    doc_ids = {d.name: d.id for d in list_documents(ws, project)}
    author = account_for(ws, DEMO_AUTHOR)  # an imported account: it never signs in
    for gold in gold_items():
        data = parse_item(
            {
                "notes": f"demo gold item {gold['query_id']} ({gold['language']})",
                "turns": [
                    {
                        "query": gold["query"],
                        "query_type": gold["query_type"],
                        "answer": gold["answer"],
                        "evidence": [
                            {
                                "doc_id": doc_ids[e["document"]],
                                "text": e["text"],
                                "label": e["label"],
                                "group": e["group"],
                            }
                            for e in gold["evidence"]
                        ],
                    }
                ],
            },
            f"demo item {gold['query_id']}",
        )
        item = create_item(ws, project, data, author=author)
        set_status(ws, project, item.id, "accepted", item.version, actor=author)
    return len(gold_items())
