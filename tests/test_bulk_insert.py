"""Bulk inserts (assay.store.bulk): many rows at once store exactly what one-by-one inserts
store. On PostgreSQL many rows go in by ``COPY``, a few by ``INSERT``; both must give the same
values back, and a broken constraint must come out as SQLAlchemy's error either way."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import sqlalchemy as sa

from assay.people.actors import acting_account
from assay.records import Evidence
from assay.store.bulk import COPY_FROM, insert_rows
from assay.store.db import as_utc
from assay.store.projects import create_project
from assay.store.schema import events
from assay.store.workspace import Workspace

COLUMNS = ("project_id", "item_id", "actor_id", "action", "before", "after", "at")
AWKWARD = [
    "tab\there, newline\nthere, CR\r, backslash \\ and \\N",  # action: 60 at most
    "Ünïcode “quoted” 東京 \u2028",
    "",
]


def rows(project_id: int, actor: int, count: int) -> list[tuple[Any, ...]]:
    """Event rows with text that COPY's text format must escape, JSON of every shape, NULLs and
    dates in several zones."""
    start = datetime(2026, 11, 29, 3, 4, 5, 678901, tzinfo=UTC)
    made = []
    for n in range(count):
        text = AWKWARD[n % len(AWKWARD)]
        made.append(
            (
                project_id,
                None if n % 2 else f"item-{n}",
                actor,
                text or "save",
                None if n % 4 == 0 else {"n": n, "text": text, "list": [1, None, True]},
                [Evidence(doc_id="d", start=0, end=4, text=text)] if n % 2 else text,
                (start + timedelta(seconds=n)).astimezone(timezone(timedelta(hours=n % 5))),
            )
        )
    return made


def stored(ws: Workspace, action_ids: list[int]) -> list[tuple[Any, ...]]:
    with ws.engine.connect() as conn:
        found = conn.execute(
            sa.select(*(events.c[name] for name in COLUMNS[1:]))
            .where(events.c.id.in_(action_ids))
            .order_by(events.c.id)
        ).all()
    return [tuple(row) for row in found]


def test_many_rows_store_what_one_row_at_a_time_stores(any_ws: Workspace) -> None:
    ws = any_ws
    project = create_project(ws, "bulk")
    count = 2 * COPY_FROM + 3
    with ws.engine.begin() as conn:
        actor = acting_account(ws, conn=conn)
        given = rows(project.id, actor, count)
        insert_rows(conn, events, COLUMNS, given)  # all at once (PostgreSQL: COPY)
    with ws.engine.begin() as conn:
        for row in given:
            insert_rows(conn, events, COLUMNS, [row])  # one by one (an INSERT each)
    with ws.engine.connect() as conn:
        ids = list(conn.scalars(sa.select(events.c.id).order_by(events.c.id)))
    assert len(ids) == 2 * count
    at_once, one_by_one = stored(ws, ids[:count]), stored(ws, ids[count:])
    assert at_once == one_by_one
    first = at_once[1]  # item None, a list of records as JSON, the awkward text
    assert first[0] is None and first[2] == AWKWARD[1]
    assert first[4] == [
        {
            "doc_id": "d",
            "start": 0,
            "end": 4,
            "text": AWKWARD[1],
            "label": "relevant",
            "grade": None,
            "group": None,
            "origin": "selected",
            "anchor": None,
            "author": None,
            "created_at": None,
            "chunk_ids": [],
        }
    ]
    assert at_once[0][3] is None and at_once[3][3]["text"] == AWKWARD[0]
    assert as_utc(at_once[5][5]) == datetime(2026, 11, 29, 3, 4, 10, 678901, tzinfo=UTC)


def test_a_broken_constraint_is_sqlalchemys_error_and_nothing_stays(any_ws: Workspace) -> None:
    ws = any_ws
    project = create_project(ws, "bulk")
    with ws.engine.connect() as conn:
        actor = acting_account(ws, conn=conn)
        conn.commit()
    bad = rows(project.id, actor, COPY_FROM + 5)
    bad[-1] = (project.id, None, actor + 1000, "save", None, None, bad[-1][-1])  # no such account
    with pytest.raises(sa.exc.IntegrityError), ws.engine.begin() as conn:
        insert_rows(conn, events, COLUMNS, bad)
    with ws.engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(events)) == 0
