"""MTRAG generation tasks: one conversation per id, the published sample (NaN included)
round-trips, through RAGAPHENE too, and disagreeing tasks are refused."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.errors import InvalidInput, NotFound
from assay.formats import get_format
from assay.formats.mtrag import item_tasks, read, split_task_id
from assay.gold.item_lists import list_items
from assay.gold.items import get_item
from assay.people.actors import account_for
from assay.records import Item, Turn
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle, import_bundle
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


def test_sample_rebuilds_one_conversation_per_id(shared_fixtures: Path) -> None:
    source = shared_fixtures / "mtrag" / "responses-10.jsonl"
    tasks = lines(source)
    bundle = read(source)
    items = list(bundle.items)
    assert bundle.issues == [] and len(items) == 2
    first, second = items
    assert first.id == "dd6b6ffd177f2b311abe676261279d2f" and first.kind == "conversation"
    assert len(first.turns) == 8 and len(second.turns) == 2
    assert first.author == "g1"
    # each task's contexts, target and enrichment keys sit on the turn it asks about
    for task in tasks[:8]:
        turn = first.turns[int(task["turn"]) - 1]
        assert turn.query == task["input"][-1]["text"]
        assert turn.answer == task["targets"][0]["text"]
        assert [r["document_id"] for r in turn.retrieved] == [
            c["document_id"] for c in task["contexts"]
        ]
    assert first.turns[0].enrichments == {
        "Question Type": ["Factoid"],
        "answerability": ["UNANSWERABLE"],
    }  # Multi-Turn etc. were NaN
    assert first.turns[0].answer.startswith("I'm sorry") and first.turns[0].retrieved == []
    predictions = {t["position"]: t["predictions"] for t in first.extra["mtrag"]["tasks"]}
    assert predictions[1][0]["text"].startswith("I do not have")
    last = first.turns[1]
    assert last.query == "Do the Arizona Cardinals play outside the US?"
    assert last.enrichments["Multi-Turn"] == ["Clarification"]
    assert len(last.retrieved) == 3 and len(last.evidence) == 3
    assert {(e.label, e.author) for e in last.evidence} == {("relevant", "g1")}
    docs = {d.ref: d for d in bundle.documents}
    ev = last.evidence[0]
    assert ev.doc_id is not None
    assert docs[ev.doc_id].text[ev.start : ev.end] == ev.text  # type: ignore[index]


def test_sample_round_trips_through_a_project(
    ws: Workspace, tmp_path: Path, shared_fixtures: Path
) -> None:
    source = shared_fixtures / "mtrag" / "responses-10.jsonl"
    written = through_project(ws, source, "mtrag", tmp_path / "out.jsonl")
    assert written == lines(source)  # same tasks, same order
    project = get_project(ws, "mtrag")
    total, summaries = list_items(ws, project, limit=20)
    assert total == 2
    for summary in summaries:
        item = get_item(ws, project, summary.id)
        assert all(e.anchor == "ok" for t in item.turns for e in t.evidence)


def ragaphene_refusals(conversation: dict[str, Any]) -> list[str]:
    """RAGAPHENE's import checks (``validateConversation`` with the retriever check of its
    experiment mode), restated: what it would refuse in one conversation."""
    found = []
    if not isinstance(conversation.get("messages"), list):
        return ["messages missing"]
    for index, message in enumerate(conversation["messages"]):
        if not message.get("text"):
            found.append(f"message {index}: empty text")
        if message.get("speaker") not in ("user", "agent"):
            found.append(f"message {index}: speaker")
        if message.get("speaker") == "agent" and not message.get("contexts"):
            found.append(f"message {index}: agent without contexts")
    name = ((conversation.get("retriever") or {}).get("collection") or {}).get("name")
    if name is None:
        found.append("retriever.collection.name missing")
    return found


def test_ragaphene_export_passes_ragaphene_checks(
    ws: Workspace, tmp_path: Path, shared_fixtures: Path
) -> None:
    """Every answer of the imported conversations carries its task's contexts; the one turn
    the file gives no passage for (an unanswerable first question) is named in the notes."""
    source = shared_fixtures / "mtrag" / "responses-10.jsonl"
    import_bundle(ws, "m", get_format("mtrag").read(source))
    out = tmp_path / "r.json"
    notes = get_format("ragaphene").write(export_bundle(ws, get_project(ws, "m")), out)
    first, second = json.loads(out.read_text())
    assert ragaphene_refusals(second) == []
    assert ragaphene_refusals(first) == ["message 1: agent without contexts"]
    assert len(notes) == 1 and "answer message(s) 2 have no passages" in notes[0]
    assert first["author"] == "g1" and first["generator"]["name"] == "mixtral-8x7b-instruct-v01"
    assert first["retriever"]["collection"]["name"] == "mt-rag-clapnq-elser-512-100-20240503"
    assert len(first["messages"]) == 16
    assert all("metadata" not in m for m in first["messages"])  # RAGAPHENE derives the same


def test_mtrag_through_ragaphene_gives_the_same_tasks(
    ws: Workspace, tmp_path: Path, shared_fixtures: Path
) -> None:
    source = shared_fixtures / "mtrag" / "responses-10.jsonl"
    mtrag, ragaphene = get_format("mtrag"), get_format("ragaphene")
    import_bundle(ws, "m", mtrag.read(source))
    ragaphene.write(export_bundle(ws, get_project(ws, "m")), tmp_path / "r.json")
    import_bundle(ws, "r", ragaphene.read(tmp_path / "r.json"))
    mtrag.write(export_bundle(ws, get_project(ws, "r")), tmp_path / "back.jsonl")
    back = [json.loads(line) for line in (tmp_path / "back.jsonl").read_text().splitlines()]
    original = lines(source)
    key = ("input", "contexts", "targets")
    assert [{k: t[k] for k in key} for t in back] == [{k: t[k] for k in key} for t in original]
    # ids recomputed the way RAGAPHENE does: <conversation>::<turn>
    assert [t["task_id"].rpartition("::")[2] for t in back] == [str(t["turn"]) for t in original]
    assert {t["collection"] for t in back} == {t["collection"] for t in original}


def conversation_tasks() -> list[dict[str, Any]]:
    """Two tasks of one conversation, every answer with a passage."""
    second = task()
    first = task(
        task_id="c1<::>1",
        turn="1",
        input=second["input"][:1],
        targets=[second["input"][1]],
        contexts=[{"document_id": "d3", "text": "A passport is a travel document."}],
        **{"Multi-Turn": None},
    )
    return json.loads(json.dumps([first, second]))


def test_conversation_with_passages_on_every_turn_passes_ragaphene_checks(
    ws: Workspace, tmp_path: Path
) -> None:
    source = tmp_path / "t.jsonl"
    source.write_text("\n".join(json.dumps(t) for t in conversation_tasks()) + "\n")
    import_bundle(ws, "m", read(source))
    out = tmp_path / "r.json"
    assert get_format("ragaphene").write(export_bundle(ws, get_project(ws, "m")), out) == []
    written = json.loads(out.read_text())
    assert ragaphene_refusals(written) == []
    # authors RAGAPHENE would not derive (no generator named) stay on the messages
    assert written["messages"][1]["metadata"] == {"author_id": "m"}


def test_disagreeing_tasks_are_refused_naming_both_lines(ws: Workspace, tmp_path: Path) -> None:
    first, second = conversation_tasks()
    second["input"][0]["text"] = "What is a visa?"
    source = tmp_path / "t.jsonl"
    source.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    bundle = read(source)
    (issue,) = bundle.issues
    assert issue.where == "line 2"
    assert "conversation 'c1', turn 1: the question's text differs from line 1" in issue.message
    with pytest.raises(InvalidInput, match=r"line 2: conversation 'c1', turn 1.*line 1"):
        import_bundle(ws, "m", bundle)
    with pytest.raises(NotFound):
        get_project(ws, "m")  # nothing was stored
    report = import_bundle(ws, "m", read(source), lenient=True)
    assert [(o.ref, o.status) for o in report.noted()] == [("line 2", "skipped")]
    assert report.count("imported", "item") == 1
    second["input"][0] = {**first["input"][0], "metadata": {"author_id": "other"}}
    source.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    assert "the question's field 'metadata' differs" in read(source).issues[0].message


def test_two_tasks_for_one_turn_are_refused(tmp_path: Path) -> None:
    first = task()
    second = task(task_id="c1<::>2b")
    source = tmp_path / "t.jsonl"
    source.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    (issue,) = read(source).issues
    assert issue.where == "line 2" and "line 1 (task 'c1<::>2') is already" in issue.message


def test_a_turn_added_in_the_project_becomes_a_new_task(ws: Workspace, tmp_path: Path) -> None:
    from assay.gold.items import editable_copy, save_item

    source = tmp_path / "t.jsonl"
    source.write_text("\n".join(json.dumps(t) for t in conversation_tasks()) + "\n")
    import_bundle(ws, "m", read(source))
    project = get_project(ws, "m")
    item = get_item(ws, project, list_items(ws, project, limit=1)[1][0].id)
    data = editable_copy(item)
    data.turns.append(Turn(query="Where do I apply?", answer="At the town hall."))
    save_item(ws, project, item.id, data, base_version=item.version)
    out = tmp_path / "out.jsonl"
    get_format("mtrag").write(export_bundle(ws, project), out)
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert written[:2] == conversation_tasks()
    added = written[2]
    assert added["task_id"] == "c1<::>3" and added["turn"] == "3"
    assert added["input"][:3] == conversation_tasks()[1]["input"]
    assert added["input"][3]["text"] == "60 euros."
    assert added["targets"][0]["text"] == "At the town hall."


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
    (a_task,) = a.extra["mtrag"]["tasks"]
    (b_task,) = b.extra["mtrag"]["tasks"]
    assert a_task["separator"] == "<::>" and a_task["position"] == 2
    assert b_task["collection_key"] == "collection"
    assert [(e.label, e.author) for e in a.turns[-1].evidence] == [
        ("relevant", "a1"),
        ("irrelevant", "a1"),
    ]
    assert a.turns[-1].enrichments == {
        "answerability": ["ANSWERABLE"],
        "Multi-Turn": ["Follow-up"],
    }
    written = through_project(ws, source, "t", tmp_path / "out.jsonl")
    assert written == variants


def test_a_project_conversation_becomes_a_task_per_turn(ws: Workspace, tmp_path: Path) -> None:
    """A conversation made in Assay (no MTRAG extra) is written as RAGAPHENE makes tasks."""
    from assay.gold.items import create_item
    from assay.store.projects import create_project

    project = create_project(ws, "fresh", "en")
    item = create_item(
        ws,
        project,
        Item(
            kind="conversation",
            turns=[
                Turn(query="q1", answer="a1"),
                Turn(query="q2", answer="a2", enrichments={"answerability": ["PARTIAL"]}),
            ],
        ),
        author=account_for(ws, "me"),
    )
    out = tmp_path / "out.jsonl"
    get_format("mtrag").write(export_bundle(ws, project), out)
    first, written = [json.loads(line) for line in out.read_text().splitlines()]
    assert first["task_id"] == f"{item.id}::1" and first["turn"] == 1
    assert [m["text"] for m in first["input"]] == ["q1"] and first["targets"][0]["text"] == "a1"
    assert written["turn"] == 2 and written["task_id"] == f"{item.id}::2"
    assert [m["speaker"] for m in written["input"]] == ["user", "agent", "user"]
    assert written["input"][0]["metadata"]["author_id"] == "me"
    assert written["input"][1]["metadata"]["author_type"] == "model"
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
            json.dumps(item_tasks(item, {}), allow_nan=False)


def test_a_project_conversation_names_the_projects_collection(
    any_ws: Workspace, tmp_path: Path
) -> None:
    """MTRAG's format check refuses an empty collection: a conversation made in Assay gets
    the project's setting, else the project's name; an empty setting is refused."""
    from assay.gold.items import create_item
    from assay.gold.project_config import settings_view, update_settings
    from assay.store.projects import create_project

    project = create_project(any_ws, "fresh", "en")
    create_item(any_ws, project, Item(turns=[Turn(query="q1", answer="a1")]))
    out = tmp_path / "out.jsonl"

    def collections() -> list[Any]:
        get_format("mtrag").write(export_bundle(any_ws, project, statuses=None), out)
        return [json.loads(line)["collection"] for line in out.read_text().splitlines()]

    assert collections() == ["fresh"]
    project = update_settings(any_ws, project, {"mtrag_collection": " govt-2025 "})
    assert collections() == ["govt-2025"] and settings_view(project)["mtrag_collection"] == (
        "govt-2025"
    )
    with pytest.raises(InvalidInput, match="mtrag_collection: give a non-empty name"):
        update_settings(any_ws, project, {"mtrag_collection": "  "})


def test_a_task_comes_back_without_fields_it_did_not_have(ws: Workspace, tmp_path: Path) -> None:
    """No targets, contexts or collection in, none out (an answer added since is written)."""
    source = tmp_path / "tasks.jsonl"
    bare = task()
    for key in ("targets", "contexts", "Collection"):
        bare.pop(key)
    source.write_text(json.dumps(bare) + "\n")
    assert through_project(ws, source, "t", tmp_path / "out.jsonl") == [bare]
    project = get_project(ws, "t")
    (summary,) = list_items(ws, project, limit=5)[1]
    item = get_item(ws, project, summary.id)
    from assay.gold.items import editable_copy, save_item

    edited = editable_copy(item)
    edited.turns[-1].answer = "60 euros."
    save_item(ws, project, item.id, edited, item.version)
    out = tmp_path / "again.jsonl"
    get_format("mtrag").write(export_bundle(ws, project, statuses=None), out)
    (written,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert [t["text"] for t in written["targets"]] == ["60 euros."]
    assert "contexts" not in written and "Collection" not in written


@pytest.mark.parametrize("name", ["mtrag", "ragaphene"])
def test_query_type_distracting_and_notes_survive_a_trip(
    any_ws: Workspace, tmp_path: Path, name: str
) -> None:
    """What the format has no field for travels in keys its tools ignore: the query type
    on the question, ``label: distracting`` beside a "no" vote, the notes beside the
    conversation."""
    from assay.corpus.ingest import ingest_bytes
    from assay.gold.items import create_item
    from assay.records import Evidence
    from assay.store.projects import create_project

    project = create_project(any_ws, "made", "en")
    text = "Passports cost 60 euros. Visas are separate."
    doc = ingest_bytes(any_ws, project, "fees.txt", text.encode())
    create_item(
        any_ws,
        project,
        Item(
            kind="conversation",
            notes="check the fee table",
            turns=[
                Turn(
                    query="How much is a passport?",
                    query_type="summary",
                    answer="60 euros.",
                    evidence=[
                        Evidence(doc_id=doc.id, text="Passports cost 60 euros."),
                        Evidence(doc_id=doc.id, text="Visas are separate.", label="distracting"),
                    ],
                ),
                Turn(query="And a visa?", answer="Separate."),
            ],
        ),
    )
    spec = get_format(name)
    out = tmp_path / f"out{spec.extensions[0]}"
    spec.write(export_bundle(any_ws, project, statuses=None), out)
    import_bundle(any_ws, "back", spec.read(out))
    back = get_project(any_ws, "back")
    (summary,) = list_items(any_ws, back, limit=5)[1]
    item = get_item(any_ws, back, summary.id)
    assert item.notes == "check the fee table"
    assert [t.query_type for t in item.turns] == ["summary", "fact_single"]
    assert sorted((e.text, e.label) for e in item.turns[0].evidence) == [
        ("Passports cost 60 euros.", "relevant"),
        ("Visas are separate.", "distracting"),
    ]
    again = tmp_path / f"again{spec.extensions[0]}"
    spec.write(export_bundle(any_ws, back, statuses=None), again)
    assert again.read_text() == out.read_text()  # and written back the same


def test_the_collection_is_set_over_the_api(ws: Workspace) -> None:
    from assay.store.projects import create_project
    from tests.test_documents_textless import client_for

    create_project(ws, "docs")
    client = client_for(ws)
    url = "/api/projects/docs/settings"
    assert client.put(url, json={"mtrag_collection": "govt"}).status_code == 200
    assert get_project(ws, "docs").settings["mtrag_collection"] == "govt"
    empty = client.put(url, json={"mtrag_collection": ""})
    assert empty.status_code == 422 and "non-empty" in empty.json()["detail"]
    assert client.put(url, json={"mtrag_collection": None}).status_code == 200
    assert "mtrag_collection" not in get_project(ws, "docs").settings  # back to the default
