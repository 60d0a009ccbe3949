"""The job queue of a PostgreSQL workspace: procrastinate (its tables come with migration 0010).

Every job is one procrastinate task, ``assay.job(kind, payload)``, deferred with the job's
key as both its ``queueing_lock`` (one queued job per key) and its ``lock`` (one running job
per key). Any process that opens the workspace can run them: the server's own worker thread,
or ``assay worker`` on another machine. Workers send a heartbeat; a worker that stops sending
it (killed, machine gone) leaves its job ``doing``, and every worker loop puts such stalled
jobs back in the queue, where the next worker resumes them. Why procrastinate, and what it
measured, is in docs/backends.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from assay.errors import BackendUnavailable, install_extra
from assay.jobs.kinds import job_key, run_job
from assay.store.import_lock import holder_id
from assay.store.workspace import Workspace

if TYPE_CHECKING:
    import procrastinate

log = logging.getLogger(__name__)
TASK = "assay.job"
STOP_CHECK_S = 0.2
LIVE = sa.text(
    "SELECT id FROM procrastinate_jobs WHERE lock = :key AND status IN ('todo', 'doing')"
)


def _procrastinate() -> Any:
    try:
        import procrastinate
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise BackendUnavailable(
            f"background jobs on PostgreSQL need procrastinate: {install_extra('postgres')}"
        ) from exc
    return procrastinate


class PostgresQueue:
    def __init__(self, ws: Workspace, *, heartbeat_s: float, concurrency: int) -> None:
        self.ws = ws
        self.heartbeat_s = heartbeat_s
        self.concurrency = concurrency
        self.conninfo = ws.engine.url.set(drivername="postgresql").render_as_string(
            hide_password=False
        )
        self._lock = threading.Lock()
        self._deferrer: tuple[procrastinate.App, Any] | None = None

    def submit(self, kind: str, payload: dict[str, Any]) -> bool:
        key = job_key(kind, payload)
        if self.active(key):
            return False
        task = self._sync_app().configure_task(TASK, lock=key, queueing_lock=key)
        try:
            task.defer(kind=kind, payload=payload)
        except _procrastinate().exceptions.AlreadyEnqueued:
            return False
        return True

    def active(self, key: str) -> bool:
        with self.ws.engine.connect() as conn:
            return conn.execute(LIVE, {"key": key}).first() is not None

    def cancel(self, key: str) -> None:
        """Cancel the queued job of ``key`` (a running one stops through its own flag)."""
        with self.ws.engine.connect() as conn:
            queued = conn.execute(
                sa.text("SELECT id FROM procrastinate_jobs WHERE lock = :key AND status = 'todo'"),
                {"key": key},
            ).scalars()
            found = list(queued)
        manager = self._sync_app().job_manager
        for job_id in found:
            manager.cancel_job_by_id(job_id)

    def work(self, stop: threading.Event, *, wait: bool) -> None:
        """Run jobs in this thread's own event loop until ``stop`` is set; with ``wait=False``
        return once the queue is empty."""
        asyncio.run(self._work(stop, wait))

    def close(self) -> None:
        with self._lock:
            if self._deferrer is not None:
                app, pool = self._deferrer
                app.close()
                pool.close()
                self._deferrer = None

    def _sync_app(self) -> procrastinate.App:
        """The app that defers and cancels (synchronous, opened on first use). It connects
        when asked and keeps no idle connection nor pool thread: a submit is rare."""
        with self._lock:
            if self._deferrer is None:
                import psycopg_pool

                pro = _procrastinate()
                pool = psycopg_pool.NullConnectionPool(self.conninfo, max_size=2, open=False)
                pool.open(wait=True)
                app = pro.App(connector=pro.SyncPsycopgConnector(conninfo=self.conninfo))
                self._deferrer = (app.open(pool), pool)
            return self._deferrer[0]

    async def _work(self, stop: threading.Event, wait: bool) -> None:
        pro = _procrastinate()
        connector = pro.PsycopgConnector(
            conninfo=self.conninfo, min_size=1, max_size=self.concurrency + 4
        )
        app = pro.App(connector=connector)
        app.task(name=TASK)(self._run)
        async with app.open_async():
            await self._retry_stalled(app)
            worker = asyncio.create_task(
                app.run_worker_async(
                    name=holder_id(),
                    concurrency=self.concurrency,
                    wait=wait,
                    install_signal_handlers=False,
                    update_heartbeat_interval=self.heartbeat_s,
                    stalled_worker_timeout=3 * self.heartbeat_s,
                    delete_jobs="successful",
                )
            )
            checked = time.monotonic()
            while not worker.done():
                if stop.is_set():
                    worker.cancel()
                    break
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(worker), STOP_CHECK_S)
                if time.monotonic() - checked >= self.heartbeat_s:
                    await self._retry_stalled(app)
                    checked = time.monotonic()
            with contextlib.suppress(asyncio.CancelledError):
                await worker

    async def _retry_stalled(self, app: procrastinate.App) -> None:
        """Put back in the queue the jobs of workers that missed three heartbeats."""
        stalled = await app.job_manager.get_stalled_jobs(
            task_name=TASK, seconds_since_heartbeat=3 * self.heartbeat_s
        )
        for job in stalled:
            log.warning("job %s (%s) lost its worker: back in the queue", job.id, job.lock)
            await app.job_manager.retry_job(job)

    def _run(self, kind: str, payload: dict[str, Any]) -> None:
        run_job(self.ws, kind, payload)
