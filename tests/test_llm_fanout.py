"""Synthesis drafts and relevance suggestions ask side by side and store exactly what one
request at a time stores, in the same order."""

from __future__ import annotations

import json
from typing import Any

from assay.corpus.chunkings import create_chunking
from assay.corpus.ingest import ingest_bytes
from assay.gold.item_lists import iter_items
from assay.gold.project_config import update_settings
from assay.gold.suggesting import suggest_items
from assay.gold.suggestions import list_suggestions
from assay.gold.synthesis import synthesize
from assay.people.actors import acting_account
from assay.records import Project
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.fakes.openai_server import Computed, FakeOpenAI, Latency
from tests.suggestion_sample import JUDGE, add_documents, new_item

TEXT = " ".join(f"Rule {n} says that form {n} is filed within {n + 2} days." for n in range(30))


def draft(body: dict[str, Any]) -> str:
    """A draft about the passage asked for (so each reply differs and tells its request)."""
    passage = body["messages"][-1]["content"].rsplit("Rule ", 1)[-1][:30]
    return json.dumps({"question": f"What about rule {passage}?", "answer": f"Rule {passage}"})


def project_with(ws: Workspace, name: str, url: str, limit: int) -> Project:
    project = create_project(ws, name, "en")
    ingest_bytes(ws, project, "rules.txt", TEXT.encode())
    create_chunking(ws, project, "sent", "sentences", {"sentences": 1})  # 30 chunks
    generator = {"kind": "openai", "base_url": url, "model": "m", "max_in_flight": limit}
    return update_settings(ws, project, {"generator": generator})


def drafts(ws: Workspace, project: Project) -> list[tuple[str, str, str]]:
    found = []
    for item in iter_items(ws, project):
        turn = item.turns[0]
        found.append((item.extra["synthesis"]["chunk_id"][-8:], turn.query, turn.answer))
    return found


def test_synthesis_side_by_side_stores_what_one_at_a_time_stores(ws: Workspace) -> None:
    with FakeOpenAI([Latency(Computed(draft), seconds=0.05)]) as fake:
        one = project_with(ws, "one", fake.url, 1)
        sequential = synthesize(ws, one, n=12, seed=3, chunking="sent", cache=False)
        assert fake.peak_in_flight == 1
        fake.reset([Latency(Computed(draft), seconds=10.0, until=6)])  # rounds of 6 at once
        many = project_with(ws, "many", fake.url, 6)
        progress: list[int] = []
        parallel = synthesize(
            ws,
            many,
            n=12,
            seed=3,
            chunking="sent",
            cache=False,
            progress=lambda done, total: progress.append(done),
        )
        assert fake.peak_in_flight == 6
    assert len(sequential.created) == len(parallel.created) == 12
    assert progress == list(range(1, 13))  # reported in order
    assert sequential.per_type == parallel.per_type
    # the same chunks, questions and answers, stored in the same order
    assert [d[1:] for d in drafts(ws, one)] == [d[1:] for d in drafts(ws, many)]


def test_suggestions_for_many_items_side_by_side_match(ws: Workspace) -> None:
    projects = []
    with FakeOpenAI() as fake:
        for name, limit in (("one", 1), ("many", 4)):
            fake.reset([Latency(JUDGE, seconds=10.0 if limit > 1 else 0.05, until=limit)])
            project = create_project(ws, name, "en")
            add_documents(ws, project)
            items = [
                new_item(ws, project, f"When does the night ferry leave? ({n})") for n in range(8)
            ]
            settings = {
                "kind": "openai",
                "base_url": fake.url,
                "model": "m",
                "max_in_flight": limit,
            }
            project = update_settings(ws, project, {"generator": settings})
            report = suggest_items(ws, project, actor=acting_account(ws), k=3, cache=False)
            assert report.failed == [] and report.items == 8
            assert list(report.per_item) == [item.id for item in items]  # the order given
            projects.append((project, items, report, fake.peak_in_flight))
    (one, one_items, one_report, one_peak), (many, many_items, many_report, many_peak) = projects
    assert one_peak == 1 and many_peak == 4
    assert one_report.created == many_report.created == 24
    for first, second in zip(one_items, many_items, strict=True):
        labels = [(s.text, s.label, s.reason) for s in list_suggestions(ws, one, first.id)]
        assert labels == [
            (s.text, s.label, s.reason) for s in list_suggestions(ws, many, second.id)
        ]
