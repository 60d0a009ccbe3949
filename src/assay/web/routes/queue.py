"""Assignment and queues: an annotator's queue (``/projects/{name}/queue``) and the lead's
assignment page (``/projects/{name}/assignments``), with their JSON twins."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.gold.items import ItemBody, StaleItem, get_item
from assay.people.members import list_members
from assay.records import INT32, STATUSES, Item, Project
from assay.review.assignments import ItemFilter, assign, queue_settings, set_queue_settings
from assay.review.queue import TaskTaken, next_task, skip_task, submit_task
from assay.review.tasks import overview, queue_of, read_task
from assay.store.workspace import Workspace
from assay.web.actors import actor_id, check_question_edit
from assay.web.bounds import Storable
from assay.web.i18n import said
from assay.web.items_view import conflict_response, item_payload, type_options
from assay.web.queue_view import queue_json, queue_owner, queue_url, task_json, task_url
from assay.web.render import language, open_project, render, translator

router = APIRouter()

TaskId = Annotated[int, Path(ge=1, le=INT32, description="the task's id (its queue lists it)")]


class Submit(BaseModel):
    """Submit a task: the item's content as the editor has it (saved first when it differs
    from what is stored) and the version it was read at."""

    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1, le=INT32)
    item: ItemBody | None = None


class Skip(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str = Field(max_length=2000)


class AssignIn(BaseModel):
    """Hand out items: by ``ids`` or a filter, to ``to`` (user names; empty: the shared
    pool), each to ``overlap`` annotators. ``blind`` and ``lock_minutes``, when given,
    change the project's queue settings."""

    model_config = ConfigDict(extra="forbid")
    to: list[Storable] = Field(default_factory=list, max_length=500)
    ids: list[Storable] = Field(default_factory=list, max_length=100_000)
    status: Storable = ""
    query_type: Storable = ""
    kind: Storable = ""
    text: Storable = Field("", max_length=500)
    origin: Storable = Field("", max_length=50)
    overlap: int = Field(1, ge=1, le=50)
    method: Literal["round-robin", "balanced"] = "round-robin"
    blind: bool | None = None
    lock_minutes: int | None = Field(None, ge=1, le=1440)


# ---------------------------------------------------------------- JSON API


@router.get("/api/projects/{name}/queue", tags=["queue"])
def api_queue(request: Request, name: str, user: str = "") -> Any:
    """A queue's tasks (open first, then done, then skipped) and "done of total"; ``user``:
    someone else's queue (for those who may assign)."""
    ws, project = open_project(request, name)
    username, account_id = queue_owner(request, ws, project, user)
    return queue_json(project, username, queue_of(ws, project, account_id))


@router.post("/api/projects/{name}/queue/next", tags=["queue"])
def api_next_task(request: Request, name: str) -> Any:
    """Take the next task (reserving one from the shared pool when the caller's own queue is
    empty): the task and the URL that opens it; no task: the queue page's URL."""
    ws, project = open_project(request, name)
    task = next_task(ws, project, actor_id(request))
    if task is None:
        return {"task": None, "url": queue_url(project)}
    return {"task": task_json(project, task), "url": task_url(project, task)}


@router.post("/api/projects/{name}/queue/{task_id}/submit", tags=["queue"])
def api_submit_task(request: Request, name: str, task_id: TaskId, body: Submit) -> Any:
    """Save and submit the task's item, then take the next task: the item and ``next_url``.
    409 when someone else took the task after the caller's reservation ran out (their work
    is then kept as their own version, ``kept``), or the item changed meanwhile."""
    ws, project = open_project(request, name)
    me = actor_id(request)
    content: Item | None = body.item
    if content is not None:
        stored = get_item(ws, project, read_task(ws, project, task_id).item_id)
        check_question_edit(request, project, stored, content)
    try:
        item = submit_task(ws, project, task_id, me, body.version, content)
    except TaskTaken as taken:
        return JSONResponse(
            {"detail": said(taken, translator(request)), "kept": taken.kept}, status_code=409
        )
    except StaleItem as exc:
        return conflict_response(request, exc, item_payload(ws, project, exc.current))
    return {**item_payload(ws, project, item), "next_url": _next_url(ws, project, me)}


def _next_url(ws: Workspace, project: Project, account_id: int) -> str:
    """Where an editor goes after a submit or skip: the next task (taken now), else the
    queue page."""
    following = next_task(ws, project, account_id)
    return task_url(project, following) if following else queue_url(project)


@router.post("/api/projects/{name}/queue/{task_id}/skip", tags=["queue"])
def api_skip_task(request: Request, name: str, task_id: TaskId, body: Skip) -> Any:
    """Skip a task, saying why (the lead sees the reason); then take the next one."""
    ws, project = open_project(request, name)
    me = actor_id(request)
    task = skip_task(ws, project, task_id, me, body.reason)
    return {"task": task_json(project, task), "next_url": _next_url(ws, project, me)}


@router.get("/api/projects/{name}/assignments", tags=["queue"])
def api_assignments(request: Request, name: str) -> Any:
    """Per annotator (the shared pool under ``""``) how many tasks are open, done and
    skipped; the skipped tasks with their reasons; the queue settings."""
    ws, project = open_project(request, name)
    return {**overview(ws, project), "settings": queue_settings(project)}


@router.post("/api/projects/{name}/assignments", status_code=201, tags=["queue"])
def api_assign(request: Request, name: str, body: AssignIn) -> Any:
    """Assign items (see AssignIn); refused as a whole, naming the problem, when an
    annotator is unknown, not a member or a viewer, or the overlap is larger than the
    number of annotators."""
    ws, project = open_project(request, name)
    chosen = ItemFilter(
        ids=body.ids, status=body.status, query_type=body.query_type, kind=body.kind,
        text=body.text, origin=body.origin,
    )  # fmt: skip
    with ws.engine.begin() as conn:
        project = set_queue_settings(
            ws, project, blind=body.blind, lock_minutes=body.lock_minutes, conn=conn
        )
        report = assign(
            ws, project, chosen, body.to, assigned_by=actor_id(request),
            overlap=body.overlap, method=body.method, conn=conn,
        )  # fmt: skip
    return {**report.as_json(), **overview(ws, project), "settings": queue_settings(project)}


# ---------------------------------------------------------------- pages


@router.get("/projects/{name}/queue", response_class=HTMLResponse, include_in_schema=False)
def queue_page(request: Request, name: str, user: str = "") -> HTMLResponse:
    ws, project = open_project(request, name)
    username, account_id = queue_owner(request, ws, project, user)
    queue = queue_of(ws, project, account_id)
    return render(
        request,
        "queue.html",
        project=project,
        section="queue",
        queue=queue,
        user=username,
        mine=account_id == actor_id(request),
        task_url=lambda task: task_url(project, task),
    )


@router.get("/projects/{name}/assignments", response_class=HTMLResponse, include_in_schema=False)
def assignments_page(request: Request, name: str) -> HTMLResponse:
    ws, project = open_project(request, name)
    members = [m for m in list_members(ws, project.id) if m.role != "viewer" and not m.disabled]
    return render(
        request,
        "assignments.html",
        project=project,
        section="assignments",
        members=members,
        view=overview(ws, project),
        settings=queue_settings(project),
        statuses=STATUSES,
        types=type_options(project, language(request)),
    )
