"""What the import and export routes share: the JSON of formats and of jobs.

Jobs run on the workspace's job queue (``jobs.transfer_work``); their state is a row that
every server process reads (``jobs.transfer_jobs``), so any process answers about any job.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any
from urllib.parse import quote

from fastapi import Request

from assay.formats import FormatSpec, formats
from assay.jobs.transfer_jobs import DONE, EXPORT, IMPORT, TransferJob, get_job, upload_folder
from assay.jobs.transfer_work import settle_interrupted
from assay.store.workspace import Workspace
from assay.transfer.files import takes_folder
from assay.web.paths import hide_paths, upload_paths, workspace_paths
from assay.web.render import translator
from assay.web.state import jobs, workspace


def uses_chunking(spec: FormatSpec) -> bool:
    """Whether the writer names the chunks of one chunking (its ``chunking`` option)."""
    try:
        module = importlib.import_module(f"assay.formats.{spec.module}")
        return "chunking" in inspect.signature(module.write).parameters
    except (ImportError, AttributeError, ValueError):
        return False


def format_json(spec: FormatSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "label": spec.label or spec.name,
        "description": spec.description,
        "extensions": list(spec.extensions),
        "folder": takes_folder(spec),
        "chunking": uses_chunking(spec),
        "imports": not spec.exports_only,
    }


def shown_formats(request: Request) -> list[dict[str, Any]]:
    """Every format as the pages' pickers show it: its JSON with label and help in the
    reader's language."""
    t = translator(request)
    return [
        {
            **format_json(spec),
            "label": t(f"format.{spec.name}.label"),
            "help": t(f"format.{spec.name}.description"),
        }
        for spec in formats().values()
    ]


def current_job(request: Request, project: str, job_id: str) -> TransferJob:
    """The job as its row says now (404 when the project has no such job); one whose worker
    left the queue without ending it reads as failed."""
    ws = workspace(request)
    return settle_interrupted(ws, jobs(request), get_job(ws, job_id, project))


def job_json(ws: Workspace, job: TransferJob) -> dict[str, Any]:
    """The job for the page and the API; its message names an upload as the user named it,
    never by where the server keeps it."""
    base = f"/api/projects/{quote(job.project)}/transfer/jobs/{job.id}"
    export_file = job.filename if job.kind == EXPORT else None
    return {
        "id": job.id,
        "kind": job.kind,
        "project": job.project,
        "format": job.format,
        "state": job.state,
        "stage": job.stage,
        "done": job.done,
        "total": job.total,
        "message": hide_paths(job.message, _shown_paths(ws, job)),
        "filename": export_file,
        "result": job.result or {},
        "created_at": job.created_at.isoformat(),
        "version": job.version,
        "events": f"{base}/events",
        "cancel": f"{base}/cancel",
        "download": f"{base}/download" if job.state == DONE and export_file else None,
    }


def _shown_paths(ws: Workspace, job: TransferJob) -> dict[str, str]:
    home = ws.settings.home
    if job.kind != IMPORT or not job.file:
        return workspace_paths(home)
    return upload_paths(home, upload_folder(ws, job.id), home / job.file, job.filename or "")
