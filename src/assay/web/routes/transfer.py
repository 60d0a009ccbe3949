"""The transfer page and what imports and exports share: the formats, the jobs with live
progress (server-sent events) and the download of an export's file.

Starting a job is in ``routes.exports`` and ``routes.imports``; the jobs run in threads kept
by the app's ``JobRegistry`` (``web.jobs``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, StreamingResponse

from assay.corpus.chunkings import list_chunkings
from assay.errors import Conflict, NotFound
from assay.formats import formats
from assay.store.projects import get_project
from assay.transfer import DEFAULT_STATUSES, STATUSES
from assay.web.jobs import DONE, RUNNING
from assay.web.render import render
from assay.web.routes.imports import UPLOAD_FACTOR
from assay.web.state import workspace
from assay.web.transfer_jobs import format_json, job_json, registry

router = APIRouter()


@router.get("/api/formats", tags=["transfer"])
def api_formats() -> list[dict[str, Any]]:
    """The formats import and export understand, with whether they are folders and whether
    they name the chunks of one chunking."""
    return [format_json(spec) for spec in formats().values()]


# ---------------------------------------------------------------- jobs


@router.get("/api/projects/{name}/transfer/jobs", tags=["transfer"])
def api_jobs(request: Request, name: str) -> list[dict[str, Any]]:
    """This app's import and export jobs of the project, newest first."""
    project = get_project(workspace(request), name)
    return [job_json(job) for job in registry(request).for_project(project.name)]


@router.get("/api/projects/{name}/transfer/jobs/{job_id}", tags=["transfer"])
def api_job(request: Request, name: str, job_id: str) -> dict[str, Any]:
    """One job: state (running, done, failed), stage, done/total, message, result."""
    return job_json(registry(request).get(job_id, name))


@router.get(
    "/api/projects/{name}/transfer/jobs/{job_id}/events",
    tags=["transfer"],
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def api_job_events(request: Request, name: str, job_id: str) -> StreamingResponse:
    """Server-sent events: the job as JSON (``data:``) on every change, until it ends."""
    jobs = registry(request)
    jobs.get(job_id, name)  # 404 before the stream starts

    async def stream() -> AsyncIterator[str]:
        seen, quiet = -1, 0.0
        while True:
            try:
                data = job_json(jobs.get(job_id, name))  # another process's job: read anew
            except NotFound:  # forgotten meanwhile (the registry keeps the newest jobs)
                return
            if data["version"] != seen:
                seen, quiet = data["version"], 0.0
                yield f"data: {json.dumps(data)}\n\n"
            if data["state"] != RUNNING or await request.is_disconnected():
                return
            await asyncio.sleep(0.2)
            quiet += 0.2
            if quiet >= 15:
                quiet = 0.0
                yield ": still working\n\n"

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)


@router.get("/api/projects/{name}/transfer/jobs/{job_id}/download", tags=["transfer"])
def api_download(request: Request, name: str, job_id: str) -> FileResponse:
    """The file an export job wrote (folder formats as a zip)."""
    job = registry(request).get(job_id, name)
    if job.state != DONE or job.file is None or not job.file.exists():
        raise Conflict(f"export job {job_id} has no file to download (state: {job.state})")
    media = "application/zip" if job.file.suffix == ".zip" else "application/octet-stream"
    return FileResponse(job.file, media_type=media, filename=job.file.name)


@router.get("/projects/{name}/transfer", response_class=HTMLResponse, include_in_schema=False)
def transfer_page(request: Request, name: str) -> HTMLResponse:
    ws = workspace(request)
    project = get_project(ws, name)
    chunkings = list_chunkings(ws, project)
    limit = UPLOAD_FACTOR * ws.settings.max_file_mb
    return render(
        request,
        "transfer.html",
        project=project,
        section="transfer",
        formats=[format_json(spec) for spec in formats().values()],
        chunkings=chunkings,
        statuses=STATUSES,
        default_statuses=DEFAULT_STATUSES,
        jobs=[job_json(job) for job in registry(request).for_project(project.name)],
        upload_limit_mb=f"{limit:g}",
    )
