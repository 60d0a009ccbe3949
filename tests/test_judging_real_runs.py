"""autojudge-annotate's own inputs (the starter kit's kiddie topics and runs) out again: every
report Assay exports for judging is the report as its run file has it (sentences, citations
and the documents that run embedded), so autojudge-annotate shows the judges the same page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.judging.judgment_files import judgment_records
from assay.judging.judgments import Unit, save_judgment
from assay.judging.reports import list_reports
from assay.judging.run_import import import_judging_inputs
from assay.people.accounts import create_account
from assay.store.projects import create_project
from assay.store.workspace import Workspace


def shown(line: dict[str, Any]) -> dict[str, Any]:
    """A run line as autojudge-annotate shows it (``report`` of a judgment record)."""
    meta = line["metadata"]
    sentences = [
        {"text": s["text"], **({"citations": s["citations"]} if s.get("citations") else {})}
        for s in line["responses"]
    ]
    return {
        "team_id": meta["team_id"],
        "run_id": meta["run_id"],
        "topic_id": meta["topic_id"],
        "sentences": sentences,
        "documents": line.get("documents") or {},
    }


def test_every_kiddie_report_goes_out_as_its_run_file_has_it(
    ws: Workspace, shared_fixtures: Path
) -> None:
    kiddie = shared_fixtures / "autojudge" / "kiddie"
    project = create_project(ws, "kiddie")
    import_judging_inputs(
        ws, project, topics=kiddie / "topics" / "kiddie-topics.jsonl", runs=[kiddie / "runs"]
    )
    judge = create_account(ws, "ada", "a long password 1").id
    for report in list_reports(ws, project):
        save_judgment(
            ws, project, Unit.report(report.topic_id, report.run_id), judge_id=judge,
            version=0, rating="Perfect",
        )  # fmt: skip
    exported = {
        (r["topic_id"], r["run_id"]): r["report"]
        for r in judgment_records(ws, project, modes=["report"])
    }
    lines = [
        json.loads(line)
        for path in sorted((kiddie / "runs").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    assert len(exported) == len(lines) == 20
    for line in lines:
        meta = line["metadata"]
        got, want = exported[(meta["topic_id"], meta["run_id"])], shown(line)
        assert {**got, "documents": {}} == {**want, "documents": {}}, meta  # holds today
        assert got["documents"] == want["documents"], meta
