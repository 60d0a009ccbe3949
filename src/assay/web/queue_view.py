"""What the queue pages and the editors opened from a queue show: tasks as JSON, the URL that
opens a task, and the queue bar's data (``data.queue`` of the editor and the workbench)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import Request

from assay.people.access import check
from assay.people.accounts import account_by_id, get_account
from assay.records import Project, to_json
from assay.review.queue import open_task
from assay.review.tasks import Queue, Task, queue_of
from assay.store.workspace import Workspace
from assay.web.actors import actor_id, request_actor
from assay.web.i18n import Translator


def task_url(project: Project, task: Task) -> str:
    """The editor (or, for a conversation, the workbench) opened on the task's item."""
    section = "conversations" if task.kind == "conversation" else "items"
    item = quote(task.item_id)
    return f"/projects/{quote(project.name)}/{section}/{item}?task={task.id}"


def queue_url(project: Project) -> str:
    return f"/projects/{quote(project.name)}/queue"


def task_json(project: Project, task: Task) -> dict[str, Any]:
    return {**to_json(task), "pool": task.pool, "url": task_url(project, task)}


def queue_json(project: Project, user: str, queue: Queue) -> dict[str, Any]:
    return {
        "user": user,
        "done": queue.done,
        "total": queue.total,
        "open": len(queue.open),
        "skipped": len(queue.skipped),
        "pool_waiting": queue.pool,
        "tasks": [task_json(project, t) for t in queue.tasks],
    }


def queue_owner(request: Request, ws: Workspace, project: Project, user: str) -> tuple[str, int]:
    """Whose queue to show: the caller's, or with ``user`` someone else's (for those who
    may assign tasks)."""
    me = actor_id(request)
    if not user:
        return get_username(ws, me), me
    account = get_account(ws, user)
    if account.id != me:
        check(ws, request_actor(request), "item.assign", project)
    return account.username, account.id


def get_username(ws: Workspace, account_id: int) -> str:
    return account_by_id(ws, account_id).username


def queue_bar(
    request: Request, ws: Workspace, project: Project, task_id: int | None, t: Translator
) -> dict[str, Any] | None:
    """The queue bar's data for an editor opened from the queue (``?task=ID``): the task
    (reserved again when it is a pool task), "N of M done", where Submit and Skip go."""
    if task_id is None:
        return None
    me = actor_id(request)
    task = open_task(ws, project, task_id, me)
    queue = queue_of(ws, project, me)
    api = f"/api/projects/{quote(project.name)}/queue"
    return {
        "task": task.id,
        "done": queue.done,
        "total": queue.total,
        "progress": t("queue.progress", done=queue.done, total=queue.total),
        "returned": task.returned,
        "submit_url": f"{api}/{task.id}/submit",
        "skip_url": f"{api}/{task.id}/skip",
        "next_api": f"{api}/next",
        "queue_url": queue_url(project),
        "messages": {k: t(k) for k in t.fallback if k.startswith("queue.")},
    }
