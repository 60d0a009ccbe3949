"""The conversation workbench: chat with the project's RAG system and repair it, turn by turn.

A conversation is an item of kind ``conversation``; each turn holds the user's question, the
contexts retrieved for it, the answer as generated (``original_answer``) and as edited
(``answer``), relevance labels as evidence, enrichments and a standalone rewrite.

Sending a turn stores the question and its retrieved contexts first, then streams the answer
as newline-delimited JSON events (``saved``, ``delta``…, then ``done`` or ``error``). The
answer is stored when the stream ends, also when the generator fails half-way: the partial
text is kept and marked as partial, so the page can offer a retry and nothing is lost.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.annotation import (
    ItemIn,
    StaleItem,
    TurnIn,
    create_item,
    get_item,
    item_input,
    list_items,
    save_item,
)
from assay.conversation import conversation_checks
from assay.errors import AssayError, InvalidInput, NotFound
from assay.llm import GeneratorError, GeneratorSettings, Message, make_generator, stream_answer
from assay.llm.prompts import render_rag_prompt
from assay.llm.records import prompt_hash
from assay.metrics.overlap import covered_spans, passage_score, sentence_overlaps
from assay.metrics.support import annotate_support
from assay.models import Item, Project, to_json
from assay.project_settings import (
    generator_settings,
    retriever_settings,
    settings_view,
    update_settings,
)
from assay.projects import get_project
from assay.search.indexes import search
from assay.search.settings import parse_retriever_settings, query_text
from assay.web.items_view import document_names
from assay.web.render import author, render, translator, workspace
from assay.workspace import Workspace

router = APIRouter()
OVERRIDES = ("kind", "k", "query_from")


class TurnSend(BaseModel):
    """A new user turn: the question, an optional standalone rewrite, retriever overrides."""

    model_config = ConfigDict(extra="forbid")
    version: int | None = Field(default=None, ge=1)
    query: str = Field(min_length=1, max_length=20_000)
    rewrite: str = ""
    retriever: dict[str, Any] | None = None


class Regenerate(BaseModel):
    """Answer a turn again: from the passages marked relevant, or from all retrieved ones."""

    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1)
    source: str = Field(default="relevant", pattern="^(relevant|retrieved)$")


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
    """The conversation, its editable form, the checks and every document name it shows."""
    doc_ids = {str(r.get("doc_id")) for t in item.turns for r in t.retrieved if r.get("doc_id")}
    doc_ids |= {e.doc_id for t in item.turns for e in t.evidence if e.doc_id}
    return {
        "item": to_json(item),
        "input": item_input(item).model_dump(),
        "findings": findings(item, project),
        "documents": document_names(ws, project, doc_ids),
    }


def _conflict(ws: Workspace, project: Project, exc: StaleItem) -> JSONResponse:
    body = {"detail": str(exc), **payload(ws, project, exc.current)}
    body["current"] = body.pop("item")
    body["current_input"] = body.pop("input")
    return JSONResponse(body, status_code=409)


# ---------------------------------------------------------------- retrieval and generation


def retrieve(
    ws: Workspace,
    project: Project,
    questions: Sequence[str],
    rewrite: str,
    overrides: dict[str, Any],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Contexts for the last question, with the project's retriever settings overridden by
    the conversation's (kind, k, query_from); returns the contexts and how they were found."""
    unknown = sorted(set(overrides) - set(OVERRIDES))
    if unknown:
        raise InvalidInput(
            f"conversation retriever: unknown override(s) {', '.join(unknown)}; "
            f"a conversation may set: {', '.join(OVERRIDES)}"
        )
    settings = parse_retriever_settings({**retriever_settings(project).model_dump(), **overrides})
    query = query_text(list(questions), rewrite or None, settings.query_from)
    embedder = ws.embedder(settings.embedder) if settings.kind != "keyword" else None
    hits = search(ws, project, query, settings.k, retriever=settings, embedder=embedder)
    retrieved = [
        {
            "chunk_id": h.chunk_id,
            "doc_id": h.doc_id,
            "start": h.start,
            "end": h.end,
            "score": h.score,
            "rank": h.rank,
            "text": h.text,
        }
        for h in hits
    ]
    return retrieved, {"settings": settings.model_dump(), "query": query}


def generator_label(settings: GeneratorSettings) -> str:
    """The model name a page shows; the offline generator names itself."""
    return settings.model if settings.kind != "offline" else "offline-extractive"


def _history(turns: Sequence[TurnIn]) -> list[Message]:
    history: list[Message] = []
    for turn in turns:
        history.append(Message("user", turn.query))
        if turn.answer.strip():
            history.append(Message("assistant", turn.answer))
    return history


def _line(event: dict[str, Any]) -> bytes:
    return (json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8")


def _store_answer(
    ws: Workspace,
    project: Project,
    item_id: str,
    index: int,
    text: str,
    generation: dict[str, Any],
    actor: str,
) -> Item:
    """Write the answer into turn ``index`` of the stored conversation as it is now (the
    page waits for the stream before saving, so this rarely races; when it does, the
    newer version is read again and the answer still lands)."""
    for _attempt in range(3):
        item = get_item(ws, project, item_id)
        data = item_input(item)
        if index >= len(data.turns):
            raise NotFound(f"conversation {item_id!r} has no turn {index + 1} any more")
        turn = data.turns[index]
        turn.answer = text
        turn.original_answer = text
        turn.generation = {**generation, "retrieval": turn.generation.get("retrieval", {})}
        try:
            return save_item(ws, project, item_id, data, item.version, author=actor)
        except StaleItem:
            continue
    raise InvalidInput(f"conversation {item_id!r} kept changing; the answer was not stored")


def answer_stream(
    ws: Workspace, project: Project, item: Item, index: int, source: str, actor: str
) -> Iterator[bytes]:
    """Events for one answer: ``saved`` (the turn as stored before generating), the text
    deltas, then ``done`` or ``error`` with the stored conversation."""
    data = item_input(item)
    turn = data.turns[index]
    names = document_names(ws, project, {str(r["doc_id"]) for r in turn.retrieved})
    names |= document_names(ws, project, {e.doc_id for e in turn.evidence if e.doc_id})
    if source == "relevant":
        chosen = [(names.get(e.doc_id or "", ""), e.text) for e in turn.evidence]
        chosen = [p for p, e in zip(chosen, turn.evidence, strict=True) if e.label == "relevant"]
    else:
        chosen = [(names.get(str(r["doc_id"]), ""), str(r["text"])) for r in turn.retrieved]
    settings = generator_settings(project)
    history = _history(data.turns[:index])
    messages = render_rag_prompt(
        settings.prompt_template, turn.query, chosen, history, project.language
    )
    generation: dict[str, Any] = {
        "model": settings.model or generator_label(settings),
        "kind": settings.kind,
        "prompt_hash": prompt_hash(messages),
        "params": {"temperature": settings.temperature, "max_tokens": settings.max_tokens},
        "passages": source,
        "passage_count": len(chosen),
    }
    yield _line({"type": "saved", **payload(ws, project, item), "turn": index})
    parts: list[str] = []
    error = ""
    finished = False
    try:
        generator = make_generator(settings)
        for delta in stream_answer(
            generator, turn.query, chosen, history, settings.prompt_template, project.language
        ):
            parts.append(delta)
            yield _line({"type": "delta", "text": delta})
        finished = True
    except GeneratorError as exc:
        error = str(exc)
        if exc.partial_text and len(exc.partial_text) > len("".join(parts)):
            parts = [exc.partial_text]
    except AssayError as exc:
        error = str(exc)
    finally:
        if not finished and not error:  # the page went away mid-stream: keep what came
            generation["error"] = "the page closed the connection before the answer ended"
            generation["partial"] = True
            _store_answer(ws, project, item.id, index, "".join(parts), generation, actor)
    if error:
        generation["error"] = error
        generation["partial"] = True
    stored = _store_answer(ws, project, item.id, index, "".join(parts), generation, actor)
    kind = "error" if error else "done"
    yield _line({"type": kind, "detail": error, "turn": index, **payload(ws, project, stored)})


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
    offset: int = Query(0, ge=0),
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
    overrides = body.retriever or {}
    retrieved, how = retrieve(ws, project, [body.query], body.rewrite, overrides)
    turn = TurnIn(
        query=body.query, rewrite=body.rewrite, retrieved=retrieved, generation={"retrieval": how}
    )
    data = ItemIn(kind="conversation", extra={"retriever": overrides}, turns=[turn])
    item = create_item(ws, project, data, author=author(request))
    return _stream(answer_stream(ws, project, item, 0, "retrieved", author(request)))


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
    """Add a user turn: retrieve, store, then stream the answer (NDJSON events)."""
    ws, project = _open(request, name)
    item = _conversation(ws, project, item_id)
    if body.version is None:
        raise InvalidInput("version: send the version of the conversation the page shows")
    data = item_input(item)
    if body.retriever is not None:
        data.extra["retriever"] = body.retriever
    overrides = dict(data.extra.get("retriever") or {})
    questions = [t.query for t in data.turns] + [body.query]
    retrieved, how = retrieve(ws, project, questions, body.rewrite, overrides)
    data.turns.append(
        TurnIn(
            query=body.query,
            rewrite=body.rewrite,
            retrieved=retrieved,
            generation={"retrieval": how},
        )
    )
    try:
        item = save_item(ws, project, item_id, data, body.version, author=author(request))
    except StaleItem as exc:
        return _conflict(ws, project, exc)
    index = len(item.turns) - 1
    return _stream(answer_stream(ws, project, item, index, "retrieved", author(request)))


@router.post(
    "/api/projects/{name}/conversations/{item_id}/turns/{number}/generate",
    tags=["conversations"],
)
def api_regenerate(
    request: Request, name: str, item_id: str, number: int, body: Regenerate
) -> Response:
    """Answer turn ``number`` (1-based) again and stream it; the new answer replaces the
    old one and becomes the new original."""
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
    return _stream(answer_stream(ws, project, item, number - 1, body.source, author(request)))


# ---------------------------------------------------------------- pages


@router.get("/projects/{name}/conversations", response_class=HTMLResponse, include_in_schema=False)
def conversations_page(request: Request, name: str, offset: int = Query(0, ge=0)) -> HTMLResponse:
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
        "generator_label": generator_label(generator_settings(project)),
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
