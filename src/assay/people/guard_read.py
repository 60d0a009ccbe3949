"""What the access guard needs to know about a request, read in one statement.

A signed-in request used to ask the database five times before its route ran: is team mode
on, whose session is this (with the account), which project, does the actor own the item,
what is the actor's role. Each was a round trip (and on PostgreSQL a turn of its server
process); under a team's load they were a third of an autosave's statements. :func:`guard_read`
asks all five at once: one row whatever the answers (missing parts are NULL), so every
refusal still says what it said before, in the same order (the guard decides in Python).

Only the session cookie's way of signing in is read here; a trusted proxy's user header and
API tokens take their own reads (:mod:`assay.web.actors`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import sqlalchemy as sa

from assay.people.mode import team_mode_read
from assay.people.sessions import session_columns
from assay.store.review_schema import assignments
from assay.store.schema import accounts, items, project_members, projects, sessions

PROJECT = "project_"
"""Prefix of the project's columns in the row (``project_name``...)."""


@dataclass(frozen=True)
class GuardRead:
    """The answers of :func:`guard_read`."""

    team_mode: bool
    session: Any | None
    """The session row with its account (:func:`assay.people.sessions.judge_session` reads
    it); None: no such session."""
    project: Any | None
    """The project's columns as attributes (for ``store.projects.project_from_row``); None:
    no project of that name, or none asked."""
    role: str | None
    """The session's account's role in the project; None: not a member."""
    item_author: int | None
    """The account that wrote the item (None: no such item in the project, or none asked)."""
    item_task: bool
    """An annotate task on the item is the session's account's, or held by it."""


def guard_read(
    conn: sa.Connection, *, session_key: str | None, project: str | None, item_id: str | None
) -> GuardRead:
    """Team mode, the session of ``session_key`` (a hashed cookie secret), the project named
    ``project``, the session's account's role there, and who owns ``item_id`` in it."""
    params = {"id_hash": session_key, "name": project, "item_id": item_id}
    row = conn.execute(_statement(), params).one()
    mapping = row._mapping
    found = {k[len(PROJECT) :]: v for k, v in mapping.items() if k.startswith(PROJECT)}
    return GuardRead(
        team_mode=row.guard_team_mode is True,
        session=row if row.id_hash is not None else None,
        project=SimpleNamespace(**found) if found["id"] is not None else None,
        role=row.guard_role,
        item_author=row.guard_item_author,
        item_task=bool(row.guard_item_task),
    )


@functools.cache
def _statement() -> sa.Select[Any]:
    """One row: a one-row start, the session (with its account) and the project joined to it
    by their keys, the rest as subqueries. Built once per process (bound parameters)."""
    start = sa.select(sa.literal_column("1").label("one")).subquery("guard_start")
    account = sessions.c.account_id
    role = sa.select(project_members.c.role).where(
        project_members.c.project_id == projects.c.id, project_members.c.account_id == account
    )
    item_id = sa.bindparam("item_id", type_=sa.String)
    author = sa.select(items.c.author_id).where(
        items.c.id == item_id, items.c.project_id == projects.c.id
    )
    task = sa.exists().where(
        assignments.c.item_id == item_id,
        # the item's few tasks are found by item_id; "+ 0" keeps SQLite's planner from
        # walking the project's tasks by the (project_id, task) index instead
        assignments.c.project_id + 0 == projects.c.id,
        assignments.c.task == "annotate",
        sa.or_(assignments.c.account_id == account, assignments.c.holder_id == account),
    )
    return (
        sa.select(
            team_mode_read().scalar_subquery().label("guard_team_mode"),
            *session_columns(),
            *[column.label(PROJECT + column.name) for column in projects.c],
            role.scalar_subquery().label("guard_role"),
            author.scalar_subquery().label("guard_item_author"),
            task.label("guard_item_task"),
        )
        .select_from(start)
        .outerjoin(sessions, sessions.c.id_hash == sa.bindparam("id_hash", type_=sa.String))
        .outerjoin(accounts, accounts.c.id == account)
        .outerjoin(projects, projects.c.name == sa.bindparam("name", type_=sa.String))
    )
