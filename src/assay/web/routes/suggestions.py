"""LLM suggestions for an item or a conversation: ask for them, list them, accept or reject
them (``/api/projects/{name}/items/{item_id}/suggestions``).

Asking calls the project's generator and stores the suggestions only when every reply was
usable: a timeout, an error of the endpoint or a reply that is not what was asked for answers
502 with the reason, and nothing is stored. Accepting needs the item version the page shows
(409 with the stored item otherwise, as a save would) and answers with the item as stored
after it, so the workbench can show the new evidence or rewrite. The rules are in
:mod:`assay.gold.suggestions` and :mod:`assay.gold.suggesting`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.corpus.documents import document_names
from assay.gold.items import StaleItem, get_item
from assay.gold.project_config import generator_settings
from assay.gold.suggesting import MAX_PASSAGES, Passage, suggest_relevance, suggest_rewrite
from assay.gold.suggestions import (
    Decided,
    Suggestion,
    accept_suggestions,
    list_suggestions,
    reject_suggestions,
)
from assay.gold.turn_answers import model_label
from assay.llm import GeneratorError
from assay.llm.suggestion_replies import ReplyError
from assay.records import INT32, Item, Project, to_json
from assay.store.workspace import Workspace
from assay.web.actors import actor_id
from assay.web.conversations_view import payload as conversation_payload
from assay.web.items_view import conflict_response, item_payload
from assay.web.render import open_project

router = APIRouter()
PATH = "/api/projects/{name}/items/{item_id}/suggestions"


SuggestionId = Annotated[int, Field(ge=1, le=INT32)]  # a row id: never past the column's range


class PassageRef(BaseModel):
    """A passage by its document and character offsets (code points) in the document's text."""

    model_config = ConfigDict(extra="forbid")
    doc_id: str = Field(min_length=1, max_length=36)
    start: int = Field(ge=0, le=INT32)
    end: int = Field(ge=1, le=INT32)


class SuggestIn(BaseModel):
    """What to ask for. ``relevance``: a label and reason for the passages given, else the
    turn's retrieved contexts, else the retriever's top ``k``; ``rewrite``: a standalone
    rewrite of the turn's question (conversations)."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["relevance", "rewrite"] = "relevance"
    turn: int = Field(default=1, ge=1, le=10_000)
    passages: list[PassageRef] | None = Field(default=None, max_length=MAX_PASSAGES)
    k: int = Field(default=10, ge=1, le=MAX_PASSAGES)


class SuggestionAcceptIn(BaseModel):
    """Suggestions to accept, from the item version the page shows. ``rewrite``: the text of
    a rewrite suggestion as the person edited it. ``skip_disagreeing`` (accept all): leave
    pending the ones the turn contradicts instead of refusing them all."""

    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1, le=INT32)
    ids: list[SuggestionId] = Field(min_length=1, max_length=500)
    rewrite: str | None = Field(default=None, max_length=20_000)
    skip_disagreeing: bool = False


class RejectIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ids: list[SuggestionId] = Field(min_length=1, max_length=500)


def _item_view(ws: Workspace, project: Project, item: Item) -> dict[str, Any]:
    if item.kind == "conversation":
        return conversation_payload(ws, project, item)
    return item_payload(ws, project, item)


def generator_view(project: Project) -> dict[str, Any]:
    """Which generator would answer, and whether it can (the offline one cannot)."""
    settings = generator_settings(project)
    return {
        "kind": settings.kind,
        "model": model_label(settings),
        "needs_llm": settings.kind == "offline",
    }


def _listed(ws: Workspace, project: Project, found: list[Suggestion]) -> dict[str, Any]:
    """Suggestions as JSON and the names of the documents their passages are in."""
    names = document_names(ws, project, {s.doc_id for s in found if s.doc_id})
    return {"suggestions": to_json(found), "documents": names}


def _llm_failed(exc: Exception) -> JSONResponse:
    return JSONResponse({"detail": str(exc), "stored": 0}, status_code=502)


def _decided(ws: Workspace, project: Project, item_id: str, done: Decided) -> dict[str, Any]:
    item = done.item or get_item(ws, project, item_id)
    skipped = [{"id": sid, "reason": reason} for sid, reason in done.skipped]
    listed = _listed(ws, project, done.suggestions)
    view = _item_view(ws, project, item)
    documents = {**listed["documents"], **view["documents"]}
    return {
        **view,
        "suggestions": listed["suggestions"],
        "documents": documents,
        "skipped": skipped,
    }


@router.get(PATH, tags=["suggestions"])
def api_suggestions(
    request: Request,
    name: str,
    item_id: str,
    turn: int | None = Query(None, ge=1, le=10_000),
    state: Literal["pending", "accepted", "rejected", "replaced"] | None = None,
) -> Any:
    """The item's suggestions (oldest first) with their model, prompt hash, parameters and
    state, and the project's generator (``needs_llm``: it is the offline one)."""
    ws, project = open_project(request, name)
    get_item(ws, project, item_id)  # 404 for an unknown item
    found = list_suggestions(ws, project, item_id, turn=turn, state=state)
    return {**_listed(ws, project, found), "generator": generator_view(project)}


@router.post(PATH, status_code=201, tags=["suggestions"])
def api_suggest(request: Request, name: str, item_id: str, body: SuggestIn) -> Any:
    """Ask the project's generator for suggestions and store them as pending. 422 when the
    generator is the offline one (suggestions need an LLM); 502 when the LLM fails or its
    reply is unusable, and then nothing is stored."""
    ws, project = open_project(request, name)
    actor = actor_id(request)
    try:
        if body.kind == "rewrite":
            made = suggest_rewrite(ws, project, item_id, actor=actor, turn=body.turn)
            return {"created": [to_json(made)], "skipped": [], "model": made.model, "documents": {}}
        refs = None
        if body.passages is not None:
            refs = [Passage(p.doc_id, p.start, p.end) for p in body.passages]
        report = suggest_relevance(
            ws, project, item_id, actor=actor, turn=body.turn, passages=refs, k=body.k
        )
    except (GeneratorError, ReplyError) as exc:
        return _llm_failed(exc)
    listed = _listed(ws, project, report.created)
    return {**to_json(report), "documents": listed["documents"]}


@router.post(f"{PATH}/accept", tags=["suggestions"])
def api_accept(request: Request, name: str, item_id: str, body: SuggestionAcceptIn) -> Any:
    """Accept suggestions: relevance ones become evidence of origin ``llm-suggestion``, a
    rewrite the turn's rewrite, through the item's normal save. Answers with the stored item
    and the decided suggestions; 409 when the item changed since ``version``."""
    ws, project = open_project(request, name)
    try:
        done = accept_suggestions(
            ws,
            project,
            item_id,
            body.ids,
            body.version,
            actor=actor_id(request),
            rewrite=body.rewrite,
            skip_disagreeing=body.skip_disagreeing,
        )
    except StaleItem as exc:
        return conflict_response(request, exc, _item_view(ws, project, exc.current))
    return _decided(ws, project, item_id, done)


@router.post(f"{PATH}/reject", tags=["suggestions"])
def api_reject(request: Request, name: str, item_id: str, body: RejectIn) -> Any:
    """Reject suggestions: the item stays as it is; each suggestion keeps who rejected it."""
    ws, project = open_project(request, name)
    done = reject_suggestions(ws, project, item_id, body.ids, actor=actor_id(request))
    return _decided(ws, project, item_id, done)
