"""Assignments and queues (assay.review.assignments, .queue, .tasks), on SQLite and
PostgreSQL: round robin and balanced with overlap, the shared pool's reservations, submit,
skip, rejected items coming back, and the bad input of the issue."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import sqlalchemy as sa

from assay.corpus.documents import get_document_by_name
from assay.corpus.ingest import ingest_bytes
from assay.errors import Forbidden, InvalidInput, NotFound
from assay.gold.item_lists import item_ids, list_items
from assay.gold.items import create_item, get_item, set_status
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.ownership import owns_item
from assay.records import Evidence, Item, Project, Turn
from assay.review.assignments import ItemFilter, assign, set_queue_settings
from assay.review.queue import TaskTaken, keep_hold, next_task, skip_task, submit_task
from assay.review.tasks import overview, queue_of
from assay.store.db import utcnow
from assay.store.projects import create_project, get_project
from assay.store.review_schema import assignments, reviews
from assay.store.workspace import Workspace
from assay.transfer.exporting import export_bundle, export_scope

PASSWORD = "a long password"


FERRY = b"# Ferry\n\nThe night ferry leaves at 22:40 from pier 3.\n"


def complete(ws: Workspace, project: Project, query: str) -> Item:
    """An item that passes the completeness checks (evidence and an answer)."""
    doc = get_document_by_name(ws, project, "ferry.md")
    evidence = Evidence(doc_id=doc.id, start=None, end=None, text="22:40")
    return Item(turns=[Turn(query=query, answer="At 22:40.", evidence=[evidence])])


@pytest.fixture
def team(any_ws: Workspace) -> tuple[Workspace, Project, dict[str, int]]:
    """A project with six draft items; lead lea, annotators ada and bob, viewer vic."""
    ws = any_ws
    project = create_project(ws, "p")
    people = {}
    for name, role in (("lea", "lead"), ("ada", "annotator"), ("bob", "annotator"),
                       ("vic", "viewer")):  # fmt: skip
        people[name] = create_account(ws, name, PASSWORD).id
        set_role(ws, project.id, people[name], role)
    create_account(ws, "root", PASSWORD, admin=True)
    set_team_mode(ws, True)
    ingest_bytes(ws, project, "ferry.md", FERRY)
    for n in range(6):
        create_item(ws, project, Item(turns=[Turn(query=f"Question {n}?")]))
    return ws, project, people


def test_overlap_two_gives_each_item_to_two_annotators_as_their_own_copies(team) -> None:  # type: ignore[no-untyped-def]
    ws, project, people = team
    report = assign(
        ws, project, ItemFilter(status="draft"), ["ada", "bob"], assigned_by=people["lea"],
        overlap=2,
    )  # fmt: skip
    assert report.as_json() == {"items": 6, "tasks": {"ada": 6, "bob": 6}, "already_assigned": 0}
    ada = queue_of(ws, project, people["ada"])
    bob = queue_of(ws, project, people["bob"])
    assert (ada.done, ada.total, bob.done, bob.total) == (0, 6, 0, 6)
    originals = item_ids(ws, project)  # gold reads leave the twelve copies out
    assert len(originals) == 6
    assert sorted(t.original_id for t in ada.tasks) == sorted(originals)
    assert not {t.item_id for t in ada.tasks} & {t.item_id for t in bob.tasks}
    assert all(get_item(ws, project, t.item_id).author == "ada" for t in ada.tasks)
    assert list_items(ws, project)[0] == 6
    assert list_items(ws, project, copies="only")[0] == 12
    assert list_items(ws, project, copies="include")[0] == 18
    assert list_items(ws, project, author_id=people["ada"], copies="include")[0] == 6
    assert export_scope(ws, project, None).items == 6  # exports: gold only
    assert sorted(i.id for i in export_bundle(ws, project).items) == sorted(originals)
    # assigning the same filter again hands out nothing twice
    again = assign(
        ws, project, ItemFilter(status="draft"), ["ada", "bob"], assigned_by=people["lea"],
        overlap=2,
    )  # fmt: skip
    assert again.as_json() == {"items": 0, "tasks": {"ada": 0, "bob": 0}, "already_assigned": 6}


def test_round_robin_and_balanced(team) -> None:  # type: ignore[no-untyped-def]
    ws, project, people = team
    ids = item_ids(ws, project)
    assign(ws, project, ItemFilter(ids=ids[:2]), ["ada"], assigned_by=people["lea"])
    report = assign(
        ws, project, ItemFilter(ids=ids[2:]), ["ada", "bob"], assigned_by=people["lea"],
        method="balanced",
    )  # fmt: skip
    assert report.tasks == {"bob": 3, "ada": 1}  # bob had none, ada two: even at three each
    with_n = {t.item_id for t in queue_of(ws, project, people["ada"]).tasks}
    assert ids[0] in with_n and owns_item(ws, project.id, ids[0], people["ada"])
    assert not owns_item(ws, project.id, ids[0], people["bob"])
    assert list_items(ws, project, author_id=people["ada"])[0] == 3  # assigned, not written


def test_bad_assignments_are_refused_with_a_clear_message(team) -> None:  # type: ignore[no-untyped-def]
    ws, project, people = team
    lead = people["lea"]
    drafts = ItemFilter(status="draft")
    create_account(ws, "eve", PASSWORD)
    with pytest.raises(InvalidInput, match="eve is not a member of project 'p'"):
        assign(ws, project, drafts, ["ada", "eve"], assigned_by=lead)
    with pytest.raises(NotFound, match="nobody"):
        assign(ws, project, drafts, ["nobody"], assigned_by=lead)
    with pytest.raises(InvalidInput, match="vic is a viewer in project 'p' and may not edit"):
        assign(ws, project, drafts, ["vic"], assigned_by=lead)
    with pytest.raises(InvalidInput, match="overlap 3 needs at least 3 annotators; 2 named"):
        assign(ws, project, drafts, ["ada", "bob"], assigned_by=lead, overlap=3)
    with pytest.raises(InvalidInput, match="the shared pool hands each item to one person"):
        assign(ws, project, drafts, [], assigned_by=lead, overlap=2)
    with pytest.raises(InvalidInput, match="has no item 'x'"):
        assign(ws, project, ItemFilter(ids=["x"]), ["ada"], assigned_by=lead)
    with pytest.raises(InvalidInput, match="unknown method"):
        assign(ws, project, drafts, ["ada"], assigned_by=lead, method="random")
    with ws.engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(assignments)) == 0
    assert list_items(ws, project, copies="only")[0] == 0  # nothing half-done


def test_submit_moves_on_and_a_rejected_item_comes_back_with_its_reason(team) -> None:  # type: ignore[no-untyped-def]
    ws, project, people = team
    ada = people["ada"]
    ids = item_ids(ws, project)
    assign(ws, project, ItemFilter(ids=ids[:3]), ["ada"], assigned_by=people["lea"])
    first = next_task(ws, project, ada)
    assert first is not None and first.item_id == ids[0]
    stored = get_item(ws, project, first.item_id)
    with pytest.raises(InvalidInput, match="cannot be submitted yet"):
        submit_task(ws, project, first.id, ada, stored.version)  # no answer yet
    item = submit_task(
        ws, project, first.id, ada, stored.version, complete(ws, project, "Question 0?")
    )
    assert item.status == "submitted" and item.turns[0].answer == "At 22:40."
    queue = queue_of(ws, project, ada)
    assert (queue.done, queue.total) == (1, 3)
    second = next_task(ws, project, ada)
    assert second is not None and second.item_id == ids[1]
    skipped = skip_task(ws, project, second.id, ada, "The question makes no sense.")
    assert skipped.state == "skipped"
    with pytest.raises(InvalidInput, match="say why"):
        skip_task(ws, project, second.id, ada, "  ")
    queue = queue_of(ws, project, ada)
    assert (queue.done, queue.total, len(queue.skipped)) == (1, 2, 1)
    lead_view = overview(ws, project)
    assert lead_view["annotators"][0] | {"name": ""} == {
        "user": "ada", "name": "", "open": 1, "done": 1, "skipped": 1,
    }  # fmt: skip
    assert lead_view["skipped"][0]["reason"] == "The question makes no sense."
    # a reviewer rejects the submitted one (the review part writes these two rows)
    with ws.engine.begin() as conn:
        set_status(ws, project, ids[0], "rejected", item.version, actor=people["lea"], conn=conn)
        conn.execute(
            reviews.insert().values(
                project_id=project.id, item_id=ids[0], reviewer_id=people["lea"],
                verdict="reject", reason="Cite the timetable.", submitted_version=item.version,
                changes=[], at=utcnow(),
            )
        )  # fmt: skip
    queue = queue_of(ws, project, ada)
    assert (queue.done, queue.total) == (0, 2)
    back = next_task(ws, project, ada)
    assert back is not None and back.item_id == ids[0] and back.returned == "Cite the timetable."
    with pytest.raises(Forbidden, match="in ada's queue, not yours"):
        submit_task(ws, project, back.id, people["bob"], 1)


def test_the_pool_gives_a_task_to_one_person_and_frees_it_when_the_lock_runs_out(team) -> None:  # type: ignore[no-untyped-def]
    ws, project, people = team
    ada, bob = people["ada"], people["bob"]
    ids = item_ids(ws, project)
    assign(ws, project, ItemFilter(ids=ids[:1]), [], assigned_by=people["lea"])
    taken = next_task(ws, project, ada)
    assert taken is not None and taken.holder == "ada" and taken.pool
    assert next_task(ws, project, bob) is None  # reserved for ada
    assert owns_item(ws, project.id, ids[0], ada)
    with pytest.raises(TaskTaken, match=r"ada took task .* holds it until"):
        keep_hold(ws, project, ids[0], bob)
    # ada's reservation runs out; bob takes it; ada's save and submit are refused
    with ws.engine.begin() as conn:
        conn.execute(assignments.update().values(locked_until=utcnow() - timedelta(minutes=1)))
    by_bob = next_task(ws, project, bob)
    assert by_bob is not None and by_bob.id == taken.id and by_bob.holder == "bob"
    with pytest.raises(TaskTaken, match="bob took task"):
        keep_hold(ws, project, ids[0], ada)
    mine = complete(ws, project, "Question 0, as ada read it?")
    with pytest.raises(TaskTaken, match="kept as your own version") as refusal:
        submit_task(ws, project, taken.id, ada, 1, mine)
    kept = get_item(ws, project, str(refusal.value.kept))
    assert (kept.status, kept.author, kept.turns[0].query) == (
        "submitted", "ada", "Question 0, as ada read it?",
    )  # fmt: skip
    assert get_item(ws, project, ids[0]).turns[0].query == "Question 0?"  # bob's, untouched
    assert queue_of(ws, project, ada).tasks == []
    done = submit_task(ws, project, by_bob.id, bob, 1, complete(ws, project, "Question 0?"))
    assert done.status == "submitted"


def test_two_people_racing_for_the_pool_never_get_the_same_task(team) -> None:  # type: ignore[no-untyped-def]
    ws, project, people = team
    assign(ws, project, ItemFilter(status="draft"), [], assigned_by=people["lea"])
    set_queue_settings(ws, get_project(ws, "p"), lock_minutes=5)
    got: dict[str, list[int]] = {"ada": [], "bob": []}
    errors: list[BaseException] = []

    def work(name: str) -> None:
        try:
            for _ in range(3):
                task = next_task(ws, project, people[name])
                if task is not None:
                    got[name].append(task.id)
                    skip_task(ws, project, task.id, people[name], "taking the next")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in got]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(got["ada"]) + len(got["bob"]) == 6
    assert not set(got["ada"]) & set(got["bob"])


def test_llm_drafts_go_to_the_pool_by_their_origin(team) -> None:  # type: ignore[no-untyped-def]
    ws, project, people = team
    draft = create_item(ws, project, Item(turns=[Turn(query="Drafted?")], origin="llm-suggestion"))
    report = assign(ws, project, ItemFilter(origin="llm"), [], assigned_by=people["lea"])
    assert report.as_json() == {"items": 1, "tasks": {"": 1}, "already_assigned": 0}
    taken = next_task(ws, project, people["bob"])
    assert taken is not None and taken.item_id == draft.id and taken.pool
    assert queue_of(ws, project, people["ada"]).pool == 0  # bob holds it


def test_an_annotators_own_list_pages_counts_and_continues_after_an_item(team) -> None:  # type: ignore[no-untyped-def]
    ws, project, people = team
    ada, lead = people["ada"], people["lea"]
    ids = item_ids(ws, project)
    assign(ws, project, ItemFilter(ids=ids[3:4]), [], assigned_by=lead)
    held = next_task(ws, project, ada)  # a pool task ada holds
    assert held is not None and held.item_id == ids[3]
    written = [
        create_item(ws, project, Item(turns=[Turn(query=f"Ada's {n}?")]), author=ada).id
        for n in range(3)
    ]
    assign(ws, project, ItemFilter(ids=[*ids[:3], written[0]]), ["ada"], assigned_by=lead)
    everything = list_items(ws, project, author_id=ada, limit=100)
    listed = [row.id for row in everything[1]]
    assert everything[0] == 7 and sorted(listed) == sorted([*ids[:4], *written])
    keys = [(row.updated_at, row.id) for row in everything[1]]
    assert keys == sorted(keys, reverse=True)  # newest change first, as one list
    pages = [list_items(ws, project, author_id=ada, offset=at, limit=2)[1] for at in (0, 2, 4, 6)]
    assert [row.id for page in pages for row in page] == listed
    walked = [listed[0]]
    while nxt := list_items(ws, project, author_id=ada, after=walked[-1], limit=1, count=False)[1]:
        walked.append(nxt[0].id)
    assert walked == listed
    with pytest.raises(NotFound, match="'nope' not found in project 'p'"):
        list_items(ws, project, author_id=ada, after="nope")
    # counted no further than asked: one more than the limit says "more"
    assert list_items(ws, project, author_id=ada, count_limit=3, limit=0)[0] == 4
    assert list_items(ws, project, author_id=ada, count_limit=7, limit=0)[0] == 7
    set_status(ws, project, ids[0], "submitted", 1)
    assert list_items(ws, project, author_id=ada, status="draft", count_limit=3)[0] == 4
    assert list_items(ws, project, author_id=ada, status="draft")[0] == 6
    assert list_items(ws, project, author_id=people["bob"])[0] == 0
