"""MTRAG generation tasks: the published sample reads (NaN included) and round-trips."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.annotation import get_item, list_items
from assay.errors import InvalidInput
from assay.formats import get_format
from assay.formats.mtrag import item_task, read, split_task_id
from assay.projects import get_project
from assay.transfer import export_bundle, import_bundle
from assay.workspace import Workspace
from tests.test_formats_fuzz import FUZZ, check, json_mutated, mutated


def lines(path: Path) -> list[dict[str, Any]]:
    """Each line parsed the lenient way, NaN read as None (as the reader does)."""

    def clean(value: Any) -> Any:
        if isinstance(value, float) and math.isnan(value):
            return None
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    return [clean(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def through_project(ws: Workspace, source: Path, name: str, target: Path) -> list[dict[str, Any]]:
    fmt = get_format("mtrag")
    import_bundle(ws, name, fmt.read(source))
    fmt.write(export_bundle(ws, get_project(ws, name)), target)
    assert "NaN" not in target.read_text()
    return [json.loads(line) for line in target.read_text().splitlines()]


def test_sample_reads_with_nan_as_missing(shared_fixtures: Path) -> None:
    bundle = read(shared_fixtures / "mtrag" / "responses-10.jsonl")
    items = list(bundle.items)
    assert bundle.issues == [] and len(items) == 10
    first, second = items[0], items[1]
    assert first.id == "dd6b6ffd177f2b311abe676261279d2f::1" and first.kind == "conversation"
    assert first.turns[0].enrichments == {
        "Question Type": ["Factoid"],
        "answerability": ["UNANSWERABLE"],
    }  # Multi-Turn etc. were NaN
    assert first.turns[0].answer.startswith("I'm sorry")
    assert first.extra["mtrag"]["predictions"][0]["text"].startswith("I do not have")
    assert len(second.turns) == 2
    last = second.turns[-1]
    assert last.query == "Do the Arizona Cardinals play outside the US?"
    assert last.enrichments["Multi-Turn"] == ["Clarification"]
    assert len(last.retrieved) == 3 and len(last.evidence) == 3
    assert {(e.label, e.author) for e in last.evidence} == {("relevant", "g1")}
    docs = {d.ref: d for d in bundle.documents}
    ev = last.evidence[0]
    assert ev.doc_ref is not None
    assert docs[ev.doc_ref].text[ev.start : ev.end] == ev.text  # type: ignore[index]


def test_sample_round_trips_through_a_project(
    ws: Workspace, tmp_path: Path, shared_fixtures: Path
) -> None:
    source = shared_fixtures / "mtrag" / "responses-10.jsonl"
    written = through_project(ws, source, "mtrag", tmp_path / "out.jsonl")
    assert sorted(written, key=lambda t: t["task_id"]) == sorted(
        lines(source), key=lambda t: t["task_id"]
    )
    project = get_project(ws, "mtrag")
    summaries = list_items(ws, project, limit=20)[1]
    item = get_item(ws, project, summaries[0].id)
    assert all(e.anchor == "ok" for t in item.turns for e in t.evidence)


def task(**more: Any) -> dict[str, Any]:
    return {
        "conversation_id": "c1",
        "task_id": "c1<::>2",
        "task_type": "rag",
        "turn": "2",
        "Collection": "govt",
        "contexts": [
            {
                "document_id": "d1",
                "text": "Passports cost 60 euros.",
                "score": 1.5,
                "feedback": {"relevant": {"a1": {"value": "yes", "timestamp": 10}}},
            },
            {
                "document_id": "d2",
                "text": "Visas are separate.",
                "feedback": {"relevant": {"a1": {"value": "no", "timestamp": 11}}},
            },
        ],
        "input": [
            {"speaker": "user", "text": "What is a passport?", "metadata": {"author_id": "a1"}},
            {"speaker": "agent", "text": "A travel document.", "metadata": {"author_id": "m"}},
            {
                "speaker": "user",
                "text": "How much does it cost?",
                "metadata": {"author_id": "a1"},
                "enrichments": {"answerability": ["ANSWERABLE"]},
            },
        ],
        "targets": [{"speaker": "agent", "text": "60 euros.", "metadata": {"author_id": "m"}}],
        "answerability": ["ANSWERABLE"],
        "Multi-Turn": ["Follow-up"],
        "Validity": None,
        **more,
    }


def test_inconsistent_spellings_are_kept(ws: Workspace, tmp_path: Path) -> None:
    source = tmp_path / "tasks.jsonl"
    variants = [task(), task(task_id="c2::1", conversation_id="c2", turn=3, collection="x")]
    variants[1].pop("Collection")
    source.write_text("\n".join(json.dumps(t) for t in variants) + "\n")
    (a, b) = read(source).items
    assert a.extra["mtrag"]["separator"] == "<::>" and a.extra["mtrag"]["turn_number"] == 2
    assert b.extra["mtrag"]["collection_key"] == "collection"
    assert [(e.label, e.author) for e in a.turns[-1].evidence] == [
        ("relevant", "a1"),
        ("irrelevant", "a1"),
    ]
    assert a.turns[-1].enrichments == {
        "answerability": ["ANSWERABLE"],
        "Multi-Turn": ["Follow-up"],
    }
    written = through_project(ws, source, "t", tmp_path / "out.jsonl")
    assert sorted(written, key=lambda t: t["task_id"]) == sorted(
        variants, key=lambda t: t["task_id"]
    )


def test_a_project_conversation_becomes_a_task(ws: Workspace, tmp_path: Path) -> None:
    """A conversation made in Assay (no MTRAG extra) is written with the task's fields."""
    from assay.annotation import ItemIn, TurnIn, create_item
    from assay.projects import create_project

    project = create_project(ws, "fresh", "en")
    create_item(
        ws,
        project,
        ItemIn(
            kind="conversation",
            turns=[
                TurnIn(query="q1", answer="a1"),
                TurnIn(query="q2", answer="a2", enrichments={"answerability": ["PARTIAL"]}),
            ],
        ),
        author="me",
    )
    out = tmp_path / "out.jsonl"
    get_format("mtrag").write(export_bundle(ws, project), out)
    (written,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert written["turn"] == 2 and written["task_id"].endswith("::2")
    assert [m["speaker"] for m in written["input"]] == ["user", "agent", "user"]
    assert written["targets"][0]["text"] == "a2"
    assert written["answerability"] == ["PARTIAL"]
    assert written["input"][2]["enrichments"] == {"answerability": ["PARTIAL"]}


def test_split_task_id() -> None:
    assert split_task_id("abc::3") == ("abc", "::", "3")
    assert split_task_id("abc<::>3") == ("abc", "<::>", "3")
    assert split_task_id("abc") == ("abc", "", "")


def test_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(task()) + "\n" + json.dumps(task(turn="two")) + "\n")
    bundle = read(path)
    assert len(list(bundle.items)) == 1
    assert bundle.issues[0].where == "line 2" and "turn" in bundle.issues[0].message
    path.write_text("[1, 2]\n")
    with pytest.raises(InvalidInput, match="line 1"):
        read(path)


@FUZZ
@given(data=st.data())
def test_reader_fuzzed(data: st.DataObject) -> None:
    """Damaged and mistyped task lines give InvalidInput or an issue, never a crash."""
    content = [data.draw(json_mutated(task())) for _ in range(data.draw(st.integers(1, 2)))]
    raw = "\n".join(json.dumps(c) for c in content).encode()
    if data.draw(st.booleans()):
        raw = raw.replace(b"null", b"NaN")
    if data.draw(st.booleans()):
        raw = data.draw(mutated(raw))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_bytes(raw)
        check(read, path)
        try:
            bundle = read(path)
        except InvalidInput:
            return
        for item in bundle.items:  # what was read can be written back
            json.dumps(item_task(item, {}), allow_nan=False)
