"""An item's history as field-level diffs, and restoring an earlier version
(assay.review.history)."""

from __future__ import annotations

import pytest

from assay.corpus.ingest import ingest_bytes
from assay.errors import InvalidInput, NotFound
from assay.gold.items import (
    StaleItem,
    create_item,
    delete_item,
    editable_copy,
    get_item,
    save_item,
    set_status,
)
from assay.records import Evidence, Item, Project, Turn
from assay.review.history import item_history, restore_version, status_history
from assay.store.projects import create_project
from assay.store.workspace import Workspace

TEXT = "The night train leaves at 22:40. Bikes travel free on weekdays."


def _item(project: Project, doc_id: str) -> Item:
    passage = Evidence(doc_id=doc_id, start=0, end=32, text=TEXT[:32])
    turn = Turn(query="When does the train leave?", answer="At 22:40.", evidence=[passage])
    return Item(turns=[turn])


def _changes(entry: object) -> list[tuple[str, str, object, object]]:
    return [(c.field, c.change, c.before, c.after) for c in entry.changes]  # type: ignore[attr-defined]


def test_each_event_names_the_fields_it_changed(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p")
    doc = ingest_bytes(any_ws, project, "t.txt", TEXT.encode())
    item = create_item(any_ws, project, _item(project, doc.id))
    edited = editable_copy(item)
    turn = edited.turns[0]
    turn.query = "When does the night train leave?"
    turn.answer = "22:40"
    turn.alternatives = ["twenty to eleven"]
    turn.query_type = "fact_multi"
    turn.evidence[0].label = "distracting"
    turn.evidence.append(Evidence(doc_id=doc.id, start=33, end=63, text=TEXT[33:63]))
    edited.notes = "checked"
    saved = save_item(any_ws, project, item.id, edited, 1)
    set_status(any_ws, project, item.id, "accepted", saved.version)

    history = item_history(any_ws, project, item.id)

    assert [e.action for e in history] == ["create", "save", "status"]
    assert [e.restorable for e in history] == [True, True, False]
    save = {(c.field, c.change): c for c in history[1].changes}
    assert (save["question", "changed"].before, save["question", "changed"].after) == (
        "When does the train leave?",
        "When does the night train leave?",
    )
    assert save["answer", "changed"].after == "22:40"
    assert save["alternatives", "changed"].after == ["twenty to eleven"]
    assert (save["type", "changed"].before, save["type", "changed"].after) == (
        "fact_single",
        "fact_multi",
    )
    assert save["notes", "changed"].after == "checked"
    assert save["evidence", "relabelled"].before["label"] == "relevant"
    assert save["evidence", "relabelled"].after["label"] == "distracting"
    assert save["evidence", "added"].after["text"] == TEXT[33:63]
    assert all(c.turn == 1 for c in history[1].changes if c.field != "notes")
    assert _changes(history[2]) == [("status", "changed", "draft", "accepted")]
    statuses = status_history(history)
    assert [(s["from"], s["to"]) for s in statuses] == [("draft", "accepted")]


def test_removed_evidence_and_a_conversations_new_turn(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p")
    doc = ingest_bytes(any_ws, project, "t.txt", TEXT.encode())
    start = _item(project, doc.id)
    start.kind = "conversation"
    conv = create_item(any_ws, project, start)
    edited = editable_copy(conv)
    edited.turns[0].evidence = []
    edited.turns.append(Turn(query="And bikes?", answer="Free on weekdays."))
    save_item(any_ws, project, conv.id, edited, 1)

    changes = _changes(item_history(any_ws, project, conv.id)[1])

    assert ("evidence", "removed") in [(f, c) for f, c, _, _ in changes]
    assert ("turn", "added", None, "And bikes?") in changes
    assert ("answer", "changed", None, "Free on weekdays.") in [
        (f, c, b or None, a) for f, c, b, a in changes
    ]
    first = item_history(any_ws, project, conv.id)[0].event
    restored = restore_version(any_ws, project, conv.id, first, 2)
    assert (restored.kind, len(restored.turns)) == ("conversation", 1)
    assert ("turn", "removed", "And bikes?", None) in _changes(
        item_history(any_ws, project, conv.id)[-1]
    )


def test_restore_brings_back_an_earlier_version_as_a_new_one(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p")
    doc = ingest_bytes(any_ws, project, "t.txt", TEXT.encode())
    item = create_item(any_ws, project, _item(project, doc.id))
    edited = editable_copy(item)
    edited.turns[0].answer = "Nobody knows."
    edited.turns[0].evidence = []
    save_item(any_ws, project, item.id, edited, 1)
    set_status(any_ws, project, item.id, "submitted", 2)
    first = item_history(any_ws, project, item.id)[0]

    restored = restore_version(any_ws, project, item.id, first.event, 3)

    assert (restored.version, restored.status) == (4, "submitted")
    assert restored.turns[0].answer == "At 22:40."
    assert [e.text for e in restored.turns[0].evidence] == [TEXT[:32]]
    last = item_history(any_ws, project, item.id)[-1]
    assert last.action == "restore"
    assert ("answer", "changed", "Nobody knows.", "At 22:40.") in _changes(last)
    assert ("evidence", "added") in [(c.field, c.change) for c in last.changes]


def test_a_stale_restore_is_a_conflict_and_writes_nothing(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p")
    doc = ingest_bytes(any_ws, project, "t.txt", TEXT.encode())
    item = create_item(any_ws, project, _item(project, doc.id))
    edited = editable_copy(item)
    edited.turns[0].answer = "later"
    save_item(any_ws, project, item.id, edited, 1)
    first = item_history(any_ws, project, item.id)[0].event

    with pytest.raises(StaleItem, match="you edited version 1, it is now version 2"):
        restore_version(any_ws, project, item.id, first, 1)

    assert get_item(any_ws, project, item.id).turns[0].answer == "later"
    assert len(item_history(any_ws, project, item.id)) == 2


def test_bad_restores_say_what_is_wrong(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p")
    doc = ingest_bytes(any_ws, project, "t.txt", TEXT.encode())
    item = create_item(any_ws, project, _item(project, doc.id))
    status = set_status(any_ws, project, item.id, "submitted", 1)
    event = item_history(any_ws, project, item.id)[-1].event

    with pytest.raises(InvalidInput, match=rf"event {event} of item .* \(status\) changed no"):
        restore_version(any_ws, project, item.id, event, status.version)
    with pytest.raises(NotFound, match="has no event 999999"):
        restore_version(any_ws, project, item.id, 999999, status.version)
    with pytest.raises(NotFound, match="has no item 'nope'"):
        item_history(any_ws, project, "nope")
    delete_item(any_ws, project, item.id)
    assert item_history(any_ws, project, item.id)[-1].changes[0].field == "item"


def test_a_passage_sent_without_offsets_is_the_same_passage_once_placed(
    any_ws: Workspace,
) -> None:
    project = create_project(any_ws, "p")
    doc = ingest_bytes(any_ws, project, "t.txt", TEXT.encode())
    sent = Item(turns=[Turn(query="q", evidence=[Evidence(doc_id=doc.id, text=TEXT[:32])])])
    item = create_item(any_ws, project, sent)  # stored with offsets found in the document
    edited = editable_copy(item)
    edited.turns[0].answer = "22:40"
    save_item(any_ws, project, item.id, edited, 1)

    restored = restore_version(
        any_ws, project, item.id, item_history(any_ws, project, item.id)[0].event, 2
    )

    assert _changes(item_history(any_ws, project, item.id)[-1]) == [
        ("answer", "changed", "22:40", "")
    ]
    assert restored.turns[0].evidence[0].start == 0
