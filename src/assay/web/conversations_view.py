"""What the conversation routes and pages show: the conversation with its editable form,
checks and document names; a 409 with both versions; the answer stream as NDJSON events.

Kept apart from the routes so they stay thin; everything here calls stage functions.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, StreamingResponse

from assay.corpus.documents import document_names
from assay.errors import NotFound
from assay.gold.conversations import conversation_checks
from assay.gold.item_lists import list_items
from assay.gold.items import StaleItem, editable_copy, editable_json, get_item
from assay.gold.turn_answers import answer_events, canonical_context, context_doc_id
from assay.records import Item, ItemSummary, Project, to_json
from assay.store.workspace import Workspace
from assay.transfer.project_export import ExportOptions, plan_export, write_export
from assay.web.actors import own_items_only
from assay.web.items_view import conflict_response


def get_conversation(ws: Workspace, project: Project, item_id: str) -> Item:
    """The item, or 404 when it is missing or not a conversation."""
    item = get_item(ws, project, item_id)
    if item.kind != "conversation":
        raise NotFound(f"item {item_id!r} in project {project.name!r} is not a conversation")
    return item


def findings(item: Item, project: Project) -> list[dict[str, Any]]:
    """The checks shown before export (one place, so the rules can change on their own)."""
    return [dataclasses.asdict(f) for f in conversation_checks(item, project)]


def payload(ws: Workspace, project: Project, item: Item) -> dict[str, Any]:
    """The conversation, its editable form (retrieved contexts in the current shape), the
    checks and every document name it shows."""
    data = editable_copy(item)
    for turn in data.turns:
        turn.retrieved = [canonical_context(r) for r in turn.retrieved]
    doc_ids = {d for t in data.turns for r in t.retrieved if (d := context_doc_id(r))}
    doc_ids |= {e.doc_id for t in item.turns for e in t.evidence if e.doc_id}
    return {
        "item": to_json(item),
        "input": editable_json(data),
        "findings": findings(item, project),
        "documents": document_names(ws, project, doc_ids),
    }


def conflict(request: Request, ws: Workspace, project: Project, exc: StaleItem) -> JSONResponse:
    """409 with the conversation as stored now, so the page can show both versions."""
    return conflict_response(request, exc, payload(ws, project, exc.current))


# ---------------------------------------------------------------- streaming answers


def _line(event: dict[str, Any]) -> bytes:
    return (json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8")


def answer_stream(
    ws: Workspace, project: Project, item: Item, index: int, source: str, actor: int, *, first: bool
) -> Iterator[bytes]:
    """NDJSON events: ``saved`` (the turn as stored before generating), the text deltas,
    then ``done`` or ``error`` with the stored conversation (see :mod:`assay.gold.turn_answers`)."""
    yield _line({"type": "saved", **payload(ws, project, item), "turn": index})
    for event in answer_events(ws, project, item, index, source=source, actor=actor, first=first):
        stored = event.pop("item", None)
        if stored is not None:
            event.update(payload(ws, project, stored), turn=index, first=first)
        yield _line(event)


def ndjson(events: Iterator[bytes]) -> StreamingResponse:
    """Stream the events unbuffered (no proxy or browser cache holds them back)."""
    return StreamingResponse(
        events,
        media_type="application/x-ndjson",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def listed_conversations(
    request: Request, ws: Workspace, project: Project, offset: int, limit: int
) -> tuple[int, list[ItemSummary]]:
    """A page of the conversations the caller may list (an annotator's own, see
    ``web.actors.own_items_only``), newest change first, and how many there are."""
    mine = own_items_only(request, project)
    return list_items(
        ws,
        project,
        kind="conversation",
        author_id=mine,
        copies="include" if mine is not None else "exclude",  # their own copies, or none
        offset=offset,
        limit=limit,
    )


def ragaphene_json(ws: Workspace, project: Project, item: Item) -> bytes:
    """One conversation as a RAGAPHENE JSON file, whatever its status; refused when its
    evidence needs review (its document changed), as every export leaves such items out."""
    options = ExportOptions("ragaphene", items=[item.id], strict=True)
    plan = plan_export(ws, project, options)
    with tempfile.TemporaryDirectory(prefix="assay-conversation-") as folder:
        path = Path(folder) / "conversation.json"
        write_export(ws, plan, path)
        return path.read_bytes()
