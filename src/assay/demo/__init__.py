"""The demo project: fictional documents written by the Assay authors, bundled in the package."""

from __future__ import annotations

import json
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from assay.errors import NotFound
from assay.ingest import IngestReport, Source, ingest_source
from assay.models import Project
from assay.projects import create_project, get_project
from assay.workspace import Workspace

DEMO_PROJECT = "demo"


def demo_files() -> list[Traversable]:
    folder = resources.files("assay.demo") / "documents"
    return sorted((f for f in folder.iterdir() if f.is_file()), key=lambda f: f.name)


def gold_items() -> list[dict[str, Any]]:
    """The demo gold set: queries with their type, answer and evidence texts."""
    text = (resources.files("assay.demo") / "gold.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def open_demo(ws: Workspace, name: str = DEMO_PROJECT) -> tuple[Project, IngestReport | None]:
    """Open the demo project, creating and filling it on first use."""
    try:
        return get_project(ws, name), None
    except NotFound:
        pass
    project = create_project(ws, name, "en")
    report = IngestReport()
    for file in demo_files():
        data = file.read_bytes()
        source = Source(file.name, file.read_bytes, len(data), {"path": file.name})
        report.outcomes.append(ingest_source(ws, project, source, author="assay-demo"))
    return project, report
