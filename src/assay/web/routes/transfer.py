"""The transfer page and what imports and exports share: the formats, the jobs with live
progress (server-sent events), cancelling one, and the download of an export's file.

Starting a job is in ``routes.exports`` and ``routes.imports``; the jobs run on the
workspace's job queue and every server process reads their state from the database
(``jobs.transfer_jobs``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from assay.corpus.chunkings import list_chunkings
from assay.errors import Conflict
from assay.formats import formats
from assay.gold.project_config import mtrag_collection
from assay.jobs.transfer_jobs import DONE, EXPORT, RUNNING, TRANSFERS, local_file, project_jobs
from assay.jobs.transfer_work import cancel
from assay.store.projects import get_project
from assay.transfer import DEFAULT_STATUSES, STATUSES
from assay.web.render import render
from assay.web.routes.imports import UPLOAD_FACTOR
from assay.web.state import jobs, workspace
from assay.web.transfer_jobs import current_job, format_json, job_json, shown_formats

router = APIRouter()


@router.get("/api/formats", tags=["transfer"])
def api_formats() -> list[dict[str, Any]]:
    """The formats import and export understand, with whether they are folders and whether
    they name the chunks of one chunking."""
    return [format_json(spec) for spec in formats().values()]


# ---------------------------------------------------------------- jobs


@router.get("/api/projects/{name}/transfer/jobs", tags=["transfer"])
def api_jobs(request: Request, name: str) -> list[dict[str, Any]]:
    """The project's import and export jobs (started through any server process), newest
    first."""
    ws = workspace(request)
    project = get_project(ws, name)
    return [job_json(ws, job) for job in project_jobs(ws, project.name)]


@router.get("/api/projects/{name}/transfer/jobs/{job_id}", tags=["transfer"])
def api_job(request: Request, name: str, job_id: str) -> dict[str, Any]:
    """One job: state (running, done, failed, cancelled), stage (``queued`` until a worker
    takes it), done/total, message, result."""
    return job_json(workspace(request), current_job(request, name, job_id))


@router.post("/api/projects/{name}/transfer/jobs/{job_id}/cancel", tags=["transfer"])
def api_cancel(request: Request, name: str, job_id: str) -> dict[str, Any]:
    """Cancel a job: a queued one never starts, a running import is undone at its next batch
    (nothing of it stays), a running export stops; the job then reads ``cancelled``. A job
    that has ended stays as it ended."""
    ws = workspace(request)
    return job_json(ws, cancel(ws, jobs(request), current_job(request, name, job_id)))


@router.get(
    "/api/projects/{name}/transfer/jobs/{job_id}/events",
    tags=["transfer"],
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def api_job_events(request: Request, name: str, job_id: str) -> StreamingResponse:
    """Server-sent events: the job as JSON (``data:``) on every change, until it ends."""
    ws = workspace(request)
    await run_in_threadpool(current_job, request, name, job_id)  # 404 before the stream starts

    async def stream() -> AsyncIterator[str]:
        seen, quiet = -1, 0.0
        while True:
            job = await run_in_threadpool(current_job, request, name, job_id)
            data = job_json(ws, job)
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
    ws = workspace(request)
    job = current_job(request, name, job_id)
    file = local_file(ws, job.file) if job.kind == EXPORT and job.file else None
    if job.state != DONE or file is None or not file.is_file():
        raise Conflict(
            f"export job {job_id} has no file to download (state: {job.state})",
            key="raised.export_no_file",
            job_id=job_id,
            state=job.state,
        )
    media = "application/zip" if file.suffix == ".zip" else "application/octet-stream"
    return FileResponse(file, media_type=media, filename=file.name)


@router.get("/projects/{name}/transfer", response_class=HTMLResponse, include_in_schema=False)
def transfer_page(request: Request, name: str, format: str = "") -> HTMLResponse:
    """The page; ``format`` (a name from /api/formats) preselects the format of both forms."""
    ws = workspace(request)
    project = get_project(ws, name)
    chunkings = list_chunkings(ws, project)
    limit = UPLOAD_FACTOR * ws.settings.max_file_mb
    known = formats()
    shown = shown_formats(request)
    return render(
        request,
        "transfer.html",
        project=project,
        section="transfer",
        formats=shown,
        format_labels={f["name"]: f["label"] for f in shown},
        chosen_format=format if format in known else "",
        unknown_format=format if format and format not in known else "",
        chunkings=chunkings,
        statuses=STATUSES,
        default_statuses=DEFAULT_STATUSES,
        jobs=[job_json(ws, job) for job in project_jobs(ws, project.name, TRANSFERS)],
        upload_limit_mb=f"{limit:g}",
        mtrag_collection=mtrag_collection(project),
    )
