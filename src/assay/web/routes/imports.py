"""Imports: an upload is stored under ``<ASSAY_HOME>/imports/<pid>-<random>/`` and read by a
background job that writes it into a project and removes the folder when it ends; folders
left by a killed server (its pid no longer runs) are removed when the app starts and before
each import (``transfer.files.clean_upload_folders``)."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.errors import InvalidInput, NotFound
from assay.formats import FormatSpec, get_format
from assay.people.access import check
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer import STATUSES, ImportReport, import_bundle
from assay.transfer.files import clean_upload_folders, input_path, safe_stem
from assay.web.actors import actor_id, request_actor
from assay.web.jobs import Job
from assay.web.paths import upload_paths
from assay.web.routes.documents import sync_quietly
from assay.web.state import workspace
from assay.web.transfer_jobs import SHOWN, job_json, registry
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


def report_json(report: ImportReport) -> dict[str, Any]:
    """``summary``: per kind, ``imported`` (stored), ``flagged`` (stored, with a warning),
    ``skipped`` (left out); ``noted``: the flagged and skipped records."""
    noted = report.noted()
    return {
        "project": report.project,
        "summary": report.summary(),
        "noted": [
            {"kind": o.kind, "ref": o.ref, "status": o.status, "message": o.message}
            for o in noted[:SHOWN]
        ],
        "noted_total": len(noted),
    }


def import_work(
    ws: Workspace,
    spec: FormatSpec,
    upload: Path,
    target: str,
    replace: bool,
    lenient: bool,
    status: str | None = None,
    actor: int | None = None,
) -> Callable[[Job], None]:
    def work(job: Job) -> None:
        try:
            job.progress("reading", 0, None)
            bundle = spec.stream(input_path(spec, upload, upload.parent))
            report = import_bundle(
                ws,
                target,
                bundle,
                replace=replace,
                lenient=lenient,
                progress=job.progress,
                status=status,
                actor=actor,
            )
            job.progress("indexing", 0, None)
            sync_quietly(ws, get_project(ws, report.project))
            job.update(result=report_json(report))
        finally:
            shutil.rmtree(upload.parent, ignore_errors=True)

    return work


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
    clean_upload_folders(ws)
    folder = ws.settings.home / "imports" / f"{os.getpid()}-{uuid.uuid4().hex}"
    folder.mkdir(parents=True)
    stored = folder / safe_stem(Path(upload.filename or "upload").name)
    stored.write_bytes(bytes(upload.data))
    shown = upload_paths(ws.settings.home, folder, stored, Path(upload.filename or "upload").name)
    job = registry(request).start(
        "import",
        project.name,
        spec.name,
        import_work(ws, spec, stored, target, replace, lenient, status, actor_id(request)),
        paths=shown,
    )
    return JSONResponse(job_json(job), status_code=202)
