"""Import and export jobs of the web app: their row in ``transfer_jobs``, which every server
process reads.

A job is a row (state, stage, progress counts, message, result, its file) plus a job on the
queue (``jobs.kinds``: ``import`` or ``export``, the payload naming the row). The row is made
before the job is queued, in state ``running`` at stage ``queued``; the job that runs it
writes its progress and ends it as ``done``, ``failed`` or ``cancelled``. Files live in the
workspace folder and the row names them relative to it: an import's upload in
``imports/<id>/``, an export's output in ``exports/<id>/<run>/``. In team mode on PostgreSQL
they are saved in the database too (:func:`share_file`), so a worker or server with a folder
of its own reads them (:func:`local_file`).
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from assay.errors import InvalidInput, NotFound
from assay.store.db import as_utc, record_from_row, utcnow
from assay.store.import_lock import ask_for_turn
from assay.store.jobs_schema import transfer_jobs
from assay.store.workspace import Workspace

IMPORT, EXPORT = "import", "export"
"""The kinds of transfer jobs, on the queue (``jobs.kinds``) and in their rows."""
SYNTHESIS = "synthesis"
"""LLM drafts of a project (``jobs.synthesis_work``): a job with the same kind of row (state,
progress, message, result), though it moves no file."""
TRANSFERS = (IMPORT, EXPORT)
RUNNING, DONE, FAILED, CANCELLED = "running", "done", "failed", "cancelled"
QUEUED = "queued"
"""The stage of a running job no worker has started yet."""
KEEP = 200
"""Finished jobs kept per project (older ones go with their files)."""


@dataclass(frozen=True, slots=True)
class TransferJob:
    id: str
    kind: str
    """``import``, ``export`` or ``synthesis``."""
    project: str
    format: str
    state: str
    stage: str
    done: int
    total: int | None
    message: str
    file: str | None
    """Relative to the workspace folder: the import's upload, the export's output."""
    filename: str | None
    """What the user knows the file as: the uploaded name, the export's file name."""
    result: dict[str, Any] | None
    cancel_requested: bool
    version: int
    created_at: datetime

    @property
    def started(self) -> bool:
        """Whether a worker has taken it (a running job past its ``queued`` stage)."""
        return self.stage != QUEUED


def new_job(
    ws: Workspace,
    kind: str,
    project: str,
    format_name: str,
    *,
    job_id: str | None = None,
    file: str | None = None,
    filename: str | None = None,
) -> str:
    """Make the row of a job about to be queued; old finished jobs of the project go."""
    job_id = job_id or new_id()
    now = utcnow()
    with ws.engine.begin() as conn:
        conn.execute(
            transfer_jobs.insert().values(
                id=job_id, kind=kind, project=project, format=format_name, state=RUNNING,
                stage=QUEUED, done=0, total=None, message="", file=file, filename=filename,
                result=None, cancel_requested=False, version=1, created_at=now, updated_at=now,
            )
        )  # fmt: skip
    _forget_old(ws, project)
    return job_id


def new_id() -> str:
    return uuid.uuid4().hex


def get_job(ws: Workspace, job_id: str, project: str | None = None) -> TransferJob:
    with ws.engine.connect() as conn:
        row = conn.execute(sa.select(transfer_jobs).where(transfer_jobs.c.id == job_id)).first()
    if row is None or (project is not None and row.project != project):
        raise NotFound(f"no transfer job {job_id!r} in project {project!r}")
    return _job_of(row)


def project_jobs(
    ws: Workspace, project: str, kinds: tuple[str, ...] | None = None
) -> list[TransferJob]:
    """The project's jobs (of these ``kinds``: default all), newest first."""
    query = sa.select(transfer_jobs).where(transfer_jobs.c.project == project)
    if kinds is not None:
        query = query.where(transfer_jobs.c.kind.in_(kinds))
    with ws.engine.connect() as conn:
        rows = conn.execute(query.order_by(transfer_jobs.c.created_at.desc(), transfer_jobs.c.id))
        return [_job_of(row) for row in rows]


def update_job(
    ws: Workspace, job_id: str, conn: sa.Connection | None = None, **values: Any
) -> None:
    """Change a running job (a finished one stays as it ended)."""
    change = (
        transfer_jobs.update()
        .where(transfer_jobs.c.id == job_id, transfer_jobs.c.state == RUNNING)
        .values(**values, version=transfer_jobs.c.version + 1, updated_at=utcnow())
    )
    if conn is not None:
        conn.execute(change)
        return
    with ws.engine.begin() as own:
        ask_for_turn(own)  # SQLite: an import running elsewhere lets this in at its next record
        own.execute(change)


def end_job(ws: Workspace, job_id: str, state: str, message: str = "", **values: Any) -> bool:
    """End a running job as ``done``, ``failed`` or ``cancelled``; False when it had ended.
    An import's upload goes with it (nothing will read it again)."""
    with ws.engine.begin() as conn:
        ask_for_turn(conn)
        ended = conn.execute(
            transfer_jobs.update()
            .where(transfer_jobs.c.id == job_id, transfer_jobs.c.state == RUNNING)
            .values(
                **values,
                state=state,
                stage="finished",
                message=message,
                version=transfer_jobs.c.version + 1,
                updated_at=utcnow(),
            )
        ).rowcount
    if ended != 1:
        return False
    _remove(ws, upload_folder(ws, job_id))
    if state != DONE:
        _remove(ws, export_folder(ws, job_id))
    return True


def _remove(ws: Workspace, folder: Path) -> None:
    """Remove a job's folder here and its files from the database copy."""
    shutil.rmtree(folder, ignore_errors=True)
    if ws.files is not None:
        ws.files.delete_under(folder.relative_to(ws.settings.home).as_posix())


def ask_to_cancel(ws: Workspace, job_id: str) -> None:
    """Flag a running job: its work stops at its next progress (an import undoes itself)."""
    update_job(ws, job_id, cancel_requested=True)


def cancel_requested(conn: sa.Connection, job_id: str) -> bool:
    flag = conn.scalar(
        sa.select(transfer_jobs.c.cancel_requested).where(transfer_jobs.c.id == job_id)
    )
    return bool(flag)


def upload_folder(ws: Workspace, job_id: str) -> Path:
    return ws.settings.home / "imports" / job_id


def export_folder(ws: Workspace, job_id: str) -> Path:
    return ws.settings.home / "exports" / job_id


def workspace_file(ws: Workspace, name: str) -> Path:
    """The file ``name`` (relative to the workspace folder) names; refuses a name that leads
    out of it (payloads and rows hold only such names)."""
    home = ws.settings.home.resolve()
    path = (home / name).resolve()
    if not path.is_relative_to(home) or Path(name).is_absolute():
        raise InvalidInput(f"{name!r} is not a file name inside the workspace folder")
    return path


def share_file(ws: Workspace, name: str) -> None:
    """In team mode, save the workspace file ``name`` in the database for the processes on
    other machines (nothing to do on SQLite: one folder)."""
    if ws.files is not None:
        ws.files.save(name, workspace_file(ws, name))


def local_file(ws: Workspace, name: str) -> Path:
    """:func:`workspace_file`, fetched from the database first when this folder misses it
    (team mode); the file may still be missing when it is stored nowhere."""
    path = workspace_file(ws, name)
    if ws.files is not None and not path.is_file():
        ws.files.fetch(name, path)
    return path


def clean_upload_folders(ws: Workspace) -> int:
    """Remove the upload folders that no queued or running import will read (left by a job
    that could not clean up, or by older versions); returns how many were removed."""
    root = ws.settings.home / "imports"
    if not root.is_dir():
        return 0
    with ws.engine.connect() as conn:
        live = set(
            conn.scalars(
                sa.select(transfer_jobs.c.id).where(
                    transfer_jobs.c.kind == IMPORT, transfer_jobs.c.state == RUNNING
                )
            )
        )
    removed = 0
    for folder in root.iterdir():
        if folder.is_dir() and folder.name not in live:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def _forget_old(ws: Workspace, project: str) -> None:
    with ws.engine.begin() as conn:
        old = list(
            conn.scalars(
                sa.select(transfer_jobs.c.id)
                .where(transfer_jobs.c.project == project, transfer_jobs.c.state != RUNNING)
                .order_by(transfer_jobs.c.created_at.desc())
                .offset(KEEP)
            )
        )
        if old:
            conn.execute(transfer_jobs.delete().where(transfer_jobs.c.id.in_(old)))
    for job_id in old:
        _remove(ws, export_folder(ws, job_id))


def _job_of(row: Any) -> TransferJob:
    return record_from_row(
        TransferJob,
        row,
        cancel_requested=bool(row.cancel_requested),
        created_at=as_utc(row.created_at),
    )
