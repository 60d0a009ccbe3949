"""Exports: an export job on the workspace's queue (``jobs.transfer_work``) writes the
project in a format into ``<ASSAY_HOME>/exports/<job id>/`` (folder formats zipped) for the
download link of ``routes.transfer``."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from assay.jobs.transfer_work import start_export
from assay.store.projects import get_project
from assay.transfer.project_export import ExportOptions, plan_export
from assay.web.state import jobs, workspace
from assay.web.transfer_jobs import job_json

router = APIRouter()


class ExportIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: str
    chunking: str | None = None
    statuses: list[str] | None = None
    """Statuses of the items to export (or ``all``); default: accepted."""
    allow_empty: bool = False
    """Export even when no item has the chosen statuses (else 422)."""
    items: list[str] | None = None
    """Export exactly these items, whatever their status (``statuses`` is then ignored)."""
    strict: bool = False
    """Refuse (422, naming the items) when an item's evidence no longer matches its document,
    instead of leaving the item out and listing it in ``needs_review``."""
    include_unanswerable: bool = False
    """AutoRAG: also write questions without ``retrieval_gt`` (AutoRAG's own loader refuses
    them, so they are left out and named in the notes by default)."""
    version: str | None = None
    """Export this frozen dataset version (its snapshot and frozen chunking) instead of the
    live items; the other options but ``format`` and ``include_unanswerable`` then do not
    apply. 404 for a version the project does not have."""


@router.post("/api/projects/{name}/transfer/exports", status_code=202, tags=["transfer"])
def api_export(request: Request, name: str, body: ExportIn) -> JSONResponse:
    """Start an export job; follow it at ``events`` (server-sent events) or by polling the job,
    then fetch ``download``."""
    ws = workspace(request)
    project = get_project(ws, name)
    options = ExportOptions(
        body.format,
        chunking=body.chunking or None,
        statuses=body.statuses,
        items=body.items,
        allow_empty=body.allow_empty,
        strict=body.strict,
        include_unanswerable=body.include_unanswerable,
        version=body.version or None,
    )
    plan = plan_export(ws, project, options, names=("'statuses'", "'allow_empty'"))
    job = start_export(ws, jobs(request), project.name, plan)
    return JSONResponse(job_json(ws, job), status_code=202)
