"""Runs that embed one doc id in different versions (the kiddie runs do: run1, run2 and run3
each embed their own `Chlorophyll`): the project keeps the longest, judges mark spans in it,
and `assay export autojudge` gives each run its own version, as autojudge-annotate writes it;
the file imports back equal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.judging.judgment_files import export_judgments, import_judgments, judgment_records
from assay.judging.judgments import Span, Unit, list_judgments, save_judgment
from assay.judging.reports import get_documents
from assay.people.accounts import create_account
from assay.store.workspace import Workspace
from tests.test_judging_io import KIDDIE, kiddie_project, marks

pytestmark = pytest.mark.skipif(
    not KIDDIE.is_dir(), reason="../shared/fixtures/autojudge/kiddie is absent (a plain clone)"
)


def embedded(run_id: str, topic_id: str, doc_id: str) -> dict[str, Any]:
    """The document as the run file embeds it (read here, not through Assay)."""
    for line in (KIDDIE / "runs" / f"{run_id}.jsonl").read_text(encoding="utf-8").splitlines():
        report = json.loads(line)
        if report["metadata"]["topic_id"] == topic_id:
            doc: dict[str, Any] = report["documents"][doc_id]
            return {key: doc.get(key) for key in ("id", "text", "title", "url")}
    raise AssertionError(f"{run_id} has no report for {topic_id}")


def shown(doc: dict[str, Any]) -> str:
    return f"{doc['title']}\n\n{doc['text']}"


def test_each_run_goes_out_with_its_own_version(any_ws: Workspace, tmp_path: Path) -> None:
    project = kiddie_project(any_ws)
    ada = create_account(any_ws, "ada", "a long password 1").id
    run1, run2, run3 = (embedded(r, "leaf", "Chlorophyll") for r in ("run1", "run2", "run3"))
    assert len({run1["text"], run2["text"], run3["text"]}) == 3
    held = get_documents(any_ws, project, ["Chlorophyll"])["Chlorophyll"].text
    assert held == shown(run1)  # the longest
    pigment = held.index("green pigment")
    spring = held.index("spring and summer")
    save_judgment(any_ws, project, Unit.report("leaf", "run2"), judge_id=ada, version=0,
                  comment="short")  # fmt: skip
    # run3 words it differently: the span moves to where "green pigment" is in run3's version
    save_judgment(
        any_ws, project, Unit.citation("leaf", "run3", 0, "Chlorophyll"), judge_id=ada,
        version=0, rating="So-so", spans=[Span(pigment, pigment + 13, "green pigment")],
    )  # fmt: skip
    # run2's version stops before "spring and summer": the line keeps the project's version
    save_judgment(
        any_ws, project, Unit.citation("leaf", "run2", 0, "Chlorophyll"), judge_id=ada,
        version=0, rating="Bad", spans=[Span(spring, spring + 17, "spring and summer")],
    )  # fmt: skip
    save_judgment(
        any_ws, project, Unit.document("leaf", "Chlorophyll"), judge_id=ada, version=0,
        rating="Perfect", spans=[Span(spring, spring + 17, "spring and summer")],
    )  # fmt: skip

    lines = list(judgment_records(any_ws, project))
    report, document, cited3, cited2 = lines
    assert report["run_id"] == "run2"
    assert report["report"]["documents"]["Chlorophyll"] == run2
    assert report["report"]["documents"]["Autumn_leaf_color"] == embedded(
        "run2", "leaf", "Autumn_leaf_color"
    )
    assert document["document"] == run1 and document["spans"][0]["start"] == spring

    assert cited3["citation"]["report"]["run_id"] == "run3"
    assert cited3["citation"]["document"] == run3
    assert cited3["citation"]["report"]["documents"]["Chlorophyll"] == run3
    at = shown(run3).index("green pigment")
    assert at != pigment
    assert cited3["spans"] == [{"start": at, "end": at + 13, "text": "green pigment"}]

    assert cited2["citation"]["report"]["documents"]["Chlorophyll"] == run2
    assert cited2["citation"]["document"] == run1  # the version the span was marked in
    assert cited2["spans"] == [{"start": spring, "end": spring + 17, "text": "spring and summer"}]

    out = tmp_path / "judgments.jsonl"
    assert export_judgments(any_ws, project, out) == 4
    other = kiddie_project(any_ws, "elsewhere")
    result = import_judgments(any_ws, other, out)
    assert (result.added, result.unchanged) == (4, 0)
    assert [i.severity for i in result.issues] == ["warning"]  # the moved span, moved back
    assert marks(list_judgments(any_ws, other)) == marks(list_judgments(any_ws, project))
    again = tmp_path / "again.jsonl"
    export_judgments(any_ws, other, again)
    assert again.read_text() == out.read_text().replace('"judging"', '"elsewhere"')
