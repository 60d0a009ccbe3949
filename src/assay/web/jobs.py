"""Background jobs of the web app (imports and exports): one thread per job, kept in memory.

``create_app`` makes one ``JobRegistry`` and keeps it on ``app.state``; nothing lives at module
level, so tests build as many apps as they like. A job's state is read by the progress stream
(server-sent events) and the JSON API; work functions report through ``Job.update``. Jobs are
forgotten when the app stops; their files stay in the workspace folder.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.errors import AssayError, NotFound
from assay.web.paths import hide_paths

RUNNING, DONE, FAILED = "running", "done", "failed"


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

    def update(self, **changes: Any) -> None:
        with self.lock:
            for key, value in changes.items():
                setattr(self, key, value)
            self.version += 1

    def progress(self, stage: str, done: int, total: int | None) -> None:
        self.update(stage=stage, done=done, total=total)

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
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

    def __init__(self, keep: int = 200) -> None:
        self.keep = keep
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

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
        with self._lock:
            self._jobs[job.id] = job
            finished = [j for j in self._jobs.values() if j.state != RUNNING]
            for old in finished[: max(0, len(self._jobs) - self.keep)]:
                del self._jobs[old.id]
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
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None or (project is not None and job.project != project):
            raise NotFound(f"no transfer job {job_id!r} (jobs are forgotten when the app restarts)")
        return job

    def for_project(self, project: str) -> list[Job]:
        with self._lock:
            found = [j for j in self._jobs.values() if j.project == project]
        return sorted(found, key=lambda j: j.created_at, reverse=True)
