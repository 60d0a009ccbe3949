"""Working a queue: take the next task, keep a pool task reserved, submit, skip.

A task of the shared pool is reserved by whoever takes it first, with a conditional UPDATE
that only succeeds while nobody else holds it (or their reservation ran out), so two people
never get the same task, on SQLite as on PostgreSQL. Opening the task or autosaving it
renews the reservation. Whoever lost a task that someone else then took, and submits it
anyway, gets a clear refusal, and their work is kept as their own copy of the item,
submitted, for adjudication.
"""

from __future__ import annotations

import functools
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from assay.errors import Conflict, Forbidden, InvalidInput
from assay.gold.items import editable_json, get_item, save_item, set_status, submit_item
from assay.records import Item, Project
from assay.review.assignments import queue_settings
from assay.review.copies import copy_item
from assay.review.tasks import OPEN_STATUSES, Task, free_in_pool, get_task, queue_of
from assay.store.db import as_utc, reading, transaction, utcnow
from assay.store.review_schema import assignments
from assay.store.schema import items
from assay.store.workspace import Workspace


class TaskTaken(Conflict):
    """Someone else took the task after the caller's reservation ran out; ``kept`` is the id
    of the caller's own copy holding their work (None when there was nothing to keep)."""

    def __init__(
        self, message: str, kept: str | None = None, *, key: str | None = None, **params: object
    ) -> None:
        super().__init__(message, key=key, **params)
        self.kept = kept


def _until(project: Project) -> datetime:
    return utcnow() + timedelta(minutes=queue_settings(project)["lock_minutes"])


def _reserve(conn: sa.Connection, project: Project, task_id: int, account_id: int) -> bool:
    """Take or renew the reservation of pool task ``task_id`` for the account: one
    conditional UPDATE, so of two people racing for a task exactly one gets it."""
    now = utcnow()
    changed = conn.execute(
        assignments.update()
        .where(
            assignments.c.id == task_id,
            assignments.c.account_id.is_(None),
            assignments.c.state != "skipped",  # done: sent back by a reviewer
            sa.or_(
                assignments.c.holder_id == account_id,
                assignments.c.holder_id.is_(None),
                assignments.c.locked_until < now,
            ),
        )
        .values(holder_id=account_id, locked_until=_until(project), updated_at=now)
    ).rowcount
    return changed == 1


def next_task(
    ws: Workspace, project: Project, account_id: int, *, conn: sa.Connection | None = None
) -> Task | None:
    """The account's next open task (sent-back ones first, then in queue order, then pool
    tasks it holds), else one taken from the pool; None when there is nothing to do."""
    with transaction(ws.engine, conn) as conn:
        mine = queue_of(ws, project, account_id, conn=conn).open
        for task in mine:
            if not task.pool or _reserve(conn, project, task.id, account_id):
                return get_task(conn, project, task.id)
        candidates = conn.scalars(
            sa.select(assignments.c.id)
            .join(items, items.c.id == assignments.c.item_id)
            .where(
                assignments.c.project_id == project.id,
                assignments.c.task == "annotate",
                free_in_pool(utcnow()),
                items.c.status.in_(OPEN_STATUSES),
            )
            .order_by(assignments.c.position, assignments.c.id)
            .limit(50)
        ).all()
        for task_id in candidates:
            if _reserve(conn, project, task_id, account_id):
                return get_task(conn, project, task_id)
        return None


def open_task(ws: Workspace, project: Project, task_id: int, account_id: int) -> Task:
    """The task as its annotator opens it: a pool task is reserved (again) for them;
    refused when it is someone else's."""
    with transaction(ws.engine, None) as conn:
        task = get_task(conn, project, task_id)
        _claim(conn, project, task, account_id)
        return get_task(conn, project, task_id)


def _claim(conn: sa.Connection, project: Project, task: Task, account_id: int) -> None:
    """Make sure ``task`` is the account's to work on: its own, or a pool task it may hold
    (reserved now); else Forbidden (someone else's queue) or TaskTaken (the pool's, held
    by someone else)."""
    owner = conn.scalar(sa.select(assignments.c.account_id).where(assignments.c.id == task.id))
    if owner is not None:
        if owner != account_id:
            raise Forbidden(
                f"task {task.id} is in {task.account}'s queue, not yours",
                key="raised.task_in_other_queue",
                task_id=task.id,
                account=task.account,
            )
        return
    if not _reserve(conn, project, task.id, account_id):
        raise TaskTaken(
            f"{task.holder} took task {task.id} from the pool",
            key="raised.task_taken",
            holder=task.holder,
            task_id=task.id,
        )


def keep_hold(
    ws: Workspace,
    project: Project,
    item_id: str,
    account_id: int,
    *,
    conn: sa.Connection | None = None,
) -> None:
    """Before a save of ``item_id``: renew the account's reservation of the pool task on it;
    TaskTaken (409) when someone else holds it now, so a lost reservation never overwrites
    the new holder's work. ``conn``: in the save's transaction."""
    with reading(ws.engine, conn) as reader:  # most saves are of items in no pool: no write
        tasks = reader.execute(_item_tasks_read(), {"item_id": item_id}).all()
    held = [t.id for t in tasks if _held(t, project.id)]
    if not held:
        return
    with transaction(ws.engine, conn) as conn:
        rows = conn.execute(
            sa.select(assignments.c.id, assignments.c.holder_id).where(
                assignments.c.id.in_(held), *_held_pool_task(project.id, item_id)
            )
        ).all()
        for task_id, holder in rows:
            if holder == account_id:
                _reserve(conn, project, task_id, account_id)
            elif not _reserve_free(conn, task_id):
                task = get_task(conn, project, task_id)
                until = f"{task.locked_until:%H:%M} UTC" if task.locked_until else "now"
                raise TaskTaken(
                    f"{task.holder} took task {task_id} (item {item_id}) from the pool and holds "
                    f"it until {until}; this save was not stored"
                )


@functools.cache
def _item_tasks_read() -> sa.Select[Any]:
    """The tasks on one item, read before every save by the item's index alone (SQLite,
    given the project and the task's kind as well, walked every open pool task of the
    project): built once per process (bound parameter)."""
    return sa.select(
        assignments.c.id,
        assignments.c.project_id,
        assignments.c.task,
        assignments.c.account_id,
        assignments.c.state,
        assignments.c.holder_id,
    ).where(assignments.c.item_id == sa.bindparam("item_id", type_=sa.String))


def _held(task: Any, project_id: int) -> bool:
    """Whether a row of :func:`_item_tasks_read` is what :func:`_held_pool_task` finds."""
    open_pool_task = task.task == "annotate" and task.account_id is None and task.state == "open"
    return task.project_id == project_id and open_pool_task and task.holder_id is not None


def _held_pool_task(project_id: Any, item_id: Any) -> list[sa.ColumnElement[bool]]:
    """The open pool task on ``item_id`` that someone holds (or held)."""
    return [
        assignments.c.project_id == project_id,
        assignments.c.item_id == item_id,
        assignments.c.task == "annotate",
        assignments.c.account_id.is_(None),
        assignments.c.state == "open",
        assignments.c.holder_id.is_not(None),
    ]


def _reserve_free(conn: sa.Connection, task_id: int) -> bool:
    """Whether the pool task's holder lost their reservation (anyone may save then)."""
    until = conn.scalar(sa.select(assignments.c.locked_until).where(assignments.c.id == task_id))
    return until is None or as_utc(until) < utcnow()


def submit_task(
    ws: Workspace,
    project: Project,
    task_id: int,
    account_id: int,
    base_version: int,
    content: Item | None = None,
) -> Item:
    """Save ``content`` (when given and changed) and submit the task's item, as one
    transaction; the task is then done. When someone else took the pool task meanwhile:
    TaskTaken, and the caller's work is kept as their own copy, submitted."""
    try:
        with transaction(ws.engine, None) as conn:
            task = get_task(conn, project, task_id)
            _claim(conn, project, task, account_id)
            version = base_version
            if content is not None:
                stored = get_item(ws, project, task.item_id, conn=conn)
                if editable_json(stored) != editable_json(content):
                    saved = save_item(
                        ws, project, task.item_id, content, base_version,
                        author=account_id, conn=conn,
                    )  # fmt: skip
                    version = saved.version
            item = submit_item(ws, project, task.item_id, version, actor=account_id, conn=conn)
            now = utcnow()
            conn.execute(
                assignments.update()
                .where(assignments.c.id == task_id)
                .values(state="done", locked_until=None, done_at=now, updated_at=now)
            )
            return item
    except TaskTaken as taken:
        kept = keep_as_copy(ws, project, task_id, account_id, content)
        raise TaskTaken(
            f"{taken} after your reservation ran out, so it is theirs now. Your work is kept "
            f"as your own version (item {kept}, submitted) for adjudication",
            kept,
        ) from None


def keep_as_copy(
    ws: Workspace, project: Project, task_id: int, account_id: int, content: Item | None
) -> str:
    """The account's own copy of the task's gold item holding ``content`` (else the item as
    it is), submitted without the completeness checks: nothing they wrote is lost."""
    with transaction(ws.engine, None) as conn:
        task = get_task(conn, project, task_id)
        copy_id = copy_item(ws, project, task.original_id, account_id, conn=conn)
        if content is not None:
            save_item(ws, project, copy_id, content, 1, author=account_id, action="kept", conn=conn)
        version = get_item(ws, project, copy_id, conn=conn).version
        set_status(ws, project, copy_id, "submitted", version, actor=account_id, conn=conn)
        return copy_id


def skip_task(ws: Workspace, project: Project, task_id: int, account_id: int, reason: str) -> Task:
    """Skip a task of the account's, saying why (the lead sees the reason)."""
    reason = reason.strip()
    if not reason:
        raise InvalidInput("say why you skip this task (the lead reads the reason)")
    if len(reason) > 2000:
        raise InvalidInput("keep the reason to 2000 characters")
    with transaction(ws.engine, None) as conn:
        task = get_task(conn, project, task_id)
        _claim(conn, project, task, account_id)
        conn.execute(
            assignments.update()
            .where(assignments.c.id == task_id)
            .values(state="skipped", reason=reason, locked_until=None, updated_at=utcnow())
        )
        return get_task(conn, project, task_id)
