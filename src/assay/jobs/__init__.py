"""Durable background jobs: one interface, a queue chosen by the database.

``Jobs`` is what web routes and the CLI use: ``submit(kind, payload)``, ``active``,
``cancel``, and running them (``start`` a worker thread in a server, ``work`` in the
foreground for ``assay worker``). The queue lives in the database, so a job outlives the
process that submitted it:

- PostgreSQL: procrastinate (``jobs.postgres_queue``); any server process or ``assay worker``
  on any machine runs jobs, and a dead worker's job is picked up by another.
- SQLite: the ``jobs`` table, run by threads of the serving process (``jobs.sqlite_queue``);
  a job whose process died is resumed when a server (or ``assay worker``) starts.

A job's progress and result live where its work writes them (an experiment's counts in its
row, an import's or export's in ``transfer_jobs``), never in this process, so every server
process shows the same state.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Protocol

from assay.jobs.kinds import EXPERIMENT, job_key
from assay.jobs.transfer_jobs import EXPORT, IMPORT
from assay.jobs.workers import keep_beating
from assay.store.workspace import Workspace

__all__ = ["EXPERIMENT", "EXPORT", "IMPORT", "Jobs", "Queue", "open_jobs"]


class Queue(Protocol):
    def submit(self, kind: str, payload: dict[str, Any]) -> bool: ...
    def active(self, key: str) -> bool: ...
    def cancel(self, key: str) -> None: ...
    def work(self, stop: threading.Event, *, wait: bool) -> None: ...
    def close(self) -> None: ...


class Jobs:
    """The jobs of one workspace as one process sees them.

    ``run_here``: a submitted job starts in a thread of this process unless a worker thread
    already runs here (a server with ASSAY_SERVER_RUNS_JOBS); that thread stops when the
    queue is empty. Off, jobs wait for a worker (``assay worker``, another server)."""

    def __init__(self, ws: Workspace, queue: Queue, *, run_here: bool) -> None:
        self.ws = ws
        self.queue = queue
        self.run_here = run_here
        self._beating: threading.Thread | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._more = False

    def submit(self, kind: str, payload: dict[str, Any]) -> bool:
        """Queue a job; False when one for the same thing is already queued or running."""
        if not self.queue.submit(kind, payload):
            return False
        if self.run_here:
            self._drain()
        return True

    def active(self, kind: str, payload: dict[str, Any]) -> bool:
        """Whether a job for this is queued or running (in any process)."""
        return self.queue.active(job_key(kind, payload))

    def cancel(self, kind: str, payload: dict[str, Any]) -> None:
        """Drop the queued job for this; a running one stops by its own means (an
        experiment's stop flag, an import's or export's cancel flag)."""
        self.queue.cancel(job_key(kind, payload))

    def wait(self, kind: str, payload: dict[str, Any], timeout: float) -> bool:
        """Wait until no job for this is queued or running; False on timeout."""
        deadline = time.monotonic() + timeout
        while self.active(kind, payload):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def start(self) -> None:
        """Run jobs in a thread of this process until ``stop`` (a server's worker); it also
        resumes the jobs of processes that died."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stop.clear()
            self._thread = threading.Thread(
                target=self.queue.work,
                args=(self._stop,),
                kwargs={"wait": True},
                name="assay-jobs",
                daemon=True,
            )
            self._thread.start()
            self._beating = keep_beating(self.ws, "server", self._stop)

    def work(self, stop: threading.Event) -> None:
        """Run jobs in this thread until ``stop`` is set (``assay worker``)."""
        beating = keep_beating(self.ws, "worker", stop)
        try:
            self.queue.work(stop, wait=True)
        finally:
            stop.set()
            beating.join(5.0)

    @property
    def runs_here(self) -> bool:
        """Whether this process runs the jobs it submits (or runs jobs at all)."""
        return self.run_here or (self._thread is not None and self._thread.is_alive())

    def stop(self, timeout: float = 5.0) -> None:
        """Stop taking jobs. A job still running is left to finish (or, when the process
        exits first, to be resumed by the next worker)."""
        self._stop.set()
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
        if self._beating is not None:
            self._beating.join(timeout)
        self.queue.close()

    def close(self) -> None:
        """Release the queue's connections (a process that only submitted or cancelled)."""
        self.queue.close()

    def _drain(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                self._more = True  # the running thread looks again before it ends
                return
            self._stop.clear()
            self._more = False
            self._thread = threading.Thread(
                target=self._drain_loop, name="assay-jobs-now", daemon=True
            )
            self._thread.start()

    def _drain_loop(self) -> None:
        while True:
            self.queue.work(self._stop, wait=False)
            with self._lock:
                if not self._more or self._stop.is_set():
                    self._thread = None
                    return
                self._more = False


def open_jobs(ws: Workspace, *, run_here: bool | None = None) -> Jobs:
    """The jobs of ``ws`` on the queue its database calls for; ``run_here`` defaults to
    ASSAY_SERVER_RUNS_JOBS."""
    heartbeat_s = ws.settings.job_heartbeat_seconds
    concurrency = ws.settings.job_concurrency
    queue: Queue
    if ws.engine.dialect.name == "postgresql":
        from assay.jobs.postgres_queue import PostgresQueue

        queue = PostgresQueue(ws, heartbeat_s=heartbeat_s, concurrency=concurrency)
    else:
        from assay.jobs.sqlite_queue import SqliteQueue

        queue = SqliteQueue(ws, heartbeat_s=heartbeat_s, concurrency=concurrency)
    return Jobs(ws, queue, run_here=ws.settings.server_runs_jobs if run_here is None else run_here)
