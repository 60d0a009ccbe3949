"""Review: verdicts on submitted items and the review queue, as pages and JSON.

``POST /api/projects/{name}/items/{id}/review`` records a verdict on the version the reviewer
read; a verdict on a version that is no longer current answers 409 with the item as it is
(``current``), so a second reviewer accepting at the same moment learns who was first and
nothing is lost. The rules are :mod:`assay.review.reviews` and
:mod:`assay.review.review_queue`; the item editor and the conversation workbench show the
verdict buttons from ``_item_review.html`` and ``static/review.js``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.gold.items import ItemBody, get_item
from assay.records import INT32, Project, to_json
from assay.review.review_queue import (
    RESERVATION,
    next_review,
    review_progress,
    skip_review,
    waiting_items,
)
from assay.review.reviews import (
    ReviewedMeanwhile,
    check_reviewer,
    item_reviews,
    may_review_own,
    pending_changes,
    review_item,
    review_refusal,
)
from assay.store.workspace import Workspace
from assay.web.actors import actor_id, check_question_edit, request_actor
from assay.web.i18n import said
from assay.web.items_view import conflict_response, item_payload
from assay.web.render import open_project, render, translator

router = APIRouter()


class ReviewIn(BaseModel):
    """A verdict on the version the reviewer read: ``accept``, ``accept_edited`` (the item
    differs from what was submitted: the reviewer's saved edits, or ``edits`` sent here) or
    ``reject`` (``reason`` required)."""

    model_config = ConfigDict(extra="forbid")
    verdict: str = Field(max_length=20)
    version: int = Field(ge=1, le=INT32)
    reason: str = Field(default="", max_length=20_000)
    edits: ItemBody | None = None


class SkipIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str = Field(default="", max_length=2_000)


def _editor_url(project: Project, item_id: str, kind: str) -> str:
    where = "conversations" if kind == "conversation" else "items"
    return f"/projects/{quote(project.name)}/{where}/{quote(item_id)}"


def _queue(request: Request, ws: Workspace, project: Project) -> dict[str, Any]:
    """The queue as the page and its JSON twin show it: progress, how long a reservation
    lasts, then the waiting items."""
    progress = review_progress(ws, project, actor_id(request))
    rows = waiting_items(ws, project)
    return {
        "progress": to_json(progress),
        "minutes": int(RESERVATION.total_seconds() // 60),
        "items": [{**to_json(r), "url": _editor_url(project, r.id, r.kind)} for r in rows],
    }


# ---------------------------------------------------------------- JSON API


@router.post("/api/projects/{name}/items/{item_id}/review", tags=["review"])
def api_review(request: Request, name: str, item_id: str, body: ReviewIn) -> Any:
    """Accept, accept with edits, or reject (with a reason) a submitted item; answers the
    review and the item as it is now. 409 when the item changed after ``version`` (another
    reviewer was first): nothing is recorded."""
    ws, project = open_project(request, name)
    check_reviewer(ws, request_actor(request), project, item_id)
    if body.edits is not None:
        check_question_edit(request, project, get_item(ws, project, item_id), body.edits)
    try:
        review = review_item(
            ws,
            project,
            item_id,
            body.verdict,
            body.version,
            reviewer=actor_id(request),
            reason=body.reason,
            edits=body.edits,
        )
    except ReviewedMeanwhile as exc:
        return conflict_response(request, exc, item_payload(ws, project, exc.current))
    item = get_item(ws, project, item_id)
    return {"review": to_json(review), **item_payload(ws, project, item)}


@router.get("/api/projects/{name}/items/{item_id}/reviews", tags=["review"])
def api_item_reviews(request: Request, name: str, item_id: str) -> Any:
    """The item's verdicts (oldest first), what an accept now would record as changed
    (``pending``), and whether the caller may review it now (``refusal`` says why not)."""
    ws, project = open_project(request, name)
    item = get_item(ws, project, item_id)
    refused = review_refusal(ws, request_actor(request), project, item)
    return {
        "reviews": to_json(item_reviews(ws, project, item_id)),
        "pending": pending_changes(ws, project, item_id),
        "refusal": said(refused, translator(request)) if refused else "",
        "version": item.version,
        "status": item.status,
        "progress": to_json(review_progress(ws, project, actor_id(request))),
    }


@router.get("/api/projects/{name}/review-queue", tags=["review"])
def api_review_queue(request: Request, name: str) -> Any:
    """The review queue: "N of M reviewed" (``progress``) and the submitted items waiting,
    oldest first, with who holds each."""
    ws, project = open_project(request, name)
    return _queue(request, ws, project)


@router.post("/api/projects/{name}/review-queue/next", tags=["review"])
def api_next_review(request: Request, name: str) -> Any:
    """Reserve the next item for the caller (the one they hold, if any) and answer its id
    and editor address; ``item`` null when nothing waits for them."""
    ws, project = open_project(request, name)
    own = may_review_own(ws, request_actor(request), project)
    item_id = next_review(ws, project, actor_id(request), include_own=own)
    progress = to_json(review_progress(ws, project, actor_id(request)))
    if item_id is None:
        return {"item": None, "url": None, "progress": progress}
    kind = get_item(ws, project, item_id).kind
    return {"item": item_id, "url": _editor_url(project, item_id, kind), "progress": progress}


@router.post("/api/projects/{name}/review-queue/{item_id}/skip", tags=["review"])
def api_skip_review(request: Request, name: str, item_id: str, body: SkipIn) -> Any:
    """Give the item back to the queue; it is not offered to the caller again until it
    changes."""
    ws, project = open_project(request, name)
    get_item(ws, project, item_id)  # 404 for an unknown item
    skip_review(ws, project, item_id, actor_id(request), body.reason)
    return {"skipped": item_id}


# ---------------------------------------------------------------- pages


@router.get("/projects/{name}/review", response_class=HTMLResponse, include_in_schema=False)
def review_page(request: Request, name: str) -> HTMLResponse:
    """The review queue: "N of M reviewed", Start review, and the items waiting."""
    ws, project = open_project(request, name)
    queue = _queue(request, ws, project)
    return render(request, "review_queue.html", project=project, section="review", queue=queue)
