"""An item's history page and its JSON twin, and restoring an earlier version
(``/projects/{name}/items/{item_id}/history``, ``/api/.../history``, ``/api/.../restore``).

Single-turn items and conversations alike: both are items. A restore carries the version the
page read; a stale one answers 409 with the stored item, as a stale save does.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.errors import NotFound
from assay.gold.items import StaleItem, get_item
from assay.records import INT32, Item, to_json
from assay.review.history import (
    Change,
    HistoryEntry,
    item_history,
    restore_version,
    status_history,
)
from assay.web.actors import actor_id, check_question_edit
from assay.web.items_view import conflict_response, item_payload
from assay.web.render import open_project, render

router = APIRouter()


class Restore(BaseModel):
    """Bring back the content event ``event`` left, on top of the version the page read."""

    model_config = ConfigDict(extra="forbid")
    event: int = Field(ge=1, le=INT32)  # events.id is a 32-bit integer on PostgreSQL
    version: int = Field(ge=1, le=INT32)


@router.get("/api/projects/{name}/items/{item_id}/history", tags=["items"])
def api_history(request: Request, name: str, item_id: str) -> Any:
    """Every event of the item, oldest first, with the fields it changed
    (``changes: [{field, turn, change, before, after}]``), and the status changes alone."""
    ws, project = open_project(request, name)
    entries = item_history(ws, project, item_id)
    return {"events": to_json(entries), "status_history": to_json(status_history(entries))}


@router.post("/api/projects/{name}/items/{item_id}/restore", tags=["items"])
def api_restore(request: Request, name: str, item_id: str, body: Restore) -> Any:
    """Save the content of an earlier event as the item's next version (action
    ``restore``); the status stays. 409 with the stored item when ``version`` is stale."""
    ws, project = open_project(request, name)

    def question_rule(stored: Item, restored: Item) -> None:
        check_question_edit(request, project, stored, restored)

    try:
        item = restore_version(
            ws,
            project,
            item_id,
            body.event,
            body.version,
            author=actor_id(request),
            check=question_rule,
        )
    except StaleItem as exc:
        return conflict_response(request, exc, item_payload(ws, project, exc.current))
    return item_payload(ws, project, item)


@router.get(
    "/projects/{name}/items/{item_id}/history",
    response_class=HTMLResponse,
    include_in_schema=False,
)
def history_page(request: Request, name: str, item_id: str) -> HTMLResponse:
    ws, project = open_project(request, name)
    entries = item_history(ws, project, item_id)
    try:
        item: Item | None = get_item(ws, project, item_id)
    except NotFound:  # deleted: its history stays readable
        item = None
    kind = item.kind if item else "qa"
    section = "conversations" if kind == "conversation" else "items"
    base = f"/projects/{quote(project.name)}/{section}"
    latest = max((e.event for e in entries if e.restorable), default=0)
    return render(
        request,
        "history.html",
        project=project,
        section=section,
        item=item,
        item_id=item_id,
        editor_url=f"{base}/{quote(item_id)}" if item else "",
        entries=[_shown(e, latest) for e in reversed(entries)],
        data={
            "restore": f"/api/projects/{quote(project.name)}/items/{quote(item_id)}/restore",
            "version": item.version if item else 0,
        },
    )


def _shown(entry: HistoryEntry, latest: int) -> dict[str, Any]:
    """An entry as the page lists it: each change with its values as short texts."""
    return {
        "event": entry.event,
        "at": entry.at.strftime("%Y-%m-%d %H:%M:%S"),
        "actor": entry.actor,
        "action": entry.action,
        "restorable": entry.restorable and entry.event != latest,
        "current": entry.event == latest,
        "changes": [shown_change(c) for c in entry.changes],
    }


def shown_change(change: Change) -> dict[str, Any]:
    """A change as pages show it: its values as short texts (:func:`shown_value`)."""
    return {
        "field": change.field,
        "turn": change.turn,
        "change": change.change,
        "before": shown_value(change.field, change.before),
        "after": shown_value(change.field, change.after),
    }


def shown_value(field: str, value: Any) -> str:
    """A value as one line of text (evidence: its label and passage)."""
    if value is None or value == "" or value == [] or value == {}:
        return ""
    if field == "evidence" and isinstance(value, dict):
        label = value.get("label") or ""
        group = f" ({value['group']})" if value.get("group") is not None else ""
        text = value.get("text") or ""
        return f"{label}{group}: {text}" if text else f"{label}{group}"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " · ".join(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
