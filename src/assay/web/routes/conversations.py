"""The conversation workbench: chat with the project's RAG system and repair it, turn by turn.

A conversation is an item of kind ``conversation``; each turn holds the user's question, the
contexts retrieved for it, the answer as generated (``original_answer``) and as edited
(``answer``), relevance labels as evidence, enrichments and a standalone rewrite.

Sending a turn stores the question and its retrieved contexts first, then streams the answer
as newline-delimited JSON events (``saved``, ``delta``…, then ``done`` or ``error``). Only a
finished answer is stored. Regenerating a turn that has an answer streams a *draft* kept
beside it, which the person takes or discards; a failed generation changes nothing
(:mod:`assay.gold.turn_answers` holds the rules).

The pages are in ``routes.conversation_pages``, the project's generator and retriever
settings in ``routes.conversation_settings``.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from assay.errors import InvalidInput, NotFound
from assay.experiments.chat_retrieval import retrieve  # the chat's source: pool settings
from assay.gold.items import ItemBody, StaleItem, create_item, editable_copy, save_item
from assay.gold.project_config import conversation_generator
from assay.gold.turn_answers import discard_draft, question_text, take_draft
from assay.metrics.overlap import covered_spans, passage_score, sentence_overlaps
from assay.metrics.support import annotate_support
from assay.records import Item, Turn, to_json
from assay.review.comments import open_comment_counts
from assay.review.reviews import save_edit
from assay.web.actors import actor_id, check_question_edit
from assay.web.bounds import Offset
from assay.web.conversations_view import (
    answer_stream,
    conflict,
    get_conversation,
    listed_conversations,
    ndjson,
    payload,
    ragaphene_json,
)
from assay.web.render import open_project

router = APIRouter()


class TurnSend(BaseModel):
    """A new user turn: the question, an optional standalone rewrite, retriever overrides."""

    model_config = ConfigDict(extra="forbid")
    version: int | None = Field(default=None, ge=1)
    query: str = Field(min_length=1, max_length=20_000)
    rewrite: str = Field(default="", max_length=20_000)
    retriever: dict[str, Any] | None = None
    generator: dict[str, Any] | None = None
    """The conversation's own generator choice (kind, model, temperature, max_tokens)."""

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
    item: ItemBody


class OverlapIn(BaseModel):
    """An answer and the passages to compare it with; ``support_from`` picks the passages
    the support score uses (all when empty)."""

    model_config = ConfigDict(extra="forbid")
    answer: str = Field(max_length=100_000)
    passages: list[str] = Field(max_length=200)
    support_from: list[int] = Field(default_factory=list)


# ---------------------------------------------------------------- JSON API


@router.get("/api/projects/{name}/conversations", tags=["conversations"])
def api_conversations(
    request: Request,
    name: str,
    offset: Offset = 0,
    limit: int = Query(50, ge=0, le=500),
) -> Any:
    """One page of the project's conversations, newest change first."""
    ws, project = open_project(request, name)
    total, rows = listed_conversations(request, ws, project, offset, limit)
    counts = open_comment_counts(ws, project, [row.id for row in rows])
    listed = [{**to_json(row), "open_comments": counts.get(row.id, 0)} for row in rows]
    return {"total": total, "offset": offset, "limit": limit, "items": listed}


@router.post("/api/projects/{name}/conversations", tags=["conversations"])
def api_start_conversation(request: Request, name: str, body: TurnSend) -> Response:
    """Start a conversation with its first question; streams the answer (NDJSON events)."""
    ws, project = open_project(request, name)
    query, rewrite = body.cleaned()
    overrides = body.retriever or {}
    extra = {"retriever": overrides, "generator": body.generator or {}}
    conversation_generator(project, extra)  # refused before anything is stored
    retrieved, how = retrieve(ws, project, [query], rewrite, overrides)
    turn = Turn(query=query, rewrite=rewrite, retrieved=retrieved, generation={"retrieval": how})
    data = Item(kind="conversation", extra=extra, turns=[turn])
    item = create_item(ws, project, data, author=actor_id(request))
    return ndjson(answer_stream(ws, project, item, 0, "retrieved", actor_id(request), first=True))


@router.post("/api/projects/{name}/conversations/overlap", tags=["conversations"])
def api_overlap(request: Request, name: str, body: OverlapIn) -> Any:
    """Lexical overlap of an answer with passages (phrases of ≥ 3 words, sentences with
    Jaccard ≥ 0.08) and the trigram support of each answer sentence. Offsets count code
    points."""
    open_project(request, name)
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
    ws, project = open_project(request, name)
    return payload(ws, project, get_conversation(ws, project, item_id))


@router.put("/api/projects/{name}/conversations/{item_id}", tags=["conversations"])
def api_save_conversation(request: Request, name: str, item_id: str, body: ConversationSave) -> Any:
    """Save the whole conversation if it is still at ``version``; else 409 with both."""
    ws, project = open_project(request, name)
    stored = get_conversation(ws, project, item_id)
    check_question_edit(request, project, stored, body.item)
    if body.item.kind != "conversation":
        raise InvalidInput("a conversation stays a conversation: kind must be 'conversation'")
    if body.item.extra.get("generator") != stored.extra.get("generator"):
        conversation_generator(project, body.item.extra)  # a new choice is checked; an old
        # one the project's settings no longer allow fails when it is used, never a save
    try:  # save_edit renews the author's hold on a pool task first
        item = save_edit(ws, project, item_id, body.item, body.version, author=actor_id(request))
    except StaleItem as exc:
        return conflict(request, ws, project, exc)
    return payload(ws, project, item)


@router.post("/api/projects/{name}/conversations/{item_id}/turns", tags=["conversations"])
def api_send_turn(request: Request, name: str, item_id: str, body: TurnSend) -> Response:
    """Add a user turn: retrieve, store, then stream its first answer (NDJSON events). A
    failed first answer leaves the turn without an answer and records the error."""
    ws, project = open_project(request, name)
    item = get_conversation(ws, project, item_id)
    if body.version is None:
        raise InvalidInput("version: send the version of the conversation the page shows")
    query, rewrite = body.cleaned()
    data = editable_copy(item)
    if body.retriever is not None:
        data.extra["retriever"] = body.retriever
    if body.generator is not None:
        data.extra["generator"] = body.generator
        conversation_generator(project, data.extra)
    overrides = dict(data.extra.get("retriever") or {})
    questions = [t.query for t in data.turns] + [query]
    retrieved, how = retrieve(ws, project, questions, rewrite, overrides)
    data.turns.append(
        Turn(query=query, rewrite=rewrite, retrieved=retrieved, generation={"retrieval": how})
    )
    try:
        item = save_item(ws, project, item_id, data, body.version, author=actor_id(request))
    except StaleItem as exc:
        return conflict(request, ws, project, exc)
    index = len(item.turns) - 1
    return ndjson(
        answer_stream(ws, project, item, index, "retrieved", actor_id(request), first=True)
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
    ws, project = open_project(request, name)
    item = get_conversation(ws, project, item_id)
    if item.version != body.version:
        return conflict(request, ws, project, StaleItem(item, body.version))
    if not 1 <= number <= len(item.turns):
        raise NotFound(f"conversation {item_id!r} has no turn {number}")
    turn = item.turns[number - 1]
    if body.source == "relevant" and not any(e.label == "relevant" for e in turn.evidence):
        raise InvalidInput(
            f"turn {number}: no passage is marked relevant; mark at least one to regenerate"
        )
    if body.source == "retrieved" and not turn.retrieved:
        raise InvalidInput(f"turn {number}: nothing was retrieved for this turn")
    return ndjson(
        answer_stream(ws, project, item, number - 1, body.source, actor_id(request), first=False)
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
    ws, project = open_project(request, name)
    item = get_conversation(ws, project, item_id)
    change = take_draft if action == "take" else discard_draft
    try:
        stored = change(ws, project, item, number, body.version, actor_id(request))
    except StaleItem as exc:
        return conflict(request, ws, project, exc)
    return payload(ws, project, stored)


@router.get("/api/projects/{name}/conversations/{item_id}/ragaphene", tags=["conversations"])
def api_conversation_ragaphene(request: Request, name: str, item_id: str) -> Response:
    """This conversation as a RAGAPHENE JSON file (schema version 2), whatever its status."""
    ws, project = open_project(request, name)
    item = get_conversation(ws, project, item_id)
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in project.name)
    filename = f"{stem}-conversation-{item.id[:8]}.ragaphene.json"
    return Response(
        ragaphene_json(ws, project, item),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
