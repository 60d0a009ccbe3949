"""Import and export pages: a format from the registry, a background job with live progress,
a download link for exports and a report for imports.

Jobs run in threads kept by the app's ``JobRegistry`` (``web.jobs``). An export writes into
``<ASSAY_HOME>/exports/<job id>/`` (folder formats are zipped for the download); an import
stores the upload under ``<ASSAY_HOME>/imports/<pid>-<random>/``, unpacks a zip of a folder
format with the same entry checks the readers use, and removes the folder when the job ends;
folders left by a killed server (its pid no longer runs) are removed when the app starts and
before each import.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import re
import shutil
import uuid
import zipfile
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool

from assay.corpus.anchoring import problems_json
from assay.corpus.chunkings import get_chunking, list_chunkings
from assay.errors import Conflict, InvalidInput
from assay.formats import FormatSpec, ItemRecord, Lazy, formats, get_format
from assay.formats.common import SafeZip
from assay.records import Project
from assay.store.import_lock import process_running
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer import (
    DEFAULT_STATUSES,
    STATUSES,
    ExportScope,
    ImportReport,
    choose_statuses,
    chosen_items,
    export_bundle,
    export_scope,
    import_bundle,
)
from assay.web.jobs import DONE, RUNNING, Job, JobRegistry
from assay.web.paths import upload_paths
from assay.web.render import render, translator, workspace
from assay.web.routes.documents import sync_quietly
from assay.web.uploads import read_upload

router = APIRouter()
UPLOAD_FACTOR = 20
"""An import file may be this many times ``ASSAY_MAX_FILE_MB`` (a dataset holds many files)."""
SHOWN = 50
"""Skipped and flagged records listed in an import report."""
TRUE = ("1", "true", "on", "yes")

IMPORT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file", "format"],
                    "properties": {
                        "file": {"type": "string", "format": "binary"},
                        "format": {"type": "string", "description": "a name from /api/formats"},
                        "project": {
                            "type": "string",
                            "description": "target project (created if missing); default: "
                            "the project of the URL",
                        },
                        "lenient": {"type": "boolean"},
                        "replace": {"type": "boolean"},
                        "status": {
                            "type": "string",
                            "enum": ["", "draft", "submitted", "accepted", "rejected"],
                            "description": "give every imported item this review status; "
                            "empty keeps the file's (draft where the format has none)",
                        },
                        "confirm": {
                            "type": "string",
                            "description": "must be 'replace' when replace is true",
                        },
                    },
                }
            }
        },
    }
}


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


def registry(request: Request) -> JobRegistry:
    jobs = request.app.state.transfer_jobs
    assert isinstance(jobs, JobRegistry)
    return jobs


def takes_folder(spec: FormatSpec) -> bool:
    """Formats written as a folder (AutoRAG, BEIR, TREC, Hugging Face): zipped for download."""
    return spec.extensions[:1] == ("",)


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
        "description": spec.description,
        "extensions": list(spec.extensions),
        "folder": takes_folder(spec),
        "chunking": uses_chunking(spec),
    }


def job_json(job: Job) -> dict[str, Any]:
    data = job.snapshot()
    base = f"/api/projects/{quote(job.project)}/transfer/jobs/{job.id}"
    data["events"] = f"{base}/events"
    data["download"] = f"{base}/download" if data["state"] == DONE and job.file else None
    return data


def safe_stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")[:80] or "assay"


# ---------------------------------------------------------------- export


def export_work(
    ws: Workspace,
    project: Project,
    spec: FormatSpec,
    chunking: str | None,
    statuses: Sequence[str] | None,
    scope: ExportScope,
    only: Sequence[str] | None = None,
) -> Callable[[Job], None]:
    def work(job: Job) -> None:
        folder = ws.settings.home / "exports" / job.id
        folder.mkdir(parents=True, exist_ok=True)
        total = scope.items
        job.progress("documents", 0, total)
        bundle = export_bundle(
            ws,
            project,
            chunking=chunking,
            statuses=statuses,
            items=only,
            needs_review=scope.needs_review,
        )
        items = bundle.items

        def counting() -> Iterator[ItemRecord]:
            job.progress("items", 0, total)
            for number, item in enumerate(items, 1):
                if number % 100 == 0 or number == total:
                    job.progress("items", number, total)
                yield item

        bundle.items = Lazy(counting)
        stem = f"{safe_stem(project.name)}-{spec.name}"
        options = {"chunking": bundle.target_chunking} if bundle.target_chunking else {}
        if takes_folder(spec):
            notes = spec.write(bundle, folder / stem, **options)
            job.progress("zip", total, total)
            archive = shutil.make_archive(str(folder / stem), "zip", folder, stem)
            shutil.rmtree(folder / stem)
            output = Path(archive)
        else:
            output = folder / f"{stem}{spec.extensions[0]}"
            notes = spec.write(bundle, output, **options)
        job.update(
            file=output,
            result={
                "items": total,
                "size": output.stat().st_size,
                "statuses": list(statuses or STATUSES),
                "left_out": scope.left_out,
                "needs_review": problems_json(scope.needs_review)[:SHOWN],
                "needs_review_count": len(scope.needs_review),
                "notes": notes[:SHOWN],
            },
        )

    return work


@router.get("/api/formats", tags=["transfer"])
def api_formats() -> list[dict[str, Any]]:
    """The formats import and export understand, with whether they are folders and whether
    they name the chunks of one chunking."""
    return [format_json(spec) for spec in formats().values()]


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
    job = registry(request).start(
        "export",
        project.name,
        spec.name,
        export_work(ws, project, spec, chunking, statuses, scope, only),
    )
    return JSONResponse(job_json(job), status_code=202)


# ---------------------------------------------------------------- import


def unpack(archive: Path, target: Path) -> Path:
    """Unpack a zip of a folder format, checking every entry like the readers do (no ``..``,
    no absolute paths, size and ratio limits); a single top folder is stepped into."""
    with SafeZip(archive) as zf:
        for name in zf.entries:
            if name.startswith("__MACOSX/") or name.rsplit("/", 1)[-1] == ".DS_Store":
                continue
            dest = target / name
            if not dest.resolve().is_relative_to(target.resolve()):
                raise InvalidInput(f"{archive.name}: unsafe entry name {name!r}")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(zf.read(name))
    entries = list(target.iterdir()) if target.exists() else []
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return target


def input_path(spec: FormatSpec, upload: Path, folder: Path) -> Path:
    """What the reader gets: the file itself, or the folder a zip holds for folder formats."""
    if not takes_folder(spec) or upload.suffix.lower() in spec.extensions:
        return upload
    if zipfile.is_zipfile(upload):
        return unpack(upload, folder / "data")
    raise InvalidInput(
        f"{upload.name}: the {spec.name} format is a folder; upload a zip of the folder"
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


def clean_upload_folders(ws: Workspace) -> int:
    """Remove upload folders of imports whose server process no longer runs (killed
    mid-import: its ``finally`` never ran); returns how many were removed."""
    root = ws.settings.home / "imports"
    removed = 0
    for folder in root.iterdir() if root.is_dir() else ():
        pid, _, _ = folder.name.partition("-")
        if folder.is_dir() and not (pid.isdigit() and process_running(int(pid))):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def import_work(
    ws: Workspace,
    spec: FormatSpec,
    upload: Path,
    target: str,
    replace: bool,
    lenient: bool,
    status: str | None = None,
) -> Callable[[Job], None]:
    def work(job: Job) -> None:
        try:
            job.progress("reading", 0, None)
            bundle = spec.read(input_path(spec, upload, upload.parent))
            report = import_bundle(
                ws,
                target,
                bundle,
                replace=replace,
                lenient=lenient,
                progress=job.progress,
                status=status,
            )
            job.progress("indexing", 0, None)
            sync_quietly(ws, get_project(ws, report.project))
            job.update(result=report_json(report))
        finally:
            shutil.rmtree(upload.parent, ignore_errors=True)

    return work


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
        detail = translator(request)(
            "transfer.too_large",
            name=upload.filename or "the file",
            limit=f"{limit / 1024 / 1024:g}",
        )
        return JSONResponse({"detail": detail}, status_code=413)
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
        import_work(ws, spec, stored, target, replace, lenient, status),
        paths=shown,
    )
    return JSONResponse(job_json(job), status_code=202)


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
    job = registry(request).get(job_id, name)

    async def stream() -> AsyncIterator[str]:
        seen, quiet = -1, 0.0
        while True:
            data = job_json(job)
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
