"""Sampling and taking: the demo's generated log imports, the sample covers every document
without gold before any document gets a second question, each pick says why, and taking it
makes assigned items (conversations for sessions), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from assay.candidates.coverage import coverage
from assay.candidates.importing import import_candidates
from assay.candidates.listing import list_groups
from assay.candidates.sampling import sample
from assay.candidates.taking import take
from assay.demo import open_demo
from assay.demo.production_log import production_log
from assay.errors import Conflict
from assay.gold.items import get_item
from assay.people.accounts import create_account
from assay.people.actors import acting_account
from assay.review.tasks import overview
from assay.store.projects import create_project
from assay.store.workspace import Workspace


def test_on_the_demo_the_sample_covers_every_document_without_gold_first(ws: Workspace) -> None:
    project, _ = open_demo(ws, with_items=True)
    log = production_log(ws, project)
    report = import_candidates(ws, project, log, name="demo-log.jsonl")
    assert report.stored == len(log)
    # the addresses, and the hotline number a document gives; dates in names are left
    assert report.masks["email"] == 3 and report.unlocated == 3
    assert report.anchored == report.stored  # every generated passage is a document's text
    assert report.grouping is not None and report.grouping.folded > 0

    before = coverage(ws, project)
    bare = {d["doc_id"] for d in before["documents"] if not d["gold_items"]}
    assert bare and len(bare) < len(before["documents"])  # the demo gold covers some
    picked = sample(ws, project, len(bare) + 6, difficulty=0)
    assert picked.uncovered_documents == len(bare)
    seen: Counter[str] = Counter()
    for pick in picked.picks:
        assert pick.reasons and all(r["text"] for r in pick.reasons)
        if bare - set(seen):  # some document without gold is not covered yet
            assert not any(seen[d["doc_id"]] for d in pick.documents), pick.question
            assert pick.reasons[0]["kind"] == "coverage"
        seen.update(d["doc_id"] for d in pick.documents)
    assert bare <= set(seen)
    later = [p.reasons[0]["kind"] for p in picked.picks[len(bare) :]]
    assert set(later) <= {"cluster", "stratified"}

    actor = acting_account(ws)
    taken = take(ws, project, picked.picks, [], assigned_by=actor)
    assert taken.assigned.tasks == {"": len(picked.picks)}
    item = get_item(ws, project, taken.items[0])
    assert item.origin == "production" and item.status == "draft"
    assert item.extra["candidate"]["reasons"] == picked.picks[0].reasons
    turn = item.turns[-1]
    assert turn.original_answer and not turn.answer
    assert turn.retrieved[0]["doc_id"] in {d["doc_id"] for d in picked.picks[0].documents}
    after = coverage(ws, project)
    assert {g["doc_id"] for g in after["gaps"] if g["kind"] == "document" and g["in_work"]} == bare
    with pytest.raises(Conflict, match="taken already"):
        take(ws, project, picked.picks[:1], [], assigned_by=actor)
    # the next sample goes on without the groups taken
    again = sample(ws, project, 5, difficulty=0)
    assert not {p.group_id for p in again.picks} & {p.group_id for p in picked.picks}


def test_a_session_becomes_a_conversation_and_tasks_go_to_the_annotators(
    any_ws: Workspace,
) -> None:
    project = create_project(any_ws, "support")
    rows = [
        {"question": "How do I change my seat reservation?", "session_id": "s1",
         "answer": "In the app under Trips.", "feedback": -1},
        {"question": "And for a group booking of ten people?", "session_id": "s1",
         "answer": "Call the group desk."},
        {"question": "Which cities does the night train reach?", "answer": "Berlin and Vienna."},
    ]  # fmt: skip
    import_candidates(any_ws, project, [json.dumps(r) for r in rows], name="chat.jsonl")
    picked = sample(any_ws, project, 3, difficulty=0)
    assert len(picked.picks) == 3
    actor = acting_account(any_ws)
    for name in ("ada", "bob"):
        create_account(any_ws, name, "a long enough password")
    taken = take(any_ws, project, picked.picks, ["ada", "bob"], assigned_by=actor)
    assert taken.assigned.tasks == {"ada": 2, "bob": 1}
    kinds = {get_item(any_ws, project, i).turns[-1].query: get_item(any_ws, project, i).kind
             for i in taken.items}  # fmt: skip
    assert kinds["And for a group booking of ten people?"] == "conversation"
    assert kinds["Which cities does the night train reach?"] == "qa"
    follow_up = next(
        get_item(any_ws, project, i) for i in taken.items
        if get_item(any_ws, project, i).kind == "conversation"
    )  # fmt: skip
    assert [t.query for t in follow_up.turns] == [
        "How do I change my seat reservation?",
        "And for a group booking of ten people?",
    ]
    assert follow_up.turns[0].original_answer == "In the app under Trips."
    assert all(g["item_id"] for g in list_groups(any_ws, project)["groups"])
    assert {a["user"] for a in overview(any_ws, project)["annotators"]} >= {"ada", "bob"}
