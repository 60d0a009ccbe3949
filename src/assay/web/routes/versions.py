"""Frozen dataset versions: the list with the create form (leads), one version, the diff of
two, and their JSON twins (``/api/projects/{name}/versions``, ``/api/projects/{name}/
version-diff?a=&b=``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.corpus.chunkings import list_chunkings
from assay.gold.statuses import DEFAULT_STATUSES
from assay.records import STATUSES, Project, to_json
from assay.review.version_diff import diff_versions
from assay.review.versions import (
    DatasetVersion,
    create_version,
    get_version,
    list_versions,
    read_snapshot,
)
from assay.store.workspace import Workspace
from assay.web.actors import actor_id
from assay.web.render import open_project, render
from assay.web.routes.history import shown_change
from assay.web.transfer_jobs import shown_formats

router = APIRouter()
SHOWN = 500
"""Items a page lists at most (of a version, or per list of a diff); the JSON has them all."""


class VersionIn(BaseModel):
    """Freeze the project's gold as a new version."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=200)
    statuses: list[str] = Field(default_factory=lambda: list(DEFAULT_STATUSES))
    chunking: str | None = None


def _items(ws: Workspace, version: DatasetVersion) -> list[dict[str, Any]]:
    """The version's items as its page lists them (from the snapshot, not the live items)."""
    return [
        {
            "id": i.id,
            "kind": i.kind,
            "status": i.status,
            "query": i.turns[0].query if i.turns else "",
            "query_type": i.turns[0].query_type if i.turns else "",
            "turns": len(i.turns),
            "evidence": sum(len(t.evidence) for t in i.turns),
        }
        for i in read_snapshot(ws, version).items
    ]


@router.get("/api/projects/{name}/versions", tags=["versions"])
def api_versions(request: Request, name: str) -> Any:
    """The project's frozen dataset versions, newest first."""
    ws, project = open_project(request, name)
    return to_json(list_versions(ws, project))


@router.post("/api/projects/{name}/versions", status_code=201, tags=["versions"])
def api_create_version(request: Request, name: str, body: VersionIn) -> Any:
    """Freeze the gold (accepted items unless ``statuses`` says otherwise) as version
    ``name``: 409 when the name is taken, 422 when there is nothing to freeze."""
    ws, project = open_project(request, name)
    made = create_version(
        ws,
        project,
        body.name,
        statuses=body.statuses,
        chunking=body.chunking or None,
        author=actor_id(request),
    )
    return to_json(made)


@router.get("/api/projects/{name}/versions/{version}", tags=["versions"])
def api_version(request: Request, name: str, version: str) -> Any:
    """One version and its items (read from its snapshot)."""
    ws, project = open_project(request, name)
    found = get_version(ws, project, version)
    return {"version": to_json(found), "items": _items(ws, found)}


@router.get("/api/projects/{name}/version-diff", tags=["versions"])
def api_version_diff(request: Request, name: str, a: str, b: str) -> Any:
    """What changed from version ``a`` to version ``b`` (404 naming the unknown ones)."""
    ws, project = open_project(request, name)
    return to_json(diff_versions(ws, project, a, b))


# ---------------------------------------------------------------- pages


def _base(project: Project) -> str:
    return f"/projects/{quote(project.name)}/versions"


@router.get("/projects/{name}/versions", response_class=HTMLResponse, include_in_schema=False)
def versions_page(request: Request, name: str) -> HTMLResponse:
    ws, project = open_project(request, name)
    found = list_versions(ws, project)
    return render(
        request,
        "versions.html",
        project=project,
        section="versions",
        versions=found,
        base_url=_base(project),
        statuses=STATUSES,
        chunkings=[c.name for c in list_chunkings(ws, project)],
        data={"api": f"/api/projects/{quote(project.name)}/versions"},
    )


@router.get(
    "/projects/{name}/versions/{version}", response_class=HTMLResponse, include_in_schema=False
)
def version_page(request: Request, name: str, version: str) -> HTMLResponse:
    ws, project = open_project(request, name)
    found = get_version(ws, project, version)
    return render(
        request,
        "version.html",
        project=project,
        section="versions",
        version=found,
        items=_items(ws, found),
        shown=SHOWN,
        base_url=_base(project),
        items_url=f"/projects/{quote(project.name)}/items",
        formats=shown_formats(request),
        exports_api=f"/api/projects/{quote(project.name)}/transfer/exports",
    )


@router.get("/projects/{name}/version-diff", response_class=HTMLResponse, include_in_schema=False)
def version_diff_page(request: Request, name: str, a: str, b: str) -> HTMLResponse:
    ws, project = open_project(request, name)
    diff = diff_versions(ws, project, a, b)
    changed = [
        {
            "id": entry.id,
            "query": entry.query,
            "changes": [shown_change(c) for c in entry.changes],
        }
        for entry in diff.changed[:SHOWN]
    ]
    return render(
        request,
        "version_diff.html",
        project=project,
        section="versions",
        diff=diff,
        changed=changed,
        shown=SHOWN,
        base_url=_base(project),
        versions=[v.name for v in list_versions(ws, project)],
    )
