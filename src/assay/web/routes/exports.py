"""Exports: an export job on the workspace's queue (``jobs.transfer_work``) writes the
project in a format into ``<ASSAY_HOME>/exports/<job id>/`` (folder formats zipped) for the
download link of ``routes.transfer``."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from assay.corpus.chunkings import get_chunking
from assay.errors import InvalidInput
from assay.formats import get_format
from assay.jobs.transfer_work import start_export
from assay.store.projects import get_project
from assay.transfer import choose_statuses, chosen_items, export_scope
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


@router.post("/api/projects/{name}/transfer/exports", status_code=202, tags=["transfer"])
def api_export(request: Request, name: str, body: ExportIn) -> JSONResponse:
    """Start an export job; follow it at ``events`` (server-sent events) or by polling the job,
    then fetch ``download``."""
    ws = workspace(request)
    project = get_project(ws, name)
    spec = get_format(body.format)
    chunking = body.chunking or None
    if chunking is not None:
        get_chunking(ws, project, chunking)  # NotFound names the chunkings there are
    if body.statuses is not None and not body.statuses:
        raise InvalidInput("choose at least one status to export (or 'all')")
    statuses = choose_statuses(body.statuses)
    scope = export_scope(ws, project, statuses)
    only = None
    if body.items is not None:
        only = chosen_items(ws, project, body.items)
        scope = export_scope(ws, project, None, items=only)
    if body.strict and scope.needs_review:
        raise InvalidInput(scope.strict_message(project.name))
    if scope.items == 0 and not body.allow_empty:
        raise InvalidInput(scope.empty_message(project.name, "'statuses'", "'allow_empty'"))
    job = start_export(ws, jobs(request), project.name, spec.name, chunking, statuses, only)
    return JSONResponse(job_json(ws, job), status_code=202)
