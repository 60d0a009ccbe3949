"""The conversation pages: the list, and the workbench for a new or a stored conversation
(its data goes to static/conversation.js as JSON)."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from assay.gold.project_config import generator_settings, settings_view
from assay.gold.turn_answers import model_label
from assay.records import INT32, Item, Project
from assay.review.comments import open_comment_counts
from assay.store.workspace import Workspace
from assay.web.actors import may_edit_question
from assay.web.bounds import Offset
from assay.web.conversations_view import get_conversation, listed_conversations, payload
from assay.web.queue_view import queue_bar
from assay.web.render import open_project, read_only_why, render, translator

router = APIRouter()


@router.get("/projects/{name}/conversations", response_class=HTMLResponse, include_in_schema=False)
def conversations_page(request: Request, name: str, offset: Offset = 0) -> HTMLResponse:
    ws, project = open_project(request, name)
    total, rows = listed_conversations(request, ws, project, offset, 50)
    return render(
        request,
        "conversations.html",
        project=project,
        section="conversations",
        rows=rows,
        total=total,
        offset=offset,
        comment_counts=open_comment_counts(ws, project, [row.id for row in rows]),
    )


@router.get(
    "/projects/{name}/conversations/new", response_class=HTMLResponse, include_in_schema=False
)
def new_conversation_page(request: Request, name: str) -> HTMLResponse:
    ws, project = open_project(request, name)
    return _workbench(request, ws, project, None)


@router.get(
    "/projects/{name}/conversations/{item_id}",
    response_class=HTMLResponse,
    include_in_schema=False,
)
def conversation_page(
    request: Request, name: str, item_id: str, task: int | None = Query(None, ge=1, le=INT32)
) -> HTMLResponse:
    """The workbench; ``task``: the queue task it was opened for (Submit opens the next)."""
    ws, project = open_project(request, name)
    item = get_conversation(ws, project, item_id)
    return _workbench(request, ws, project, item, task)


def _workbench(
    request: Request, ws: Workspace, project: Project, item: Item | None, task: int | None = None
) -> HTMLResponse:
    t = translator(request)
    shown = payload(ws, project, item) if item else {"findings": [], "documents": {}}
    settings = settings_view(project)
    question_locked = item is not None and not may_edit_question(request, project, item)
    data = {
        "project": project.name,
        "question_locked": question_locked,
        "item": shown.get("item"),
        "input": shown.get("input"),
        "findings": shown["findings"],
        "documents": shown["documents"],
        "settings": settings,
        "generator_label": model_label(generator_settings(project)),
        "export_url": (
            f"/api/projects/{quote(project.name)}/conversations/{quote(item.id)}/ragaphene"
            if item
            else f"/projects/{quote(project.name)}/transfer?format=ragaphene"
        ),
        "list_url": f"/projects/{quote(project.name)}/conversations",
        "messages": {
            k: t(k)
            for k in t.fallback
            if k.startswith(("conv.", "status.", "items.label.", "items.select."))
        },
        "queue": queue_bar(request, ws, project, task, t),
    }
    return render(
        request,
        "conversation.html",
        project=project,
        section="conversations",
        item=item,
        data=data,
        settings=settings,
        question_locked=question_locked,
        read_only=read_only_why(request, project, item.id) if item is not None else "",
    )
