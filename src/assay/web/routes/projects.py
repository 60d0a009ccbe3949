"""Projects page, project home, language switch."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel

from assay.annotation import list_items
from assay.chunkings import list_chunkings
from assay.documents import count_documents
from assay.models import to_json
from assay.projects import LANGUAGES as PROJECT_LANGUAGES
from assay.projects import create_project, get_project, list_projects
from assay.web.i18n import COOKIE, LANGUAGES
from assay.web.render import render, workspace

router = APIRouter()


class ProjectIn(BaseModel):
    name: str
    language: str = "en"


def project_overview(request: Request, name: str) -> dict[str, Any]:
    ws = workspace(request)
    project = get_project(ws, name)
    by_status = {
        status: list_items(ws, project, status=status, limit=0)[0]
        for status in ("draft", "submitted", "accepted", "rejected")
    }
    return {
        "name": project.name,
        "language": project.language,
        "documents": count_documents(ws, project),
        "items": sum(by_status.values()),
        "items_by_status": by_status,
        "chunkings": [c.name for c in list_chunkings(ws, project)],
        "created_at": project.created_at,
    }


@router.get("/api/projects", tags=["projects"])
def api_projects(request: Request) -> Any:
    ws = workspace(request)
    return to_json(
        [
            {"name": p.name, "language": p.language, "documents": count_documents(ws, p)}
            for p in list_projects(ws)
        ]
    )


@router.post("/api/projects", status_code=201, tags=["projects"])
def api_create_project(request: Request, body: ProjectIn) -> Any:
    project = create_project(workspace(request), body.name, body.language)
    return to_json(project)


@router.get("/api/projects/{name}", tags=["projects"])
def api_project(request: Request, name: str) -> Any:
    return to_json(project_overview(request, name))


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def projects_page(request: Request) -> HTMLResponse:
    return render(
        request,
        "projects.html",
        projects=api_projects(request),
        project_languages=PROJECT_LANGUAGES,
    )


@router.get("/projects/{name}", response_class=HTMLResponse, include_in_schema=False)
def project_home(request: Request, name: str) -> HTMLResponse:
    overview = project_overview(request, name)
    return render(request, "project.html", project=overview, section="home")


@router.get("/language/{code}", include_in_schema=False)
def switch_language(code: str, next: str = "/") -> Response:
    """Remember the interface language in a cookie and go back (local paths only)."""
    target = next if next.startswith("/") and not urlsplit(next).netloc else "/"
    response = RedirectResponse(target, status_code=303)
    if code in LANGUAGES:
        response.set_cookie(COOKIE, code, max_age=365 * 24 * 3600, samesite="lax", path="/")
    return response
