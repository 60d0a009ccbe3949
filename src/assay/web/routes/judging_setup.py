"""The judging setup page of leads and owners: the rating scale, the uploads of topics, runs
and judgments made elsewhere (the offline page's JSON Lines), and the downloads (judgments as
autojudge JSON Lines, the offline page). The page calls the JSON API of
``routes.judging_api`` and ``PUT .../settings``; nothing here writes by itself."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from assay.gold.project_config import DEFAULT_JUDGING_RATINGS, judging_ratings
from assay.judging.reports import list_reports, list_topics
from assay.web.render import open_project, render
from assay.web.routes.imports import UPLOAD_FACTOR

router = APIRouter()


@router.get("/projects/{name}/judging-setup", response_class=HTMLResponse, include_in_schema=False)
def judging_setup_page(request: Request, name: str) -> HTMLResponse:
    ws, project = open_project(request, name)
    quoted = quote(project.name)
    reports = list_reports(ws, project)
    return render(
        request,
        "judging_setup.html",
        project=project,
        section="judging",
        ratings=list(judging_ratings(project)),
        default_ratings=list(DEFAULT_JUDGING_RATINGS),
        topics=len(list_topics(ws, project)),
        runs=len({r.run_id for r in reports}),
        api=f"/api/projects/{quoted}/judging",
        settings_api=f"/api/projects/{quoted}/settings",
        overview_url=f"/projects/{quoted}/judging",
        upload_limit_mb=f"{UPLOAD_FACTOR * ws.settings.max_file_mb:g}",
    )
