"""A project's dashboard: the page with its plots, and its JSON twin."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from assay.records import to_json
from assay.review.dashboard import MAX_DAYS
from assay.review.figure_cache import cached_dashboard
from assay.web.actors import blind_to_unreviewed
from assay.web.dashboard_view import figures
from assay.web.render import open_project, render, translator

router = APIRouter()

Days = Annotated[
    int, Query(ge=1, le=MAX_DAYS, description="days of throughput, ending today (UTC)")
]


@router.get("/api/projects/{name}/dashboard", tags=["dashboard"])
def api_dashboard(request: Request, name: str, days: Days = 28) -> Any:
    """The dashboard's figures: status funnel, items per query type, coverage (documents with
    no questions), throughput per annotator and day, median time per item, agreement per
    week and LLM drafts (docs/team-workflow.md says how each is counted). Computed once per
    change to the project and kept (``generated_at`` says when they were computed)."""
    ws, project = open_project(request, name)
    blind = blind_to_unreviewed(request, project)
    return to_json(cached_dashboard(ws, project, days=days, reviewed_only=blind))


@router.get("/projects/{name}/dashboard", response_class=HTMLResponse, include_in_schema=False)
def dashboard_page(request: Request, name: str, days: Days = 28) -> HTMLResponse:
    ws, project = open_project(request, name)
    blind = blind_to_unreviewed(request, project)
    data = cached_dashboard(ws, project, days=days, reviewed_only=blind)
    return render(
        request,
        "dashboard.html",
        project=project,
        section="dashboard",
        data=data,
        days=days,
        fig=figures(data, project, translator(request)),
    )
