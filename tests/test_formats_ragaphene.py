"""RAGAPHENE conversation JSON: v2 written, v1 and v2 read, and the round trip through a
project compares equal."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.errors import InvalidInput
from assay.formats import get_format
from assay.formats.ragaphene import item_conversation, migrate_v1, read
from assay.gold.item_lists import list_items
from assay.gold.items import editable_copy, get_item, save_item
from assay.people.actors import account_for
from assay.records import Evidence
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle, import_bundle
from tests.test_formats_fuzz import FUZZ, check, json_mutated, mutated


def through_project(ws: Workspace, source: Path, name: str, target: Path) -> Any:
    """Import a RAGAPHENE file into a new project, export it again, return the parsed JSON."""
    fmt = get_format("ragaphene")
    import_bundle(ws, name, fmt.read(source))
    fmt.write(export_bundle(ws, get_project(ws, name)), target)
    return json.loads(target.read_text(encoding="utf-8"))


def context(doc: str, text: str, votes: dict[str, str], **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"document_id": doc, "text": text, **more}
    if votes:
        out["feedback"] = {
            "relevant": {
                user: {"value": value, "timestamp": 1704085300 + i}
                for i, (user, value) in enumerate(votes.items())
            }
        }
    return out


def rich_conversation() -> dict[str, Any]:
    """Three turns, enrichments, an edited answer, mixed votes by two annotators."""
    return {
        "schema_version": 2,
        "author": "ann",
        "retriever": {
            "collection": {"name": "handbook", "size": 3},
            "settings": {"max_count": 5, "max_utterances": 3, "query_syntax": {"match": "x"}},
            "connector": {"name": "Local Documents"},
        },
        "generator": {
            "id": "m1",
            "name": "Model one",
            "mode": "chat_completion",
            "settings": {"prompt": {"system": "Be brief"}, "parameters": {"temperature": 0}},
            "connector": {"name": "Ollama"},
        },
        "messages": [
            {
                "speaker": "user",
                "text": "How many days of leave do I get?",
                "timestamp": 1704085200,
                "enrichments": {"answerability": ["ANSWERABLE"], "Question Type": ["Factoid"]},
            },
            {
                "speaker": "agent",
                "text": "You get 30 days of paid leave per year.",
                "timestamp": 1704085210,
                "contexts": [
                    context(
                        "leave",
                        "Employees get 30 days of paid leave.",
                        {"ann": "yes"},
                        title="Leave policy",
                        score=12.5,
                    ),
                    context(
                        "travel", "Trains are booked in second class.", {"ann": "no"}, score=3.25
                    ),
                ],
                "original_text": "You get 25 days.",
                "feedback": {"faithfulness": {"ann": {"value": "4", "timestamp": 1704085220}}},
            },
            {
                "speaker": "user",
                "text": "And in the first year?",
                "timestamp": 1704085230,
                "enrichments": {"answerability": ["PARTIAL"], "Multi-Turn": ["Follow-up"]},
            },
            {
                "speaker": "agent",
                "text": "In the first year leave is pro rata.",
                "timestamp": 1704085240,
                "contexts": [
                    context(
                        "leave",
                        "In the first year leave is granted pro rata.",
                        {"ann": "yes", "rev": "no"},
                    ),
                    context("leave", "Employees get 30 days of paid leave.", {"rev": "yes"}),
                ],
                "alternatives": [{"text": "Pro rata.", "enrichments": {"Style": ["short"]}}],
            },
            {
                "speaker": "user",
                "text": "Can I carry days over?",
                "timestamp": 1704085250,
                "enrichments": {"answerability": ["UNANSWERABLE"]},
            },
            {
                "speaker": "agent",
                "text": "The documents do not say.",
                "timestamp": 1704085260,
                "contexts": [context("travel", "Trains are booked in second class.", {})],
            },
        ],
        "status": "edited",
        "status_history": [
            {"author": "ann", "status": "created", "timestamp": 1704085200},
            {"author": "ann", "status": "edited", "timestamp": 1704085215},
        ],
        "comments": [
            {
                "comment": "check the figure",
                "author": "rev",
                "created": 1704085300,
                "updated": 1704085300,
                "provenance": {"component": "messages[1].text", "text": "30", "offsets": [8, 10]},
            }
        ],
    }


def test_real_sample_round_trips_through_a_project(
    ws: Workspace, tmp_path: Path, shared_fixtures: Path
) -> None:
    """RAGAPHENE's own sample (version 1, a list of one, no author or status) comes back
    as RAGAPHENE's upload migration makes it: equal but for ``schema_version: 2``."""
    source = shared_fixtures / "ragaphene" / "sample_conversation.json"
    original = json.loads(source.read_text())
    first = through_project(ws, source, "one", tmp_path / "a.json")
    assert first == [migrate_v1(c) for c in original]
    assert first[0]["schema_version"] == 2 and "author" not in first[0]
    second = through_project(ws, tmp_path / "a.json", "two", tmp_path / "b.json")
    assert second == first


def test_rich_conversation_round_trips_exactly(ws: Workspace, tmp_path: Path) -> None:
    source = tmp_path / "rich.json"
    conversation = rich_conversation()
    source.write_text(json.dumps(conversation))
    assert through_project(ws, source, "rich", tmp_path / "out.json") == conversation


def test_rich_conversation_maps_to_turns_and_anchored_evidence(
    ws: Workspace, tmp_path: Path
) -> None:
    source = tmp_path / "rich.json"
    source.write_text(json.dumps([rich_conversation()]))
    import_bundle(ws, "p", read(source))
    project = get_project(ws, "p")
    (item,) = list_items(ws, project, limit=10)[1]
    full = get_item(ws, project, item.id)
    assert full.kind == "conversation" and full.status == "draft" and full.author == "ann"
    assert [t.query for t in full.turns][1] == "And in the first year?"
    first, second, third = full.turns
    assert first.original_answer == "You get 25 days."
    assert first.answer == "You get 30 days of paid leave per year."
    assert first.enrichments == {"answerability": ["ANSWERABLE"], "Question Type": ["Factoid"]}
    assert [(e.label, e.author) for e in first.evidence] == [
        ("relevant", "ann"),
        ("irrelevant", "ann"),
    ]
    assert [(e.label, e.author) for e in second.evidence] == [
        ("relevant", "ann"),
        ("irrelevant", "rev"),
        ("relevant", "rev"),
    ]
    assert all(e.anchor == "ok" and e.origin == "retrieved" for t in full.turns for e in t.evidence)
    assert second.alternatives == ["Pro rata."]
    assert len(third.retrieved) == 1 and third.evidence == []
    assert first.retrieved[0]["title"] == "Leave policy"


def test_version_1_is_migrated() -> None:
    v1 = {
        "author": "ann",
        "editor": "ed",
        "reviewer": "rev",
        "status": "accepted",
        "status_history": [{"author": "rev", "status": "accepted", "timestamp": 1704200000}],
        "retriever": {
            "collection": {"name": "c"},
            "parameters": {
                "max_count": 3,
                "query_syntax": '{"a": 1}',
                "project": '{"text": "body"}',
            },
            "connector": {"name": "ELSER", "endpoint": "http://es"},
        },
        "generator": {
            "id": "g",
            "name": "G",
            "prompt": {"system": "s"},
            "parameters": {"t": 0},
            "connector": {"name": "watsonx", "provider": "ibm"},
        },
        "messages": [{"speaker": "user", "text": "q", "timestamp": 1704100000}],
    }
    v2 = migrate_v1(v1)
    assert v1["retriever"]["connector"]["name"] == "ELSER"  # the input is not changed
    assert v2["schema_version"] == 2
    assert "editor" not in v2 and "reviewer" not in v2
    assert v2["retriever"]["connector"]["name"] == "ElasticSearch"
    assert v2["retriever"]["settings"] == {
        "max_count": 3,
        "query_syntax": {"a": 1},
        "templates": {"projection": "${body}", "display": "${body}"},
    }
    assert "parameters" not in v2["retriever"]
    assert v2["generator"]["settings"] == {"prompt": {"system": "s"}, "parameters": {"t": 0}}
    assert v2["generator"]["mode"] == "completion"
    assert v2["generator"]["connector"] == {"name": "watsonx"}
    assert v2["status"] == "reviewed"
    assert v2["status_history"] == [
        {"author": "ed", "status": "edited", "timestamp": 1704200000 - 86400},
        {"author": "rev", "status": "accepted", "timestamp": 1704200000},
    ]


def test_v1_rejected_status_becomes_a_rejected_item(tmp_path: Path) -> None:
    v1 = {"status": "rejected", "reviewer": "rev", "messages": [{"speaker": "user", "text": "q"}]}
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(v1))
    (item,) = read(path).items
    assert item.status == "rejected"
    assert item.extra["ragaphene"]["conversation"]["status_history"] == [
        {"author": "rev", "status": "rejected", "timestamp": 0}
    ]


def test_reviewed_item_writes_reviewed_status(ws: Workspace, tmp_path: Path) -> None:
    conversation = rich_conversation()
    conversation["status"] = "reviewed"
    conversation["status_history"].append(
        {"author": "rev", "status": "accepted", "timestamp": 1704090000}
    )
    source = tmp_path / "r.json"
    source.write_text(json.dumps(conversation))
    assert read(source).items[0].status == "accepted"  # type: ignore[index]
    assert through_project(ws, source, "r", tmp_path / "out.json") == conversation


def test_bad_conversations_are_reported_by_position(tmp_path: Path) -> None:
    good = {"messages": [{"speaker": "user", "text": "q"}]}
    bad_speaker = {"messages": [{"speaker": "bot", "text": "q"}]}
    newer = {"schema_version": 3, "messages": []}
    path = tmp_path / "c.json"
    path.write_text(json.dumps([good, bad_speaker, newer, {"messages": "x"}]))
    bundle = read(path)
    assert len(list(bundle.items)) == 1
    assert [i.where for i in bundle.issues] == [
        "conversation 2",
        "conversation 3",
        "conversation 4",
    ]
    assert "speaker" in bundle.issues[0].message
    assert "newer" in bundle.issues[1].message
    path.write_text("{not json")
    with pytest.raises(InvalidInput, match="malformed JSON"):
        read(path)


def test_edits_in_the_project_are_written(ws: Workspace, tmp_path: Path) -> None:
    """A vote changed and a searched passage added in Assay come out as feedback."""
    source = tmp_path / "rich.json"
    source.write_text(json.dumps(rich_conversation()))
    import_bundle(ws, "p", read(source))
    project = get_project(ws, "p")
    item = get_item(ws, project, list_items(ws, project, limit=1)[1][0].id)
    data = editable_copy(item)
    leave = item.turns[0].evidence[0]
    data.turns[2].evidence = [
        Evidence(
            doc_id=leave.doc_id,
            start=leave.start,
            end=leave.end,
            text=leave.text,
            label="relevant",
            origin="searched",
            author="ann",
        )
    ]
    data.turns[0].evidence[1].label = "relevant"  # travel: no → yes
    save_item(ws, project, item.id, data, base_version=item.version, author=account_for(ws, "ann"))
    out = tmp_path / "out.json"
    get_format("ragaphene").write(export_bundle(ws, project), out)
    written = json.loads(out.read_text())
    contexts = written["messages"][1]["contexts"]
    assert contexts[1]["feedback"]["relevant"]["ann"]["value"] == "yes"
    assert contexts[0]["feedback"]["relevant"]["ann"] == {"value": "yes", "timestamp": 1704085300}
    last = written["messages"][5]["contexts"]
    assert [c["document_id"] for c in last] == ["travel", "leave"]
    assert last[1]["feedback"]["relevant"]["ann"]["value"] == "yes"


@FUZZ
@given(data=st.data())
def test_reader_fuzzed(data: st.DataObject) -> None:
    """Damaged and mistyped conversations give InvalidInput or an issue, never a crash."""
    seed = rich_conversation()
    seed["messages"] = seed["messages"][:4]
    if data.draw(st.booleans()):
        seed = migrate_v1_shape(seed)
    content = data.draw(json_mutated(seed if data.draw(st.booleans()) else [seed]))
    raw = json.dumps(content).encode()
    if data.draw(st.booleans()):
        raw = data.draw(mutated(raw))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.json"
        path.write_bytes(raw)
        check(read, path)
        try:
            bundle = read(path)
        except InvalidInput:
            return
        for item in bundle.items:  # what was read can be written back
            item_conversation(item, {})


def migrate_v1_shape(conversation: dict[str, Any]) -> dict[str, Any]:
    """A v1-looking conversation: no schema_version, parameters, editor and reviewer."""
    v1 = copy.deepcopy(conversation)
    v1.pop("schema_version")
    v1["retriever"]["parameters"] = v1["retriever"].pop("settings")
    v1["retriever"]["parameters"]["query_syntax"] = '{"a": 1}'
    v1["retriever"]["parameters"]["project"] = '{"text": "body"}'
    v1["editor"], v1["reviewer"], v1["status"] = "ed", "rev", "accepted"
    return v1


def test_status_changes_are_credited_to_who_made_them(any_ws: Workspace, tmp_path: Path) -> None:
    """The review history names the reviewer (from the project's history), not the author;
    a reviewer's later opinion replaces their earlier one, as RAGAPHENE keeps it."""
    from assay.gold.items import set_status

    source = tmp_path / "rich.json"
    source.write_text(json.dumps(rich_conversation()))
    import_bundle(any_ws, "p", read(source))
    project = get_project(any_ws, "p")
    item = get_item(any_ws, project, list_items(any_ws, project, limit=1)[1][0].id)
    item = set_status(
        any_ws, project, item.id, "rejected", item.version, actor=account_for(any_ws, "rev")
    )
    item = set_status(
        any_ws, project, item.id, "accepted", item.version, actor=account_for(any_ws, "rev")
    )
    item = set_status(
        any_ws, project, item.id, "accepted", item.version, actor=account_for(any_ws, "lead")
    )
    out = tmp_path / "out.json"
    get_format("ragaphene").write(export_bundle(any_ws, project), out)
    written = json.loads(out.read_text())
    assert written["author"] == "ann" and written["status"] == "reviewed"
    reviews = [h for h in written["status_history"] if h["status"] in ("accepted", "rejected")]
    assert [(h["author"], h["status"]) for h in reviews] == [
        ("rev", "accepted"),
        ("lead", "accepted"),
    ]
    assert all(h["timestamp"] > 1704085300 for h in reviews)
