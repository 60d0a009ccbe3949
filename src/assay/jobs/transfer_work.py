"""What an import or export job does, from being queued to its end (its row:
``jobs.transfer_jobs``).

**Never applied twice.** An import lands whole or not at all (``transfer.batches``): a run
killed midway is undone when the next import starts, so the job runs again from the start.
Its report is written in the import's last batch, so it commits with the import; a job whose
row holds a report only brings the search indexes up to date and ends. An export is written
anew. **Cancel**: a queued job is dropped; a running one stops at its next progress (an
import at its next batch, undoing what it wrote) and ends ``cancelled``.
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from assay.errors import AssayError, InvalidInput, NotFound
from assay.formats import get_format
from assay.jobs.transfer_jobs import (
    CANCELLED,
    DONE,
    EXPORT,
    FAILED,
    IMPORT,
    RUNNING,
    TransferJob,
    ask_to_cancel,
    cancel_requested,
    end_job,
    export_folder,
    get_job,
    local_file,
    new_id,
    new_job,
    share_file,
    update_job,
    upload_folder,
    workspace_file,
)
from assay.search.indexes import sync_project
from assay.store.import_lock import ask_for_turn
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.transfer import ImportReport, import_bundle
from assay.transfer.files import input_path, safe_stem
from assay.transfer.project_export import (
    ExportOptions,
    ExportPlan,
    plan_export,
    write_export_file,
)

if TYPE_CHECKING:
    from assay.jobs import Jobs

log = logging.getLogger(__name__)
SHOWN = 50
"""Skipped and flagged records kept in an import's report, and notes of an export."""
PROGRESS_EVERY_S = 0.2
"""Progress within a stage is written (and a cancel looked for) at most this often."""


class Cancelled(Exception):
    """Raised inside a job's work when a cancel was asked for (never an ``AssayError``: a
    lenient import must not take it for a bad record)."""


# ---------------------------------------------------------------- starting


def start_import(
    ws: Workspace,
    jobs: Jobs,
    project: str,
    format_name: str,
    data: bytes,
    filename: str,
    options: dict[str, Any],
) -> TransferJob:
    """Keep the upload in the workspace folder and queue its import into ``options["target"]``
    (with ``replace``, ``lenient``, ``status``, ``actor``: see ``import_bundle``)."""
    job_id = new_id()
    stored = upload_folder(ws, job_id) / safe_stem(Path(filename).name)
    upload = stored.relative_to(ws.settings.home).as_posix()
    # the row first: an upload folder without a running import's row is removed as left over
    new_job(ws, IMPORT, project, format_name, job_id=job_id, file=upload, filename=filename)
    try:
        stored.parent.mkdir(parents=True)
        stored.write_bytes(data)
        share_file(ws, upload)
    except OSError as exc:
        end_job(ws, job_id, FAILED, f"the upload could not be kept: {exc.strerror}")
        raise
    payload = {"transfer": job_id, "format": format_name, "upload": upload, **options}
    return queue_job(ws, jobs, IMPORT, payload)


def start_export(ws: Workspace, jobs: Jobs, project: str, plan: ExportPlan) -> TransferJob:
    """Queue an export with the plan's options (checked again when the job runs: the
    project may change while it waits)."""
    job_id = new_job(ws, EXPORT, project, plan.spec.name)
    output = export_folder(ws, job_id).relative_to(ws.settings.home).as_posix()
    payload = {"transfer": job_id, "output": output, **plan.stored()}
    return queue_job(ws, jobs, EXPORT, payload)


def queue_job(ws: Workspace, jobs: Jobs, kind: str, payload: dict[str, Any]) -> TransferJob:
    """Put the job of a row just made on the queue; a failure to queue ends the row failed."""
    job_id = payload["transfer"]
    try:
        jobs.submit(kind, payload)  # a new id: never already queued
    except BaseException:
        end_job(ws, job_id, FAILED, "the job could not be queued")
        raise
    return get_job(ws, job_id)


def settle_interrupted(ws: Workspace, jobs: Jobs, job: TransferJob) -> TransferJob:
    """A job a worker started that is no longer queued nor running yet reads ``running``
    (its queue entry failed or was removed) ends as failed. Its work ends its row before it
    leaves the queue, so a job that finished is never caught here."""
    if job.state != RUNNING or not job.started:
        return job
    if jobs.active(job.kind, {"transfer": job.id}):
        return job
    end_job(ws, job.id, FAILED, "interrupted: the job stopped before it finished; run it again")
    return get_job(ws, job.id)


def cancel(ws: Workspace, jobs: Jobs, job: TransferJob) -> TransferJob:
    """Cancel a queued or running job (a finished one stays as it ended)."""
    if job.state != RUNNING:
        return job
    ask_to_cancel(ws, job.id)
    jobs.cancel(job.kind, {"transfer": job.id})
    if not job.started and not jobs.active(job.kind, {"transfer": job.id}):
        end_job(ws, job.id, CANCELLED, "cancelled before it started")
    return get_job(ws, job.id)


# ---------------------------------------------------------------- running


def run_import(ws: Workspace, payload: dict[str, Any]) -> None:
    job_id = str(payload["transfer"])
    job = take_job(ws, job_id)
    if job is None:
        return
    try:
        if job.result is None:  # not applied: from the start (a killed run was undone)
            report = _import(ws, job_id, payload)
            project = report.project
        else:
            project = str(job.result["project"])
    except Cancelled:
        end_job(ws, job_id, CANCELLED, "cancelled; nothing was imported")
        return
    except Exception as exc:
        fail_job(ws, job_id, exc)
        return
    update_job(ws, job_id, stage="indexing", done=0, total=None)
    try:
        sync_project(ws, get_project(ws, project))
    except Exception:  # the import is in: a busy or broken index catches up on a search
        log.exception("import job %s: the search indexes did not sync", job_id)
    end_job(ws, job_id, DONE)


def _import(ws: Workspace, job_id: str, payload: dict[str, Any]) -> ImportReport:
    update_job(ws, job_id, stage="reading", done=0, total=None)
    spec = get_format(str(payload["format"]))
    upload = local_file(ws, str(payload["upload"]))
    if not upload.is_file():
        raise InvalidInput(
            f"{upload.name}: the uploaded file is no longer stored (neither in the workspace "
            "folder nor, in team mode, in the database); upload it again"
        )
    watch = _ImportWatch(ws, job_id)
    return import_bundle(
        ws,
        str(payload["target"]),
        spec.stream(input_path(spec, upload, upload.parent)),
        replace=bool(payload["replace"]),
        lenient=bool(payload["lenient"]),
        progress=watch.progress,
        status=payload.get("status"),
        actor=payload.get("actor"),
        watcher=watch,
    )


def run_export(ws: Workspace, payload: dict[str, Any]) -> None:
    job_id = str(payload["transfer"])
    job = take_job(ws, job_id)
    if job is None:
        return
    # a folder of this run's own: a run cut short, or a second run of a job whose worker
    # seemed gone, never writes into a file another run offers
    folder = workspace_file(ws, str(payload["output"])) / new_id()
    kept = False
    try:
        output, result = _export(ws, job, folder, payload)
        file = output.relative_to(ws.settings.home.resolve()).as_posix()
        share_file(ws, file)
        kept = end_job(ws, job_id, DONE, file=file, filename=output.name, result=result)
    except Cancelled:
        end_job(ws, job_id, CANCELLED, "cancelled")
    except Exception as exc:
        fail_job(ws, job_id, exc)
    finally:
        if not kept:
            shutil.rmtree(folder, ignore_errors=True)


def _export(
    ws: Workspace, job: TransferJob, folder: Path, payload: dict[str, Any]
) -> tuple[Path, dict[str, Any]]:
    project = get_project(ws, job.project)
    plan = plan_export(ws, project, ExportOptions.from_json(payload))
    progress = JobProgress(ws, job.id)
    total = plan.scope.items
    folder.mkdir(parents=True, exist_ok=True)
    version = f"-{plan.version.name}" if plan.version else ""
    stem = safe_stem(f"{project.name}{version}-{plan.spec.name}")
    result = write_export_file(
        ws, plan, folder, stem, progress, lambda: progress("zip", total, total)
    )
    return result.path, {**result.to_json(shown=SHOWN), "size": result.path.stat().st_size}


def take_job(ws: Workspace, job_id: str) -> TransferJob | None:
    """The job to run, or None: gone, ended, or cancelled while it waited (then ended).
    Every kind of job with a ``transfer_jobs`` row starts with this."""
    try:
        job = get_job(ws, job_id)
    except NotFound:
        return None
    if job.state != RUNNING:
        return None
    if job.cancel_requested:
        end_job(ws, job_id, CANCELLED, "cancelled before it started")
        return None
    if not job.started:
        update_job(ws, job_id, stage="starting")
    return job


def fail_job(ws: Workspace, job_id: str, exc: Exception) -> None:
    """End the job with a message for a human: an Assay error says what is wrong (file and
    line for a bad file); anything else is a bug, logged with its traceback."""
    if isinstance(exc, AssayError):
        end_job(ws, job_id, FAILED, str(exc))
        return
    log.error("transfer job %s failed", job_id, exc_info=exc)
    end_job(ws, job_id, FAILED, f"unexpected error: {exc!r}")


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


# ---------------------------------------------------------------- progress


class JobProgress:
    """A job's progress, written to its row on a new stage and otherwise at most every
    ``PROGRESS_EVERY_S``; each write also looks for a cancel."""

    def __init__(self, ws: Workspace, job_id: str) -> None:
        self.ws = ws
        self.job_id = job_id
        self.stage, self.done = "", 0
        self.total: int | None = None
        self.written: tuple[str, float] = ("", 0.0)

    def progress(self, stage: str, done: int, total: int | None) -> None:
        """Only remember (``write`` writes)."""
        self.stage, self.done, self.total = stage, done, total

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        self.progress(stage, done, total)
        if self.due():
            with self.ws.engine.begin() as conn:
                ask_for_turn(conn)  # SQLite: an import elsewhere lets this in at its next record
                self.write(conn)

    def due(self) -> bool:
        stage, at = self.written
        return stage != self.stage or time.monotonic() - at >= PROGRESS_EVERY_S

    def write(self, conn: sa.Connection) -> None:
        update_job(self.ws, self.job_id, conn, stage=self.stage, done=self.done, total=self.total)
        self.written = (self.stage, time.monotonic())
        if cancel_requested(conn, self.job_id):
            raise Cancelled


class _ImportWatch(JobProgress):
    """An import's progress, written in its own batches (``transfer.importing.Watcher``)."""

    def batch(self, conn: sa.Connection) -> None:
        if self.stage and self.due():
            self.write(conn)

    def applied(self, conn: sa.Connection, report: ImportReport) -> None:
        update_job(self.ws, self.job_id, conn, result=report_json(report))
