"""The judging workbench: the overview of a project's judging, the workbench of one topic in
one mode (reports, documents, citations), and the route its autosave uses.

``PUT /api/projects/{name}/judging/judgments`` saves the caller's own judgment of one unit
with the version the page read (0: not judged yet); a stale version answers 409 with the
judgment as stored now in ``current``, so the page can show both and nothing is lost. Every
judge has their own judgment of a unit (several judges per unit).
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.errors import Conflict, InvalidInput
from assay.judging.judgments import Span, Unit, get_judgment, save_judgment
from assay.records import INT32
from assay.web.actors import actor_id, allowed_actions
from assay.web.i18n import said
from assay.web.judging_view import (
    PAGE_MODES,
    judgment_json,
    overview,
    rating_labels,
    stored_mode,
    workbench,
)
from assay.web.render import open_project, read_only_why, render, translator

router = APIRouter()

MAX_SPANS = 2000
ID = Field(min_length=1, max_length=500)


class JudgmentSave(BaseModel):
    """One judge's judgment of one unit: a report (``topic_id``, ``run_id``), a document
    (``topic_id``, ``doc_id``) or a citation (``topic_id``, ``run_id``, ``sentence_idx`` and
    the cited ``doc_id``, none for a sentence without citations). ``version``: the one read,
    0 for a unit not judged yet. Spans are ``{start, end, text}`` in code points; report
    spans in report mode carry ``sentence_idx``."""

    model_config = ConfigDict(extra="forbid")
    mode: Literal["report", "document", "citation"]
    topic_id: str = ID
    run_id: str | None = Field(None, min_length=1, max_length=500)
    doc_id: str | None = Field(None, min_length=1, max_length=500)
    sentence_idx: int | None = Field(None, ge=0, le=INT32)
    version: int = Field(ge=0, le=INT32)
    rating: str | None = Field(None, max_length=200)
    comment: str = Field("", max_length=20_000)
    spans: list[dict[str, Any]] = Field(default_factory=list, max_length=MAX_SPANS)
    report_spans: list[dict[str, Any]] = Field(default_factory=list, max_length=MAX_SPANS)

    def unit(self) -> Unit:
        """The unit judged; a field that does not belong to the mode is refused."""
        extra = {
            "report": ("doc_id", "sentence_idx"),
            "document": ("run_id", "sentence_idx"),
            "citation": (),
        }[self.mode]
        for name in extra:
            if getattr(self, name) is not None:
                raise InvalidInput(f"{name}: a {self.mode} judgment has none")
        needed = {"report": ("run_id",), "document": ("doc_id",), "citation": ("run_id",)}
        for name in needed[self.mode] + (("sentence_idx",) if self.mode == "citation" else ()):
            if getattr(self, name) is None:
                raise InvalidInput(f"{name}: a {self.mode} judgment needs one")
        return Unit(self.mode, self.topic_id, self.run_id, self.doc_id, self.sentence_idx)


@router.put("/api/projects/{name}/judging/judgments", tags=["judging"])
def api_save_judgment(request: Request, name: str, body: JudgmentSave) -> Any:
    """Save the caller's judgment of one unit (see the module docstring); answers the
    judgment as saved, with its new version."""
    ws, project = open_project(request, name)
    unit = body.unit()
    spans = [Span.from_json(s, f"spans {n}") for n, s in enumerate(body.spans, 1)]
    report_spans = [
        Span.from_json(s, f"report_spans {n}") for n, s in enumerate(body.report_spans, 1)
    ]
    judge = actor_id(request)
    try:
        saved = save_judgment(
            ws,
            project,
            unit,
            judge_id=judge,
            version=body.version,
            rating=body.rating,
            comment=body.comment,
            spans=spans,
            report_spans=report_spans,
        )
    except Conflict as exc:
        current = get_judgment(ws, project, unit, judge)
        shown = judgment_json(current) if current else None
        return JSONResponse(
            {"detail": said(exc, translator(request)), "current": shown}, status_code=409
        )
    return judgment_json(saved)


@router.get("/projects/{name}/judging", response_class=HTMLResponse, include_in_schema=False)
def judging_page(request: Request, name: str, mode: str = "reports") -> HTMLResponse:
    """Progress per topic and run in each mode (``mode``: the one listed), with the way into
    each workbench."""
    ws, project = open_project(request, name)
    stored_mode(mode)
    return render(
        request,
        "judging.html",
        project=project,
        section="judging",
        data=overview(
            ws, project, actor_id(request), every_judge="item.assign" in allowed_actions(request)
        ),
        page_modes=list(PAGE_MODES),
        shown=mode,
    )


@router.get(
    "/projects/{name}/judging/{page_mode}", response_class=HTMLResponse, include_in_schema=False
)
def workbench_page(
    request: Request,
    name: str,
    page_mode: str,
    topic: str = Query(min_length=1, max_length=500),
    run: str | None = Query(None, min_length=1, max_length=500),
    unjudged: bool = False,
) -> HTMLResponse:
    """One topic's units in one mode (``run``: of that run only); ``unjudged``: the units
    the caller has not judged come first."""
    ws, project = open_project(request, name)
    stored_mode(page_mode)
    t = translator(request)
    data = workbench(
        ws,
        project,
        page_mode,
        topic,
        judge_id=actor_id(request),
        run_id=run,
        unjudged_first=unjudged,
    )
    home = f"/projects/{quote(project.name)}/judging"
    data |= {
        "project": project.name,
        "ratings": rating_labels(project, t),
        "overview_url": home,
        "messages": {k: t(k) for k in t.fallback if k.startswith("judging.")},
    }
    return render(
        request,
        "judging_workbench.html",
        project=project,
        section="judging",
        data=data,
        unjudged=unjudged,
        read_only=read_only_why(request, project, None, "judgment.write"),
    )
