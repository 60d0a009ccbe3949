"""An annotator's own list: the page of items assigned to them is found by walking the
project's sort index (``item_lists.walked_ids``) where that applies, and the rows, their order, the
pages, "continue after an item" and the neighbours are exactly those of reading the assigned
items by id. The statements a page takes do not grow with the number of assignments.
SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa

from assay.gold import item_lists
from assay.gold.item_lists import item_ids, list_items, list_neighbours
from assay.gold.items import create_item, set_status
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Item, Project, Turn
from assay.review.assignments import ItemFilter, assign
from assay.review.queue import next_task
from assay.store.projects import create_project
from assay.store.workspace import Workspace

PASSWORD = "a long password"
SORTS = ("-updated", "updated", "-created", "created", "query")


@pytest.fixture
def own(any_ws: Workspace) -> tuple[Workspace, Project, int, int, list[str]]:
    """40 items by a lead, 5 by annotator ada; 24 of the lead's assigned to ada, one pool
    task held by her, a few items changed since (so last change and creation differ)."""
    ws = any_ws
    project = create_project(ws, "p")
    lead = create_account(ws, "lea", PASSWORD).id
    ada = create_account(ws, "ada", PASSWORD).id
    set_role(ws, project.id, lead, "lead")
    set_role(ws, project.id, ada, "annotator")
    create_account(ws, "root", PASSWORD, admin=True)
    set_team_mode(ws, True)
    for n in range(40):
        create_item(ws, project, Item(turns=[Turn(query=f"Question {n:02}?")]), author=lead)
    for n in range(5):
        create_item(ws, project, Item(turns=[Turn(query=f"Ada's {n}?")]), author=ada)
    ids = item_ids(ws, project)
    theirs = [i for i in ids if i not in ids[-5:]][:40]
    assign(ws, project, ItemFilter(ids=theirs[39:40]), [], assigned_by=lead)
    assert next_task(ws, project, ada) is not None  # a pool task ada holds
    assign(ws, project, ItemFilter(ids=theirs[:12]), ["ada"], assigned_by=lead)
    for item_id in theirs[3:30:4]:  # changed later: a newer last change, same creation
        set_status(ws, project, item_id, "submitted", 1)
    return ws, project, lead, ada, theirs


@contextmanager
def walking(monkeypatch: pytest.MonkeyPatch, on: bool, factor: int = 4) -> Iterator[list[int]]:
    """The walk on (from one task) or off; yields the sizes of the pages walked."""
    walked: list[int] = []
    real = item_lists.walked_ids

    def spy(*args: Any) -> list[str] | None:
        found = real(*args)
        if found is not None:
            walked.append(len(found))
        return found

    with monkeypatch.context() as patch:
        patch.setattr(item_lists, "WALK_MIN", 1 if on else 10**9)
        patch.setattr(item_lists, "WALK_FACTOR", factor)
        patch.setattr(item_lists, "PAGE_SHARE", 1)  # any page the tasks can fill
        patch.setattr(item_lists, "walked_ids", spy)
        yield walked


def everything(ws: Workspace, project: Project, ada: int) -> dict[str, Any]:
    """Every way the list is read, for each sort: pages, the continuation, the neighbours."""
    seen: dict[str, Any] = {}
    for sort in SORTS:
        mine = {"author_id": ada, "copies": "include", "sort": sort}
        total, rows = list_items(ws, project, **mine, limit=100)
        listed = [row.id for row in rows]
        pages = [
            [row.id for row in list_items(ws, project, **mine, offset=at, limit=7)[1]]
            for at in range(0, total, 7)
        ]
        after = [
            [row.id for row in list_items(ws, project, **mine, after=i, limit=3, count=False)[1]]
            for i in listed[::5]
        ]
        neighbours = [
            tuple(None if r is None else r.id for r in list_neighbours(ws, project, i, **mine)[1:])
            for i in listed[::4]
        ]
        filtered = [row.id for row in list_items(ws, project, **mine, status="draft")[1]]
        seen[sort] = (total, listed, pages, after, neighbours, filtered)
    return seen


def test_a_walked_page_is_the_page_read_by_id(own, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    ws, project, _lead, ada, _theirs = own
    with walking(monkeypatch, on=False) as walked:
        by_id = everything(ws, project, ada)
    assert walked == []
    with walking(monkeypatch, on=True) as walked:
        by_walk = everything(ws, project, ada)
    assert walked  # the walk served pages
    assert by_walk == by_id
    total, listed = by_id["-updated"][0], by_id["-updated"][1]
    assert total == 5 + 13 and len(listed) == 18
    # a walk too short for the page (tasks few and scattered): read by id, same rows
    with walking(monkeypatch, on=True, factor=0) as walked:
        assert everything(ws, project, ada) == by_id
    assert walked == []


def test_a_page_takes_the_same_statements_for_more_assignments(
    own, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    ws, project, lead, ada, theirs = own
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    def page_statements() -> int:
        statements.clear()
        sa.event.listen(ws.engine, "before_cursor_execute", count)
        try:
            list_items(ws, project, author_id=ada, copies="include", limit=5, count_limit=100)
        finally:
            sa.event.remove(ws.engine, "before_cursor_execute", count)
        return len(statements)

    with walking(monkeypatch, on=True) as walked:
        few = page_statements()
        assign(ws, project, ItemFilter(ids=theirs[12:39]), ["ada"], assigned_by=lead)
        many = page_statements()
    assert walked and few == many
