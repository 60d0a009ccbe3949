"""Comments on an item or a conversation: ``/api/projects/{name}/items/{item_id}/comments``.

Reading them is reading the item; adding, replying, resolving, editing and deleting are the
``comment.write`` action (the guard decides); only a comment's author edits or deletes it
(the local owner of personal mode may do everything). The editor's comments panel
(``static/comments.js``) is this API's page.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from assay.errors import InvalidInput
from assay.people.access import may
from assay.records import INT32, Comment, Offset, to_json
from assay.review.comments import (
    add_comment,
    comment_authors,
    delete_comment,
    edit_comment,
    list_comments,
    resolve_comment,
)
from assay.web.actors import actor_id, request_actor
from assay.web.render import open_project
from assay.web.state import workspace

router = APIRouter()


class CommentIn(BaseModel):
    """A new comment: general (``target`` "item"), anchored to characters ``start``-``end``
    of a turn's question, answer or passage (``evidence``: its number in the turn, from 0),
    or a reply (``parent_id``). ``quote`` is the selected text, checked against the stored
    text."""

    model_config = ConfigDict(extra="forbid")
    body: str = Field(max_length=20_000)
    target: str = "item"
    turn: Offset = None
    evidence: Offset = None
    start: Offset = None
    end: Offset = None
    quote: str | None = None
    parent_id: int | None = Field(None, ge=1, le=INT32)


class CommentChange(BaseModel):
    """``resolved``: resolve (true) or reopen (false) the thread; ``body``: new text (the
    author's own comment only)."""

    model_config = ConfigDict(extra="forbid")
    resolved: bool | None = None
    body: str | None = Field(None, max_length=20_000)


def _payload(request: Request, found: list[Comment], item_id: str) -> dict[str, Any]:
    me = actor_id(request)
    personal = request_actor(request).personal
    authors = comment_authors(workspace(request), item_id)
    return {
        "comments": [{**to_json(c), "mine": personal or authors.get(c.id) == me} for c in found],
    }


@router.get("/api/projects/{name}/items/{item_id}/comments", tags=["comments"])
def api_comments(request: Request, name: str, item_id: str) -> Any:
    """The item's comments, oldest first: each with its anchor as the text is now (``ok``,
    ``moved`` with the new offsets, ``outdated``), ``mine`` (the caller may edit it), and
    ``can_write`` (the caller may comment)."""
    ws, project = open_project(request, name)
    found = list_comments(ws, project, item_id)
    can_write = bool(may(ws, request_actor(request), "comment.write", project))
    return {**_payload(request, found, item_id), "can_write": can_write}


@router.post("/api/projects/{name}/items/{item_id}/comments", status_code=201, tags=["comments"])
def api_add_comment(request: Request, name: str, item_id: str, body: CommentIn) -> Any:
    """Add a comment or a reply; answers it as stored."""
    ws, project = open_project(request, name)
    made = add_comment(
        ws,
        project,
        item_id,
        body.body,
        author=actor_id(request),
        target=body.target,
        turn=body.turn,
        evidence=body.evidence,
        start=body.start,
        end=body.end,
        quote=body.quote,
        parent_id=body.parent_id,
    )
    return _payload(request, [made], item_id)["comments"][0]


@router.patch("/api/projects/{name}/items/{item_id}/comments/{comment_id}", tags=["comments"])
def api_change_comment(
    request: Request,
    name: str,
    item_id: str,
    body: CommentChange,
    comment_id: int = Path(ge=1, le=INT32),
) -> Any:
    """Resolve or reopen a thread, or edit one's own comment."""
    ws, project = open_project(request, name)
    if body.resolved is None and body.body is None:
        raise InvalidInput("send 'resolved' (true or false) or a new 'body'")
    me = actor_id(request)
    personal = request_actor(request).personal
    with ws.engine.begin() as conn:  # an edit and a resolve together: both or neither
        if body.body is not None:
            changed = edit_comment(
                ws, project, item_id, comment_id, body.body, actor=me, any_author=personal,
                conn=conn,
            )  # fmt: skip
        if body.resolved is not None:
            changed = resolve_comment(
                ws, project, item_id, comment_id, body.resolved, actor=me, conn=conn
            )
    return _payload(request, [changed], item_id)["comments"][0]


@router.delete(
    "/api/projects/{name}/items/{item_id}/comments/{comment_id}",
    status_code=204,
    tags=["comments"],
)
def api_delete_comment(
    request: Request, name: str, item_id: str, comment_id: int = Path(ge=1, le=INT32)
) -> Response:
    """Delete one's own comment (a thread's first comment takes its replies with it)."""
    ws, project = open_project(request, name)
    delete_comment(
        ws, project, item_id, comment_id, actor=actor_id(request),
        any_author=request_actor(request).personal,
    )  # fmt: skip
    return Response(status_code=204)
