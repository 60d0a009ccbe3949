"""Background jobs of the web app (imports and exports): one thread per job, kept in memory.

``create_app`` makes one ``JobRegistry`` and keeps it on ``app.state``; nothing lives at module
level, so tests build as many apps as they like. A job's state is read by the progress stream
(server-sent events) and the JSON API; work functions report through ``Job.update``. Jobs are
forgotten when the app stops; their files stay in the workspace folder.

With several server processes (``assay serve --workers N``) a request about a job may reach
another process than the one running it. So a registry given a folder also writes each job's
state there (``<id>.json``, on every change but progress at most every 0.2 s), and answers
for the jobs of other processes from those files: read-only copies, failed when the process
that ran them is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.errors import AssayError, NotFound
from assay.store.import_lock import process_running
from assay.web.paths import hide_paths

RUNNING, DONE, FAILED = "running", "done", "failed"
PROGRESS = frozenset({"stage", "done", "total"})
MIRROR_EVERY_SECONDS = 0.2
"""Progress alone is written for other processes at most this often."""


@dataclass
class Job:
    id: str
    kind: str
    """``export`` or ``import``."""
    project: str
    format: str
    state: str = RUNNING
    stage: str = "starting"
    done: int = 0
    total: int | None = None
    message: str = ""
    """Why the job failed (a message for a human), or a note when it finished."""
    file: Path | None = None
    """The export's output file (offered for download)."""
    result: dict[str, Any] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict, repr=False)
    """Server paths and what a failure message shows instead (see ``web/paths.py``)."""
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    version: int = 0
    """Grows on every change, so a progress stream sends only what is new."""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    mirror: Path | None = field(default=None, repr=False)
    """Where the job's state is written for the other server processes (None: nowhere)."""
    mirrored_at: float = field(default=0.0, repr=False)

    def update(self, **changes: Any) -> None:
        with self.lock:
            for key, value in changes.items():
                setattr(self, key, value)
            self.version += 1
            recently = time.monotonic() - self.mirrored_at < MIRROR_EVERY_SECONDS
            if self.mirror is not None and not (set(changes) <= PROGRESS and recently):
                self._write_mirror(self.mirror)

    def _write_mirror(self, path: Path) -> None:
        data = {**self._snapshot(), "file": str(self.file or ""), "pid": os.getpid()}
        tmp = path.with_name(f"{path.name}.tmp")  # one writer: the job's lock is held
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
        self.mirrored_at = time.monotonic()

    def progress(self, stage: str, done: int, total: int | None) -> None:
        self.update(stage=stage, done=done, total=total)

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return self._snapshot()

    def _snapshot(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "project": self.project,
            "format": self.format,
            "state": self.state,
            "stage": self.stage,
            "done": self.done,
            "total": self.total,
            "message": self.message,
            "filename": self.file.name if self.file is not None else None,
            "result": self.result,
            "created_at": self.created_at,
            "version": self.version,
        }


class JobRegistry:
    """The jobs of one app, by id; each runs ``work(job)`` in its own thread."""

    def __init__(self, keep: int = 200, folder: Path | None = None) -> None:
        """``folder``: where jobs are shared with the other server processes of a workspace;
        the files of processes no longer running are removed here."""
        self.keep = keep
        self.folder = folder
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            for path, data in _mirrors(folder):
                if not _writer_running(data):
                    path.unlink(missing_ok=True)

    def start(
        self,
        kind: str,
        project: str,
        format_name: str,
        work: Callable[[Job], None],
        paths: dict[str, str] | None = None,
    ) -> Job:
        job = Job(
            id=uuid.uuid4().hex, kind=kind, project=project, format=format_name, paths=paths or {}
        )
        if self.folder is not None:
            job.mirror = self.folder / f"{job.id}.json"
            job.update()
        with self._lock:
            self._jobs[job.id] = job
            finished = [j for j in self._jobs.values() if j.state != RUNNING]
            for old in finished[: max(0, len(self._jobs) - self.keep)]:
                del self._jobs[old.id]
                if old.mirror is not None:
                    old.mirror.unlink(missing_ok=True)
        thread = threading.Thread(
            target=self._run, args=(job, work), name=f"assay-{kind}-{job.id[:8]}", daemon=True
        )
        thread.start()
        return job

    def _run(self, job: Job, work: Callable[[Job], None]) -> None:
        try:
            work(job)
        except AssayError as exc:
            job.update(state=FAILED, message=hide_paths(str(exc), job.paths))
        except Exception as exc:  # a bug: keep the thread's failure visible to the user
            job.update(state=FAILED, message=hide_paths(f"unexpected error: {exc!r}", job.paths))
        else:
            job.update(state=DONE, stage="finished")

    def get(self, job_id: str, project: str | None = None) -> Job:
        """The job of this process, or a copy of another process's (read anew each call)."""
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None and self.folder is not None and job_id.isalnum():
            data = _read_mirror(self.folder / f"{job_id}.json")
            job = _job_of(data) if data is not None else None
        if job is None or (project is not None and job.project != project):
            raise NotFound(f"no transfer job {job_id!r} (jobs are forgotten when the app restarts)")
        return job

    def for_project(self, project: str) -> list[Job]:
        """This process's jobs of the project and copies of the other processes' ones."""
        with self._lock:
            found = [j for j in self._jobs.values() if j.project == project]
        ours = {j.id for j in found}
        for _path, data in _mirrors(self.folder) if self.folder is not None else ():
            if data.get("project") == project and data.get("id") not in ours:
                found.append(_job_of(data))
        return sorted(found, key=lambda j: j.created_at, reverse=True)


def _mirrors(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    found = []
    for path in folder.glob("*.json"):
        data = _read_mirror(path)
        if data is not None:
            found.append((path, data))
    return found


def _read_mirror(path: Path) -> dict[str, Any] | None:
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else None
    return None


def _job_of(data: dict[str, Any]) -> Job:
    """A read-only copy of another process's job; failed if that process is gone."""
    job = Job(
        id=str(data["id"]),
        kind=str(data["kind"]),
        project=str(data["project"]),
        format=str(data["format"]),
        state=str(data["state"]),
        stage=str(data["stage"]),
        done=int(data["done"]),
        total=data["total"],
        message=str(data["message"]),
        file=Path(data["file"]) if data.get("file") else None,
        result=dict(data["result"]),
        created_at=str(data["created_at"]),
        version=int(data["version"]),
    )
    if job.state == RUNNING and not _writer_running(data):
        job.state, job.version = FAILED, job.version + 1
        job.message = "the server process running this job stopped before it finished"
    return job


def _writer_running(data: dict[str, Any]) -> bool:
    pid = data.get("pid")
    return isinstance(pid, int) and pid > 0 and process_running(pid)
