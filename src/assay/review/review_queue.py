"""The review queue: the submitted items waiting for a verdict, handed out one at a time.

"Start review" reserves the next waiting item for the reviewer: an ``assignments`` row with
task ``review``, ``holder_id`` and ``locked_until``. While the reservation lasts
(:data:`RESERVATION`, renewed each time the reviewer asks again) no other reviewer is given
that item; an expired one is free again. Reservations in a project are made one at a time
(each claim first takes the project's row lock, then takes the row with a conditional
update), so two reviewers asking at once never get the same item, on SQLite or PostgreSQL.

A verdict closes the item's reservations (:func:`finish_reservations`). A review assignment
given to one account (``account_id``, by a lead) is offered to that reviewer only, and first.
A reviewer who skips an item is not offered it again until it changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from assay.errors import Conflict
from assay.people.actors import AUTHOR_NAME
from assay.records import Project
from assay.store.db import as_utc, count_rows, reading, transaction, utcnow
from assay.store.review_schema import assignments, reviews
from assay.store.schema import accounts, items, projects
from assay.store.workspace import Workspace

RESERVATION = timedelta(minutes=30)
"""How long a reviewer holds the item "Start review" gave them."""


@dataclass(frozen=True, slots=True)
class Progress:
    """``reviewed`` of ``total`` items have a verdict (accepted or rejected after review);
    ``waiting`` are submitted; ``by_you``: verdicts the reviewer gave."""

    reviewed: int
    total: int
    waiting: int
    by_you: int


@dataclass(frozen=True, slots=True)
class Waiting:
    """A submitted item in the queue, and who holds it now (empty when nobody does)."""

    id: str
    kind: str
    query: str
    author: str
    turn_count: int
    submitted_at: datetime
    held_by: str
    held_until: datetime | None


def _waiting() -> list[sa.ColumnElement[bool]]:
    return [items.c.status == "submitted", items.c.copy_of.is_(None)]


def _review_rows(project: Project, *where: Any) -> sa.ColumnElement[bool]:
    return sa.and_(assignments.c.project_id == project.id, assignments.c.task == "review", *where)


def _open_rows(project: Project, *where: Any) -> sa.ColumnElement[bool]:
    return _review_rows(project, assignments.c.state == "open", *where)


def _offered(project: Project, reviewer: int, now: datetime, include_own: bool) -> list[Any]:
    """What keeps an item from ``reviewer``: held by someone else, assigned to someone
    else, skipped by them since its last change, their own (unless ``include_own``)."""
    open_rows = _review_rows(project, assignments.c.state == "open")
    held = sa.select(assignments.c.item_id).where(
        open_rows, assignments.c.holder_id != reviewer, assignments.c.locked_until > now
    )
    elsewhere = sa.select(assignments.c.item_id).where(
        open_rows, assignments.c.account_id.is_not(None), assignments.c.account_id != reviewer
    )
    skipped = sa.exists().where(
        _review_rows(project, assignments.c.state == "skipped"),
        assignments.c.item_id == items.c.id,
        assignments.c.holder_id == reviewer,
        assignments.c.updated_at >= items.c.updated_at,
    )
    where = [items.c.id.not_in(held), items.c.id.not_in(elsewhere), ~skipped]
    if not include_own:
        where.append(items.c.author_id != reviewer)
    return where


def next_review(
    ws: Workspace,
    project: Project,
    reviewer: int,
    *,
    include_own: bool,
    lease: timedelta = RESERVATION,
    now: datetime | None = None,
    conn: sa.Connection | None = None,
) -> str | None:
    """Reserve the next item for ``reviewer`` and return its id (None: nothing waits for
    them). The item they hold already comes back first (its reservation renewed); then items
    assigned to them, then the oldest submitted. ``include_own``: their own items too
    (:func:`assay.review.reviews.may_review_own`)."""
    now = now or utcnow()
    with transaction(ws.engine, conn) as conn:
        # one claim at a time per project: the row lock lasts until this transaction ends
        conn.execute(
            projects.update()
            .where(projects.c.id == project.id)
            .values(updated_at=projects.c.updated_at)
        )
        held = conn.scalar(
            sa.select(assignments.c.item_id)
            .join(items, items.c.id == assignments.c.item_id)
            .where(
                _review_rows(project, assignments.c.state == "open"),
                assignments.c.holder_id == reviewer,
                assignments.c.locked_until > now,
                *_waiting(),
            )
            .limit(1)
        )
        mine = sa.select(assignments.c.item_id).where(
            _review_rows(project, assignments.c.state == "open"),
            assignments.c.account_id == reviewer,
        )
        offered = (
            sa.select(items.c.id)
            .where(
                items.c.project_id == project.id,
                *_waiting(),
                *_offered(project, reviewer, now, include_own),
            )
            .order_by(items.c.updated_at, items.c.id)  # the (project, status, updated) index
            .limit(1)
        )
        item_id = held or conn.scalar(offered.where(items.c.id.in_(mine))) or conn.scalar(offered)
        if item_id is None:
            return None
        _reserve(conn, project, item_id, reviewer, now, lease)
        return str(item_id)


def _pool_row(
    project: Project, item_id: str, reviewer: int, now: datetime, **values: Any
) -> dict[str, Any]:
    """A review row of the project's shared pool that ``reviewer`` made (``values`` win)."""
    return {
        "project_id": project.id,
        "item_id": item_id,
        "task": "review",
        "account_id": None,
        "state": "open",
        "position": 0,
        "reason": "",
        "holder_id": reviewer,
        "assigned_by": reviewer,
        "created_at": now,
        "updated_at": now,
        **values,
    }


def _reserve(
    conn: sa.Connection,
    project: Project,
    item_id: str,
    reviewer: int,
    now: datetime,
    lease: timedelta,
) -> None:
    """Make ``reviewer`` the holder of the item's open review row (a new one when it has
    none); the conditional update takes it only when it is free, theirs, or expired."""
    row = conn.scalar(
        sa.select(assignments.c.id)
        .where(_open_rows(project, assignments.c.item_id == item_id))
        .order_by(assignments.c.id)
        .limit(1)
    )
    hold = {"holder_id": reviewer, "locked_until": now + lease, "updated_at": now}
    if row is None:
        new = _pool_row(project, item_id, reviewer, now, **hold)
        conn.execute(assignments.insert().values(new))
        return
    taken = conn.execute(
        assignments.update()
        .where(
            assignments.c.id == row,
            sa.or_(
                assignments.c.holder_id.is_(None),
                assignments.c.holder_id == reviewer,
                assignments.c.locked_until.is_(None),
                assignments.c.locked_until <= now,
            ),
        )
        .values(**hold)
    ).rowcount
    if taken != 1:
        raise Conflict(
            f"item {item_id} was just reserved by another reviewer; ask for the next",
            key="raised.review_reserved",
            item_id=item_id,
        )


def skip_review(
    ws: Workspace,
    project: Project,
    item_id: str,
    reviewer: int,
    reason: str = "",
    *,
    conn: sa.Connection | None = None,
) -> None:
    """Give the item back: free for other reviewers, not offered to ``reviewer`` again
    until it changes."""
    now = utcnow()
    with transaction(ws.engine, conn) as conn:
        released = conn.execute(
            assignments.update()
            .where(_open_rows(project, assignments.c.item_id == item_id))
            .where(assignments.c.holder_id == reviewer)
            .values(state="skipped", reason=reason.strip(), updated_at=now, done_at=now)
        ).rowcount
        if not released:  # skipped without holding it (from the list): remember it all the same
            skipped = _pool_row(project, item_id, reviewer, now, state="skipped", done_at=now)
            conn.execute(assignments.insert().values({**skipped, "reason": reason.strip()}))


def finish_reservations(conn: sa.Connection, project: Project, item_id: str, now: datetime) -> None:
    """A verdict was given: the item's open review rows are done."""
    conn.execute(
        assignments.update()
        .where(_open_rows(project, assignments.c.item_id == item_id))
        .values(state="done", done_at=now, updated_at=now, locked_until=None)
    )


def review_progress(
    ws: Workspace, project: Project, reviewer: int, *, conn: sa.Connection | None = None
) -> Progress:
    """ "N of M reviewed": items with a verdict that stands (accepted or rejected, reviewed)
    of those plus the ones waiting."""
    with reading(ws.engine, conn) as conn:
        reviewed_ids = sa.select(reviews.c.item_id).where(reviews.c.project_id == project.id)
        reviewed = count_rows(
            conn,
            items,
            items.c.project_id == project.id,
            items.c.copy_of.is_(None),
            items.c.status.in_(("accepted", "rejected")),
            items.c.id.in_(reviewed_ids),
        )
        waiting = count_rows(conn, items, items.c.project_id == project.id, *_waiting())
        by_you = count_rows(
            conn, reviews, reviews.c.project_id == project.id, reviews.c.reviewer_id == reviewer
        )
    return Progress(reviewed, reviewed + waiting, waiting, by_you)


def waiting_items(
    ws: Workspace,
    project: Project,
    *,
    limit: int = 100,
    now: datetime | None = None,
    conn: sa.Connection | None = None,
) -> list[Waiting]:
    """The submitted items in queue order (oldest first), with who holds each now."""
    now = now or utcnow()
    holder = accounts.alias("holder")
    holder_name = sa.case(
        (holder.c.display_name == "", holder.c.username), else_=holder.c.display_name
    )
    live = sa.and_(
        _review_rows(project, assignments.c.state == "open"),
        assignments.c.item_id == items.c.id,
        assignments.c.locked_until > now,
    )
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(
            sa.select(
                items.c.id,
                items.c.kind,
                items.c.query,
                items.c.turn_count,
                items.c.updated_at,
                AUTHOR_NAME.label("author"),
                holder_name.label("held_by"),
                assignments.c.locked_until,
            )
            .join(accounts, accounts.c.id == items.c.author_id)
            .outerjoin(assignments, live)
            .outerjoin(holder, holder.c.id == assignments.c.holder_id)
            .where(items.c.project_id == project.id, *_waiting())
            .order_by(items.c.updated_at, items.c.id)
            .limit(limit)
        ).all()
    return [
        Waiting(
            r.id,
            r.kind,
            r.query,
            r.author,
            r.turn_count,
            as_utc(r.updated_at),
            r.held_by or "",
            as_utc(r.locked_until) if r.locked_until else None,
        )
        for r in rows
    ]
