"""Adjudication: the items whose copies wait for it, the versions side by side, and the
merge into the gold (``/api/projects/{name}/adjudication``). Saves carry the version of the
original the page read; a stale one answers 409 with the original as stored now."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.corpus.documents import document_names
from assay.gold.items import StaleItem
from assay.records import INT32, Label, Project, to_json
from assay.review.adjudication import (
    KEEP,
    Choices,
    PassageChoice,
    TurnChoice,
    adjudicate,
    differences,
    merge,
    versions,
    waiting_for_adjudication,
)
from assay.store.workspace import Workspace
from assay.web.actors import actor_id, check_question_edit
from assay.web.items_view import conflict_response, item_payload, type_options
from assay.web.render import language, open_project, render, translator

router = APIRouter()
Id = Field(min_length=1, max_length=36)


class PassagePick(BaseModel):
    """One passage of the gold: version ``source``'s passage number ``index`` (from 0);
    ``group`` and ``label``, when sent, replace what that version gave it (``group`` null:
    a group of its own)."""

    model_config = ConfigDict(extra="forbid")
    source: str = Id
    index: int = Field(ge=0, le=INT32)
    group: int | None = Field(default=None, ge=0, le=INT32)
    label: Label | None = None


class TurnPick(BaseModel):
    """Which version each field of one question comes from (version ids)."""

    model_config = ConfigDict(extra="forbid")
    query: str = Id
    query_type: str = Id
    answer: str = Id
    passages: list[PassagePick] = Field(default_factory=list, max_length=10_000)


class Adjudication(BaseModel):
    """A merge: the original's version the page read, the version everything not chosen
    comes from, and the choices per question, in order."""

    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1, le=INT32)
    base: str = Id
    turns: list[TurnPick] = Field(min_length=1, max_length=1_000)

    def choices(self) -> Choices:
        def passage(p: PassagePick) -> PassageChoice:
            group = p.group if "group" in p.model_fields_set else KEEP
            return PassageChoice(p.source, p.index, group, p.label or KEEP)

        return Choices(
            self.base,
            [
                TurnChoice(t.query, t.query_type, t.answer, [passage(p) for p in t.passages])
                for t in self.turns
            ],
        )


def _view(request: Request, ws: Workspace, project: Project, item_id: str) -> dict[str, Any]:
    sides = versions(ws, project, item_id)
    cited = {e.doc_id for v in sides for t in v.item.turns for e in t.evidence if e.doc_id}
    return {
        "item_id": item_id,
        "version": sides[0].item.version,
        "status": sides[0].status,
        "versions": [
            {"id": v.id, "annotator": v.annotator, "status": v.status, "item": to_json(v.item)}
            for v in sides
        ],
        "turns": differences(sides),
        "documents": document_names(ws, project, cited),
        "query_types": type_options(project, language(request)),
    }


@router.get("/api/projects/{name}/adjudication", tags=["review"])
def api_waiting(request: Request, name: str) -> Any:
    """Originals whose copies (two or more) are all handed in and that wait for
    adjudication, oldest first."""
    ws, project = open_project(request, name)
    return {"items": to_json(waiting_for_adjudication(ws, project))}


@router.get("/api/projects/{name}/adjudication/{item_id}", tags=["review"])
def api_versions(request: Request, name: str, item_id: str) -> Any:
    """The original (``annotator`` "gold") and its copies side by side: ``turns`` holds,
    per question, each field's value per version and whether the copies differ, and the
    union of the passages with each version's label and group."""
    ws, project = open_project(request, name)
    return _view(request, ws, project, item_id)


@router.post("/api/projects/{name}/adjudication/{item_id}", tags=["review"])
def api_adjudicate(request: Request, name: str, item_id: str, body: Adjudication) -> Any:
    """Merge the chosen versions into the original (the gold), saved as an ``adjudicate``
    event, and accept it. 409 when the original changed since ``version``."""
    ws, project = open_project(request, name)
    choices = body.choices()
    sides = versions(ws, project, item_id)
    check_question_edit(
        request, project, sides[0].item, merge({v.id: v.item for v in sides}, choices)
    )
    try:
        item = adjudicate(ws, project, item_id, choices, body.version, actor=actor_id(request))
    except StaleItem as exc:
        return conflict_response(request, exc, item_payload(ws, project, exc.current))
    return item_payload(ws, project, item)


@router.get("/projects/{name}/adjudication", response_class=HTMLResponse, include_in_schema=False)
def waiting_page(request: Request, name: str) -> HTMLResponse:
    ws, project = open_project(request, name)
    return render(
        request,
        "adjudication.html",
        project=project,
        section="agreement",
        waiting=waiting_for_adjudication(ws, project),
    )


@router.get(
    "/projects/{name}/adjudication/{item_id}", response_class=HTMLResponse, include_in_schema=False
)
def adjudicate_page(request: Request, name: str, item_id: str) -> HTMLResponse:
    ws, project = open_project(request, name)
    t = translator(request)
    data = {
        **_view(request, ws, project, item_id),
        "api": f"/api/projects/{quote(project.name)}/adjudication/{quote(item_id)}",
        "editor_url": f"/projects/{quote(project.name)}/items/{quote(item_id)}",
        "messages": {k: t(k) for k in t.fallback if k.startswith(("adjudication.", "status."))},
    }
    return render(request, "adjudicate.html", project=project, section="agreement", data=data)
