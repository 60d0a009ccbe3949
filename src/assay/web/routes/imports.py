"""Imports: an upload is kept under ``<ASSAY_HOME>/imports/<job id>/`` and read by an import
job on the workspace's queue (``jobs.transfer_work``), which removes the folder when it ends;
folders no queued or running import needs are removed when the app starts and before each
import (``jobs.transfer_jobs.clean_upload_folders``)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.errors import InvalidInput, NotFound
from assay.formats import get_format
from assay.jobs.transfer_jobs import TransferJob, clean_upload_folders
from assay.jobs.transfer_work import start_import
from assay.people.access import check
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer import STATUSES
from assay.web.actors import actor_id, request_actor
from assay.web.state import jobs, workspace
from assay.web.transfer_jobs import job_json
from assay.web.uploads import read_upload, too_large, upload_body

router = APIRouter()
UPLOAD_FACTOR = 20
"""An import file may be this many times ``ASSAY_MAX_FILE_MB`` (a dataset holds many files)."""
TRUE = ("1", "true", "on", "yes")

IMPORT_BODY = upload_body(
    {
        "format": {"type": "string", "description": "a name from /api/formats"},
        "project": {
            "type": "string",
            "description": "target project (created if missing); default: the project of the URL",
        },
        "lenient": {"type": "boolean"},
        "replace": {"type": "boolean"},
        "status": {
            "type": "string",
            "enum": ["", "draft", "submitted", "accepted", "rejected"],
            "description": "give every imported item this review status; "
            "empty keeps the file's (draft where the format has none)",
        },
        "confirm": {"type": "string", "description": "must be 'replace' when replace is true"},
    },
    required=("format",),
)


def _may_import_into(request: Request, target: str) -> None:
    """The guard checked the project of the URL; an import aimed at another project (the
    ``project`` field) needs ``import`` there, or ``project.create`` when it does not exist."""
    ws = workspace(request)
    actor = request_actor(request)
    try:
        other = get_project(ws, target)
    except NotFound:
        check(ws, actor, "project.create")
    else:
        check(ws, actor, "import", other)


@router.post(
    "/api/projects/{name}/transfer/imports",
    status_code=202,
    tags=["transfer"],
    openapi_extra=IMPORT_BODY,
    responses={413: {"description": "the file is over the upload limit"}},
)
async def api_import(request: Request, name: str) -> Response:
    """Upload a file (a zip of the folder for folder formats) and start an import job. The
    import is one transaction: a bad file fails the job and changes nothing. ``replace``
    needs ``confirm=replace``."""
    ws = workspace(request)
    project = await run_in_threadpool(get_project, ws, name)
    limit = UPLOAD_FACTOR * ws.settings.max_file_bytes
    upload = await read_upload(request, limit)
    if upload.too_large:
        return too_large(
            request, "transfer.too_large", upload.filename or "the file", limit / 1024 / 1024
        )
    spec = get_format(upload.fields.get("format", "").strip())
    spec.check_readable()
    replace = upload.fields.get("replace", "").lower() in TRUE
    lenient = upload.fields.get("lenient", "").lower() in TRUE
    status = upload.fields.get("status", "").strip() or None
    if status is not None and status not in STATUSES:
        raise InvalidInput(
            f"status: unknown status {status!r}; choose one of: {', '.join(STATUSES)}"
        )
    if replace and upload.fields.get("confirm") != "replace":
        raise InvalidInput(
            "replacing a project's content needs confirmation: send confirm=replace "
            "(nothing was imported)"
        )
    target = upload.fields.get("project", "").strip() or project.name
    if target != project.name:
        await run_in_threadpool(_may_import_into, request, target)
    options = {
        "target": target,
        "replace": replace,
        "lenient": lenient,
        "status": status,
        "actor": actor_id(request),
    }
    job = await run_in_threadpool(
        _start, ws, request, project.name, spec.name, bytes(upload.data), upload.filename, options
    )
    return JSONResponse(job_json(ws, job), status_code=202)


def _start(
    ws: Workspace,
    request: Request,
    project: str,
    format_name: str,
    data: bytes,
    filename: str | None,
    options: dict[str, Any],
) -> TransferJob:
    clean_upload_folders(ws)
    name = PurePath(filename or "upload").name or "upload"
    return start_import(ws, jobs(request), project, format_name, data, name, options)
