"""The conversation workbench: chat with the project's RAG system and repair it, turn by turn.

A conversation is an item of kind ``conversation``; each turn holds the user's question, the
contexts retrieved for it, the answer as generated (``original_answer``) and as edited
(``answer``), relevance labels as evidence, enrichments and a standalone rewrite.

Sending a turn stores the question and its retrieved contexts first, then streams the answer
as newline-delimited JSON events (``saved``, ``delta``…, then ``done`` or ``error``). Only a
finished answer is stored. Regenerating a turn that has an answer streams a *draft* kept
beside it, which the person takes or discards; a failed generation changes nothing
(:mod:`assay.gold.turn_answers` holds the rules).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.errors import InvalidInput, NotFound
from assay.gold.conversations import conversation_checks
from assay.gold.items import (
    ItemIn,
    StaleItem,
    TurnIn,
    create_item,
    get_item,
    item_input,
    list_items,
    save_item,
)
from assay.gold.project_config import (
    generator_settings,
    settings_view,
    update_settings,
)
from assay.gold.turn_answers import (
    answer_events,
    canonical_context,
    context_doc_id,
    discard_draft,
    model_label,
    question_text,
    retrieve,
    take_draft,
)
from assay.metrics.overlap import covered_spans, passage_score, sentence_overlaps
from assay.metrics.support import annotate_support
from assay.records import Item, Project, to_json
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.web.bounds import Offset
from assay.web.items_view import document_names
from assay.web.render import author, render, translator, workspace

router = APIRouter()


class TurnSend(BaseModel):
    """A new user turn: the question, an optional standalone rewrite, retriever overrides."""

    model_config = ConfigDict(extra="forbid")
    version: int | None = Field(default=None, ge=1)
    query: str = Field(min_length=1, max_length=20_000)
    rewrite: str = Field(default="", max_length=20_000)
    retriever: dict[str, Any] | None = None

    def cleaned(self) -> tuple[str, str]:
        """The question and rewrite as stored; 422 for a question with nothing visible."""
        rewrite = question_text(self.rewrite, "rewrite") if self.rewrite.strip() else ""
        return question_text(self.query), rewrite


class Regenerate(BaseModel):
    """Answer a turn again: from the passages marked relevant, or from all retrieved ones."""

    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1)
    source: str = Field(default="relevant", pattern="^(relevant|retrieved)$")


class DraftAction(BaseModel):
    """Take or discard a turn's draft answer, from the version the page shows."""

    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1)


class ConversationSave(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1)
    item: ItemIn


class OverlapIn(BaseModel):
    """An answer and the passages to compare it with; ``support_from`` picks the passages
    the support score uses (all when empty)."""

    model_config = ConfigDict(extra="forbid")
    answer: str = Field(max_length=100_000)
    passages: list[str] = Field(max_length=200)
    support_from: list[int] = Field(default_factory=list)


class SettingsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    generator: dict[str, Any] | None = None
    retriever: dict[str, Any] | None = None
    enrichments: dict[str, list[str]] | None = None


def _open(request: Request, name: str) -> tuple[Workspace, Project]:
    ws = workspace(request)
    return ws, get_project(ws, name)


def _conversation(ws: Workspace, project: Project, item_id: str) -> Item:
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
    data = item_input(item)
    for turn in data.turns:
        turn.retrieved = [canonical_context(r) for r in turn.retrieved]
    doc_ids = {d for t in data.turns for r in t.retrieved if (d := context_doc_id(r))}
    doc_ids |= {e.doc_id for t in item.turns for e in t.evidence if e.doc_id}
    return {
        "item": to_json(item),
        "input": data.model_dump(),
        "findings": findings(item, project),
        "documents": document_names(ws, project, doc_ids),
    }


def _conflict(ws: Workspace, project: Project, exc: StaleItem) -> JSONResponse:
    body = {"detail": str(exc), **payload(ws, project, exc.current)}
    body["current"] = body.pop("item")
    body["current_input"] = body.pop("input")
    return JSONResponse(body, status_code=409)


# ---------------------------------------------------------------- streaming answers


def _line(event: dict[str, Any]) -> bytes:
    return (json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8")


def answer_stream(
    ws: Workspace, project: Project, item: Item, index: int, source: str, actor: str, *, first: bool
) -> Iterator[bytes]:
    """NDJSON events: ``saved`` (the turn as stored before generating), the text deltas,
    then ``done`` or ``error`` with the stored conversation (see :mod:`assay.gold.turn_answers`)."""
    yield _line({"type": "saved", **payload(ws, project, item), "turn": index})
    for event in answer_events(ws, project, item, index, source=source, actor=actor, first=first):
        stored = event.pop("item", None)
        if stored is not None:
            event.update(payload(ws, project, stored), turn=index, first=first)
        yield _line(event)


def _stream(events: Iterator[bytes]) -> StreamingResponse:
    return StreamingResponse(
        events,
        media_type="application/x-ndjson",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


# ---------------------------------------------------------------- JSON API


@router.get("/api/projects/{name}/conversations", tags=["conversations"])
def api_conversations(
    request: Request,
    name: str,
    offset: Offset = 0,
    limit: int = Query(50, ge=0, le=500),
) -> Any:
    """One page of the project's conversations, newest change first."""
    ws, project = _open(request, name)
    total, rows = list_items(ws, project, kind="conversation", offset=offset, limit=limit)
    return {"total": total, "offset": offset, "limit": limit, "items": to_json(rows)}


@router.post("/api/projects/{name}/conversations", tags=["conversations"])
def api_start_conversation(request: Request, name: str, body: TurnSend) -> Response:
    """Start a conversation with its first question; streams the answer (NDJSON events)."""
    ws, project = _open(request, name)
    query, rewrite = body.cleaned()
    overrides = body.retriever or {}
    retrieved, how = retrieve(ws, project, [query], rewrite, overrides)
    turn = TurnIn(query=query, rewrite=rewrite, retrieved=retrieved, generation={"retrieval": how})
    data = ItemIn(kind="conversation", extra={"retriever": overrides}, turns=[turn])
    item = create_item(ws, project, data, author=author(request))
    return _stream(answer_stream(ws, project, item, 0, "retrieved", author(request), first=True))


@router.get("/api/projects/{name}/conversation-settings", tags=["conversations"])
def api_conversation_settings(request: Request, name: str) -> Any:
    """Generator, retriever and enrichment vocabulary of the project (no API key, ever)."""
    _, project = _open(request, name)
    return settings_view(project)


@router.put("/api/projects/{name}/conversation-settings", tags=["conversations"])
def api_save_conversation_settings(request: Request, name: str, body: SettingsIn) -> Any:
    """Change some settings; an invalid part (a prompt template with an unknown placeholder,
    an empty vocabulary) is refused with 422 and nothing is stored."""
    ws, project = _open(request, name)
    changes = {key: getattr(body, key) for key in body.model_fields_set}
    if "generator" in changes and changes["generator"] is not None:
        changes["generator"] = {
            **dataclasses.asdict(generator_settings(project)),
            **changes["generator"],
        }
    return settings_view(update_settings(ws, project, changes))


@router.post("/api/projects/{name}/conversations/overlap", tags=["conversations"])
def api_overlap(request: Request, name: str, body: OverlapIn) -> Any:
    """Lexical overlap of an answer with passages (phrases of ≥ 3 words, sentences with
    Jaccard ≥ 0.08) and the trigram support of each answer sentence. Offsets count code
    points."""
    _open(request, name)
    passages = []
    for text in body.passages:
        sentences = sentence_overlaps(body.answer, text)
        passages.append(
            {
                "score": passage_score(sentences),
                "sentences": [
                    {"start": s.start, "end": s.end, "score": s.score} for s in sentences
                ],
                "phrases": sorted(
                    {span for s in sentences for p in s.phrases for span in p.target_spans}
                ),
            }
        )
    picked = [i for i in body.support_from if 0 <= i < len(body.passages)]
    indexes = picked or list(range(len(body.passages)))
    contexts = [body.passages[i] for i in indexes]
    support = None
    if contexts and body.answer.strip():
        result = annotate_support(body.answer, contexts)
        support = {
            "score": result.score,
            "units": [
                {
                    "start": u.start,
                    "end": u.end,
                    "score": u.score,
                    "source": None if u.source is None else indexes[u.source],
                }
                for u in result.units
            ],
        }
    return {
        "answer_spans": covered_spans(body.answer, body.passages),
        "passages": passages,
        "support": support,
    }


@router.get("/api/projects/{name}/conversations/{item_id}", tags=["conversations"])
def api_conversation(request: Request, name: str, item_id: str) -> Any:
    ws, project = _open(request, name)
    return payload(ws, project, _conversation(ws, project, item_id))


@router.put("/api/projects/{name}/conversations/{item_id}", tags=["conversations"])
def api_save_conversation(request: Request, name: str, item_id: str, body: ConversationSave) -> Any:
    """Save the whole conversation if it is still at ``version``; else 409 with both."""
    ws, project = _open(request, name)
    _conversation(ws, project, item_id)
    if body.item.kind != "conversation":
        raise InvalidInput("a conversation stays a conversation: kind must be 'conversation'")
    try:
        item = save_item(ws, project, item_id, body.item, body.version, author=author(request))
    except StaleItem as exc:
        return _conflict(ws, project, exc)
    return payload(ws, project, item)


@router.post("/api/projects/{name}/conversations/{item_id}/turns", tags=["conversations"])
def api_send_turn(request: Request, name: str, item_id: str, body: TurnSend) -> Response:
    """Add a user turn: retrieve, store, then stream its first answer (NDJSON events). A
    failed first answer leaves the turn without an answer and records the error."""
    ws, project = _open(request, name)
    item = _conversation(ws, project, item_id)
    if body.version is None:
        raise InvalidInput("version: send the version of the conversation the page shows")
    query, rewrite = body.cleaned()
    data = item_input(item)
    if body.retriever is not None:
        data.extra["retriever"] = body.retriever
    overrides = dict(data.extra.get("retriever") or {})
    questions = [t.query for t in data.turns] + [query]
    retrieved, how = retrieve(ws, project, questions, rewrite, overrides)
    data.turns.append(
        TurnIn(query=query, rewrite=rewrite, retrieved=retrieved, generation={"retrieval": how})
    )
    try:
        item = save_item(ws, project, item_id, data, body.version, author=author(request))
    except StaleItem as exc:
        return _conflict(ws, project, exc)
    index = len(item.turns) - 1
    return _stream(
        answer_stream(ws, project, item, index, "retrieved", author(request), first=True)
    )


@router.post(
    "/api/projects/{name}/conversations/{item_id}/turns/{number}/generate",
    tags=["conversations"],
)
def api_regenerate(
    request: Request, name: str, item_id: str, number: int, body: Regenerate
) -> Response:
    """Answer turn ``number`` (1-based) again and stream it. The new text is stored as a
    draft beside the turn's answer (or as the answer when it has none); the answer stays
    until the person takes the draft. A failed generation changes nothing."""
    ws, project = _open(request, name)
    item = _conversation(ws, project, item_id)
    if item.version != body.version:
        return _conflict(ws, project, StaleItem(item, body.version))
    if not 1 <= number <= len(item.turns):
        raise NotFound(f"conversation {item_id!r} has no turn {number}")
    turn = item.turns[number - 1]
    if body.source == "relevant" and not any(e.label == "relevant" for e in turn.evidence):
        raise InvalidInput(
            f"turn {number}: no passage is marked relevant; mark at least one to regenerate"
        )
    if body.source == "retrieved" and not turn.retrieved:
        raise InvalidInput(f"turn {number}: nothing was retrieved for this turn")
    return _stream(
        answer_stream(ws, project, item, number - 1, body.source, author(request), first=False)
    )


@router.post(
    "/api/projects/{name}/conversations/{item_id}/turns/{number}/draft/{action}",
    tags=["conversations"],
)
def api_draft(
    request: Request,
    name: str,
    item_id: str,
    number: int,
    action: Literal["take", "discard"],
    body: DraftAction,
) -> Any:
    """``take``: turn ``number``'s draft becomes its answer (the replaced answer stays in the
    item's history); ``discard``: drop the draft, the answer stays as it is."""
    ws, project = _open(request, name)
    item = _conversation(ws, project, item_id)
    change = take_draft if action == "take" else discard_draft
    try:
        stored = change(ws, project, item, number, body.version, author(request))
    except StaleItem as exc:
        return _conflict(ws, project, exc)
    return payload(ws, project, stored)


# ---------------------------------------------------------------- pages


@router.get("/projects/{name}/conversations", response_class=HTMLResponse, include_in_schema=False)
def conversations_page(request: Request, name: str, offset: Offset = 0) -> HTMLResponse:
    ws, project = _open(request, name)
    total, rows = list_items(ws, project, kind="conversation", offset=offset, limit=50)
    return render(
        request,
        "conversations.html",
        project=project,
        section="conversations",
        rows=rows,
        total=total,
        offset=offset,
    )


@router.get(
    "/projects/{name}/conversations/new", response_class=HTMLResponse, include_in_schema=False
)
def new_conversation_page(request: Request, name: str) -> HTMLResponse:
    ws, project = _open(request, name)
    return _workbench(request, ws, project, None)


@router.get(
    "/projects/{name}/conversations/{item_id}",
    response_class=HTMLResponse,
    include_in_schema=False,
)
def conversation_page(request: Request, name: str, item_id: str) -> HTMLResponse:
    ws, project = _open(request, name)
    return _workbench(request, ws, project, _conversation(ws, project, item_id))


def _workbench(
    request: Request, ws: Workspace, project: Project, item: Item | None
) -> HTMLResponse:
    t = translator(request)
    shown = payload(ws, project, item) if item else {"findings": [], "documents": {}}
    settings = settings_view(project)
    data = {
        "project": project.name,
        "item": shown.get("item"),
        "input": shown.get("input"),
        "findings": shown["findings"],
        "documents": shown["documents"],
        "settings": settings,
        "generator_label": model_label(generator_settings(project)),
        "export_url": f"/projects/{quote(project.name)}/transfer?format=ragaphene",
        "list_url": f"/projects/{quote(project.name)}/conversations",
        "messages": {
            k: t(k) for k in t.fallback if k.startswith(("conv.", "status.", "items.label."))
        },
    }
    return render(
        request,
        "conversation.html",
        project=project,
        section="conversations",
        item=item,
        data=data,
        settings=settings,
    )
