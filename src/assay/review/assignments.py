"""A lead hands out items: to named annotators (round robin or balanced, overlap N) or to the
shared pool, chosen by id or by a list filter.

Under overlap N each item goes to N distinct annotators, each working on their own copy
(:func:`assay.review.copies.copy_item`); with N = 1 the annotator works on the item itself.
An item already handed out (an open or done annotate task on it or on one of its copies) is
left out, so assigning the same filter twice gives nobody anything twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.people.access import Actor, decide
from assay.people.accounts import get_account
from assay.people.members import role_of
from assay.people.mode import team_mode
from assay.records import STATUSES, Project
from assay.review.copies import copy_item
from assay.store.db import reading, transaction, utcnow
from assay.store.projects import update_project_settings
from assay.store.review_schema import assignments
from assay.store.schema import items
from assay.store.workspace import Workspace

METHODS = ("round-robin", "balanced")
"""How items are shared out: in turn, or each to whoever has the fewest open tasks."""

LOCK_MINUTES = 30
"""How long a task taken from the shared pool stays reserved (project setting
``lock_minutes``); opening or autosaving it renews the reservation."""


@dataclass(frozen=True)
class ItemFilter:
    """Which items to hand out, as the items list filters them (empty: no condition).
    ``origin`` matches the start of an item's origin: ``llm`` picks LLM drafts."""

    ids: Sequence[str] = ()
    status: str = ""
    query_type: str = ""
    kind: str = ""
    text: str = ""
    origin: str = ""

    def given(self) -> bool:
        return bool(
            self.ids or self.status or self.query_type or self.kind or self.text or self.origin
        )


@dataclass
class Assigned:
    """What :func:`assign` did: tasks made per annotator (``""`` is the pool), and the items
    left out because they were handed out before."""

    tasks: dict[str, int] = field(default_factory=dict)
    items: int = 0
    already: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"items": self.items, "tasks": self.tasks, "already_assigned": self.already}


def queue_settings(project: Project) -> dict[str, Any]:
    """The queue's project settings with their defaults: ``blind`` (annotators do not see each
    other's copies until review) and ``lock_minutes`` (a pool reservation's length)."""
    return {
        "blind": bool(project.settings.get("blind")),
        "lock_minutes": int(project.settings.get("lock_minutes") or LOCK_MINUTES),
    }


def set_queue_settings(
    ws: Workspace,
    project: Project,
    *,
    blind: bool | None = None,
    lock_minutes: int | None = None,
    conn: sa.Connection | None = None,
) -> Project:
    """Change the queue settings given (None keeps one as it is)."""
    settings = dict(project.settings)
    if blind is not None:
        settings["blind"] = bool(blind)
    if lock_minutes is not None:
        if not 1 <= lock_minutes <= 24 * 60:
            raise InvalidInput(f"lock_minutes: give 1 to 1440 minutes, not {lock_minutes}")
        settings["lock_minutes"] = lock_minutes
    if settings == project.settings:
        return project
    return update_project_settings(ws, project, settings, conn=conn)


def chosen_items(
    ws: Workspace, project: Project, chosen: ItemFilter, *, conn: sa.Connection | None = None
) -> list[str]:
    """The gold items (never copies) ``chosen`` names, oldest first; an id that is not one
    of the project's items is refused, naming it."""
    if chosen.status and chosen.status not in STATUSES:
        raise InvalidInput(
            f"unknown status {chosen.status!r}; choose one of: {', '.join(STATUSES)}"
        )
    where: list[sa.ColumnElement[bool]] = [
        items.c.project_id == project.id,
        items.c.copy_of.is_(None),
    ]
    if chosen.ids:
        where.append(items.c.id.in_(list(chosen.ids)))
    if chosen.status:
        where.append(items.c.status == chosen.status)
    if chosen.query_type:
        where.append(items.c.query_type == chosen.query_type)
    if chosen.kind:
        where.append(items.c.kind == chosen.kind)
    if chosen.text.strip():
        text = chosen.text.strip().casefold()
        where.append(items.c.search_text.contains(text, autoescape=True))
    if chosen.origin:
        where.append(items.c.origin.startswith(chosen.origin, autoescape=True))
    with reading(ws.engine, conn) as reader:
        found = list(
            reader.scalars(
                sa.select(items.c.id).where(*where).order_by(items.c.created_at, items.c.id)
            )
        )
    missing = [i for i in dict.fromkeys(chosen.ids) if i not in set(found)]
    if missing and not (chosen.status or chosen.query_type or chosen.kind or chosen.text):
        raise InvalidInput(
            f"project {project.name!r} has no item {missing[0]!r} to assign "
            "(or it is an annotator's copy, which is never assigned)"
        )
    if chosen.ids:
        order = {item_id: n for n, item_id in enumerate(dict.fromkeys(chosen.ids))}
        found.sort(key=lambda i: order[i])
    return found


def check_assignees(
    ws: Workspace, project: Project, usernames: Sequence[str], *, conn: sa.Connection
) -> list[tuple[str, int]]:
    """``(username, account id)`` of each annotator named, once each. In team mode each
    must be a member whose role may edit items (not a viewer); in personal mode any account
    (the names annotators gave) will do."""
    team = team_mode(ws, conn=conn)
    checked: dict[str, int] = {}
    for name in usernames:
        name = name.strip()
        if not name or name in checked:
            continue
        account = get_account(ws, name, conn=conn)  # NotFound names the user
        if team:
            role = role_of(ws, project.id, account.id, conn=conn)
            if role is None:
                raise InvalidInput(
                    f"{name} is not a member of project {project.name!r}; add them on the "
                    "project's members panel first"
                )
            someone = Actor(account.id, account.username)
            if not decide(someone, "item.edit", role, own=True):
                raise InvalidInput(
                    f"{name} is a {role} in project {project.name!r} and may not edit items; "
                    "only owners, leads, reviewers and annotators get tasks"
                )
        checked[name] = account.id
    return list(checked.items())


def assign(
    ws: Workspace,
    project: Project,
    chosen: ItemFilter,
    annotators: Sequence[str],
    *,
    assigned_by: int,
    overlap: int = 1,
    method: str = "round-robin",
    conn: sa.Connection | None = None,
) -> Assigned:
    """Hand the items of ``chosen`` to ``annotators`` (user names; none: the shared pool),
    each item to ``overlap`` of them. One transaction: on any refusal nothing is assigned."""
    if method not in METHODS:
        raise InvalidInput(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
    if not chosen.given():
        raise InvalidInput("say which items to assign: ids, or a filter (status, type, text…)")
    if overlap < 1:
        raise InvalidInput(f"overlap must be 1 or more, not {overlap}")
    with transaction(ws.engine, conn) as conn:
        people = check_assignees(ws, project, annotators, conn=conn)
        if not people and overlap > 1:
            raise InvalidInput(
                "the shared pool hands each item to one person; name the annotators (--to) "
                f"for overlap {overlap}"
            )
        if people and overlap > len(people):
            raise InvalidInput(
                f"overlap {overlap} needs at least {overlap} annotators; "
                f"{len(people)} named ({', '.join(n for n, _ in people)})"
            )
        ids = chosen_items(ws, project, chosen, conn=conn)
        taken = _handed_out(conn, project, ids)
        report = Assigned(dict.fromkeys([n for n, _ in people], 0), 0, len(taken))
        todo = [i for i in ids if i not in taken]
        report.items = len(todo)
        if not people:
            _add_tasks(conn, project, [(i, None) for i in todo], assigned_by)
            report.tasks[""] = len(todo)
            return report
        load = _open_counts(conn, project, [a for _, a in people])
        plan: list[tuple[str, int | None]] = []
        for n, item_id in enumerate(todo):
            if method == "balanced":
                order = sorted(range(len(people)), key=lambda k: (load[people[k][1]], k))
                picked = order[:overlap]
            else:
                picked = [(n * overlap + j) % len(people) for j in range(overlap)]
            for k in picked:
                name, account_id = people[k]
                load[account_id] += 1
                report.tasks[name] = report.tasks.get(name, 0) + 1
                work_on = (
                    item_id
                    if overlap == 1
                    else copy_item(ws, project, item_id, account_id, conn=conn)
                )
                plan.append((work_on, account_id))
        _add_tasks(conn, project, plan, assigned_by)
        return report


def _handed_out(conn: sa.Connection, project: Project, ids: list[str]) -> set[str]:
    """Those of ``ids`` with an open or done annotate task on them or on one of their copies."""
    if not ids:
        return set()
    live = sa.and_(
        assignments.c.project_id == project.id,
        assignments.c.task == "annotate",
        assignments.c.state.in_(("open", "done")),
    )
    direct = sa.select(assignments.c.item_id).where(live, assignments.c.item_id.in_(ids))
    via_copy = (
        sa.select(items.c.copy_of)
        .join(assignments, assignments.c.item_id == items.c.id)
        .where(live, items.c.copy_of.in_(ids))
    )
    return set(conn.scalars(direct)) | set(conn.scalars(via_copy))


def _open_counts(conn: sa.Connection, project: Project, account_ids: list[int]) -> dict[int, int]:
    """Open annotate tasks per account (the balanced method gives to the least loaded)."""
    counts = dict.fromkeys(account_ids, 0)
    rows = conn.execute(
        sa.select(assignments.c.account_id, sa.func.count())
        .where(
            assignments.c.project_id == project.id,
            assignments.c.task == "annotate",
            assignments.c.state == "open",
            assignments.c.account_id.in_(account_ids),
        )
        .group_by(assignments.c.account_id)
    ).all()
    for account_id, count in rows:
        counts[account_id] = int(count)
    return counts


def _add_tasks(
    conn: sa.Connection,
    project: Project,
    plan: list[tuple[str, int | None]],
    assigned_by: int,
) -> None:
    """Write annotate tasks, each at the end of its queue (the pool's when no account)."""
    if not plan:
        return
    now = utcnow()
    last: dict[int | None, int] = {}
    rows = []
    for item_id, account_id in plan:
        if account_id not in last:
            last[account_id] = _last_position(conn, project, account_id)
        last[account_id] += 1
        rows.append(_task_row(project, item_id, account_id, last[account_id], assigned_by, now))
    conn.execute(assignments.insert(), rows)


def _last_position(conn: sa.Connection, project: Project, account_id: int | None) -> int:
    """The last place in the queue of ``account_id`` (None: the shared pool); 0 when empty."""
    owner = (
        assignments.c.account_id.is_(None)
        if account_id is None
        else assignments.c.account_id == account_id
    )
    last = conn.scalar(
        sa.select(sa.func.coalesce(sa.func.max(assignments.c.position), 0)).where(
            assignments.c.project_id == project.id, owner
        )
    )
    return int(last or 0)


def _task_row(
    project: Project,
    item_id: str,
    account_id: int | None,
    position: int,
    assigned_by: int,
    now: Any,
) -> dict[str, Any]:
    return {
        "project_id": project.id,
        "item_id": item_id,
        "task": "annotate",
        "account_id": account_id,
        "state": "open",
        "position": position,
        "reason": "",
        "holder_id": None,
        "locked_until": None,
        "assigned_by": assigned_by,
        "created_at": now,
        "updated_at": now,
        "done_at": None,
    }


def send_back_to_author(
    conn: sa.Connection, project: Project, item_id: str, rejected_by: int, now: Any
) -> None:
    """A rejected item nobody was given (its author wrote it unasked) becomes a task in its
    author's queue, so the reject comes back to them like an assigned one; an item with an
    annotate task already returns through that task."""
    handed_out = conn.scalar(
        sa.select(assignments.c.id)
        .where(assignments.c.item_id == item_id, assignments.c.task == "annotate")
        .limit(1)
    )
    author = conn.scalar(
        sa.select(items.c.author_id).where(items.c.id == item_id, items.c.project_id == project.id)
    )
    if handed_out is not None or author is None:
        return
    position = _last_position(conn, project, author) + 1
    conn.execute(
        assignments.insert().values(
            **_task_row(project, item_id, author, position, rejected_by, now)
        )
    )
