"""Reading tasks: an annotator's queue with "N of M done", and the lead's overview.

A task's state is read from its item, so however the item was submitted (the queue, the
editor's own Submit, the CLI) the queue agrees: a task is *done* while its item is submitted
or accepted, *open* while it is a draft or was rejected (sent back: the reviewer's latest
reason is shown), and *skipped* when its annotator skipped it (their reason is kept).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from assay.errors import NotFound
from assay.people.actors import AUTHOR_NAME
from assay.records import Project
from assay.store.db import as_utc, reading, utcnow
from assay.store.review_schema import assignments, reviews
from assay.store.schema import accounts, items
from assay.store.workspace import Workspace

OPEN_STATUSES = ("draft", "rejected")
"""Item statuses that leave an annotate task open (rejected: sent back by a reviewer)."""


@dataclass(frozen=True)
class Task:
    """One annotate task. ``item_id`` is what the annotator works on (their copy under
    overlap), ``original_id`` the gold item. ``account`` is the annotator's user name (""
    for the shared pool), ``holder`` whoever last took it from the pool."""

    id: int
    item_id: str
    original_id: str
    kind: str
    query: str
    item_status: str
    state: str
    reason: str
    returned: str
    account: str
    holder: str
    locked_until: datetime | None
    position: int

    @property
    def pool(self) -> bool:
        return not self.account


def effective_state(stored: str, item_status: str) -> str:
    """``open``, ``done`` or ``skipped``, as the module docstring says."""
    if stored == "skipped":
        return "skipped"
    return "open" if item_status in OPEN_STATUSES else "done"


_holder = accounts.alias("holder")


def _select() -> sa.Select[Any]:
    return (
        sa.select(
            assignments.c.id,
            assignments.c.item_id,
            sa.func.coalesce(items.c.copy_of, items.c.id).label("original_id"),
            items.c.kind,
            items.c.query,
            items.c.status.label("item_status"),
            assignments.c.state,
            assignments.c.reason,
            sa.func.coalesce(accounts.c.username, "").label("account"),
            sa.func.coalesce(_holder.c.username, "").label("holder"),
            assignments.c.locked_until,
            assignments.c.position,
        )
        .select_from(
            assignments.join(items, items.c.id == assignments.c.item_id)
            .outerjoin(accounts, accounts.c.id == assignments.c.account_id)
            .outerjoin(_holder, _holder.c.id == assignments.c.holder_id)
        )
        .where(assignments.c.task == "annotate")
    )


def _tasks(conn: sa.Connection, statement: sa.Select[Any]) -> list[Task]:
    rows = conn.execute(statement).all()
    rejected = [r.item_id for r in rows if r.item_status == "rejected"]
    reasons = reject_reasons(conn, rejected)
    return [
        Task(
            id=r.id,
            item_id=r.item_id,
            original_id=r.original_id,
            kind=r.kind,
            query=r.query,
            item_status=r.item_status,
            state=effective_state(r.state, r.item_status),
            reason=r.reason,
            returned=reasons.get(r.item_id, ""),
            account=r.account,
            holder=r.holder,
            locked_until=as_utc(r.locked_until) if r.locked_until else None,
            position=r.position,
        )
        for r in rows
    ]


def reject_reasons(conn: sa.Connection, item_ids: Iterable[str]) -> dict[str, str]:
    """The latest reject reason of each item that has one."""
    ids = list(item_ids)
    if not ids:
        return {}
    rows = conn.execute(
        sa.select(reviews.c.item_id, reviews.c.reason)
        .where(reviews.c.item_id.in_(ids), reviews.c.verdict == "reject")
        .order_by(reviews.c.at, reviews.c.id)
    ).all()
    return {item_id: reason for item_id, reason in rows}  # the latest wins


def get_task(conn: sa.Connection, project: Project, task_id: int) -> Task:
    found = _tasks(
        conn, _select().where(assignments.c.project_id == project.id, assignments.c.id == task_id)
    )
    if not found:
        raise NotFound(f"project {project.name!r} has no task {task_id}")
    return found[0]


def read_task(ws: Workspace, project: Project, task_id: int) -> Task:
    with reading(ws.engine, None) as reader:
        return get_task(reader, project, task_id)


@dataclass(frozen=True)
class Queue:
    """One annotator's tasks (their own, then those they took from the pool): open ones
    first (sent-back ones before the rest), then done, then skipped; ``done`` of ``total``
    counts the open and done ones (a skipped task leaves the count); ``pool`` is how many
    pool tasks wait for anyone."""

    tasks: list[Task]
    done: int
    total: int
    pool: int

    @property
    def open(self) -> list[Task]:
        return [t for t in self.tasks if t.state == "open"]

    @property
    def skipped(self) -> list[Task]:
        return [t for t in self.tasks if t.state == "skipped"]


_ORDER = {"open": 0, "done": 1, "skipped": 2}


def queue_of(
    ws: Workspace, project: Project, account_id: int, *, conn: sa.Connection | None = None
) -> Queue:
    """The account's tasks in the project: its own queue's and the pool tasks it holds.
    Read as two selects, each served by its own index (project, task, account; holder,
    project, task): one ``account = X OR holder = X`` read all the project's tasks."""
    with reading(ws.engine, conn) as reader:
        found = _tasks(
            reader,
            _select().where(
                assignments.c.project_id == project.id, assignments.c.account_id == account_id
            ),
        ) + _tasks(
            reader,
            _select().where(
                assignments.c.holder_id == account_id,
                assignments.c.project_id == project.id,
                assignments.c.account_id.is_(None),
            ),
        )
        pool = waiting_in_pool(reader, project)
    found.sort(key=lambda t: (_ORDER[t.state], not t.returned, t.pool, t.position, t.id))
    done = sum(1 for t in found if t.state == "done")
    total = sum(1 for t in found if t.state != "skipped")
    return Queue(found, done, total, pool)


def free_in_pool(now: datetime) -> sa.ColumnElement[bool]:
    """A pool task nobody holds, or whose reservation ran out."""
    return sa.and_(
        assignments.c.account_id.is_(None),
        assignments.c.state == "open",
        sa.or_(assignments.c.holder_id.is_(None), assignments.c.locked_until < now),
    )


def waiting_in_pool(conn: sa.Connection, project: Project) -> int:
    return int(
        conn.scalar(
            sa.select(sa.func.count())
            .select_from(assignments.join(items, items.c.id == assignments.c.item_id))
            .where(
                assignments.c.project_id == project.id,
                assignments.c.task == "annotate",
                free_in_pool(utcnow()),
                items.c.status.in_(OPEN_STATUSES),
            )
        )
        or 0
    )


def overview(
    ws: Workspace, project: Project, *, conn: sa.Connection | None = None
) -> dict[str, Any]:
    """The lead's view: per annotator (and the pool, under ``""``) how many tasks are open,
    done and skipped, and the skipped tasks with their reasons."""
    with reading(ws.engine, conn) as reader:
        found = _tasks(reader, _select().where(assignments.c.project_id == project.id))
        names: dict[str, str] = dict(
            reader.execute(
                sa.select(accounts.c.username, AUTHOR_NAME).where(
                    accounts.c.username.in_({t.account or t.holder for t in found} - {""})
                )
            ).all()
        )
    people: dict[str, dict[str, Any]] = {}
    for task in found:
        key = task.account
        entry = people.setdefault(
            key, {"user": key, "name": names.get(key, key), "open": 0, "done": 0, "skipped": 0}
        )
        entry[task.state] += 1
    skipped = [
        {"task": t.id, "item_id": t.item_id, "user": t.account or t.holder, "reason": t.reason}
        for t in found
        if t.state == "skipped"
    ]
    return {
        "annotators": [people[k] for k in sorted(people, key=lambda k: (k == "", k))],
        "skipped": skipped,
        "task_count": len(found),
    }
