"""The job queue of a SQLite workspace: rows of the ``jobs`` table, run by threads of the
process that serves (or of ``assay worker``).

A job is claimed by one atomic update (``todo`` -> ``doing``, naming the process as
``host:pid``), and the process keeps its heartbeat fresh while it runs. A ``doing`` job whose
process is gone (same host, pid not running) or whose heartbeat is older than three beats is
stalled: the next worker loop puts it back to ``todo``, so a killed server's experiment
resumes when a server starts again. Progress and results are the job's own business (an
experiment's counts live in its row); this table only says who runs what.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection
from datetime import timedelta
from typing import Any

import sqlalchemy as sa

from assay.jobs.kinds import job_key, run_job
from assay.store.db import as_utc, utcnow
from assay.store.import_lock import holder_gone, holder_id
from assay.store.jobs_schema import jobs
from assay.store.workspace import Workspace

log = logging.getLogger(__name__)
LIVE = ("todo", "doing")
POLL_S = 1.0
"""How often an idle worker looks at the queue (a submit in this process wakes it at once)."""


class SqliteQueue:
    def __init__(self, ws: Workspace, *, heartbeat_s: float, concurrency: int) -> None:
        self.ws = ws
        self.heartbeat_s = heartbeat_s
        self.concurrency = concurrency
        self.me = holder_id()
        self._wake = threading.Event()

    def submit(self, kind: str, payload: dict[str, Any]) -> bool:
        key = job_key(kind, payload)
        now = utcnow()
        with self.ws.engine.begin() as conn:
            if self._live(conn, key):
                return False
            conn.execute(
                jobs.insert().values(
                    kind=kind,
                    key=key,
                    payload=payload,
                    status="todo",
                    message="",
                    created_at=now,
                    updated_at=now,
                )
            )
        self._wake.set()
        return True

    def active(self, key: str) -> bool:
        with self.ws.engine.connect() as conn:
            return self._live(conn, key)

    def cancel(self, key: str) -> None:
        with self.ws.engine.begin() as conn:
            conn.execute(jobs.delete().where(jobs.c.key == key, jobs.c.status == "todo"))

    def work(self, stop: threading.Event, *, wait: bool) -> None:
        """Run jobs (up to ``concurrency`` at once, each in its own thread) until ``stop`` is
        set, then let the running ones finish (their heartbeat going on); with
        ``wait=False`` return once nothing is queued or running."""
        running: dict[int, threading.Thread] = {}
        beaten = time.monotonic()
        while True:
            running = {i: t for i, t in running.items() if t.is_alive()}
            if stop.is_set() and not running:
                return
            if not stop.is_set():
                self.requeue_stalled(alive=set(running))
                claimed = self._claim() if len(running) < self.concurrency else None
                if claimed is not None:
                    thread = threading.Thread(
                        target=self._run, args=claimed, name=f"assay-job-{claimed[0]}", daemon=True
                    )
                    running[claimed[0]] = thread
                    thread.start()
                    continue
            if not running and not wait:
                return
            self._pause(stop, min(POLL_S, self.heartbeat_s))
            if running and time.monotonic() - beaten >= self.heartbeat_s:
                self._beat(list(running))
                beaten = time.monotonic()

    def _pause(self, stop: threading.Event, seconds: float) -> None:
        """Wait up to ``seconds`` for a submit, seeing a new ``stop`` within a tenth of that."""
        stopping = stop.is_set()
        for _ in range(10):
            if self._wake.wait(seconds / 10) or (stop.is_set() and not stopping):
                break
        self._wake.clear()

    def requeue_stalled(self, alive: Collection[int] = ()) -> int:
        """Put back to ``todo`` the running jobs whose process is gone; returns how many.

        ``alive``: the jobs this process runs in threads that are still alive. Their
        heartbeat may lag (a long import batch holds SQLite's write lock, or the GIL), but
        they are running here: requeued, this process would claim them again and run them
        twice at once."""
        cutoff = utcnow() - timedelta(seconds=3 * self.heartbeat_s)
        with self.ws.engine.begin() as conn:
            doing = conn.execute(
                sa.select(jobs.c.id, jobs.c.worker, jobs.c.heartbeat_at).where(
                    jobs.c.status == "doing"
                )
            ).all()
            stalled = [
                r.id
                for r in doing
                if not (r.id in alive and r.worker == self.me)
                and (
                    holder_gone(r.worker or "")
                    or r.heartbeat_at is None
                    or as_utc(r.heartbeat_at) < cutoff
                )
            ]
            if stalled:
                conn.execute(
                    jobs.update()
                    .where(jobs.c.id.in_(stalled), jobs.c.status == "doing")
                    .values(status="todo", worker=None, updated_at=utcnow())
                )
        return len(stalled)

    def close(self) -> None:
        pass

    def _live(self, conn: sa.Connection, key: str) -> bool:
        found = conn.scalar(
            sa.select(jobs.c.id).where(jobs.c.key == key, jobs.c.status.in_(LIVE)).limit(1)
        )
        return found is not None

    def _claim(self) -> tuple[int, str, dict[str, Any]] | None:
        with self.ws.engine.begin() as conn:
            doing = sa.select(jobs.c.key).where(jobs.c.status == "doing")
            row = conn.execute(
                sa.select(jobs.c.id, jobs.c.kind, jobs.c.payload)
                .where(jobs.c.status == "todo", jobs.c.key.not_in(doing))  # one run per key
                .order_by(jobs.c.id)
                .limit(1)
            ).one_or_none()
            if row is None:
                return None
            now = utcnow()
            taken = conn.execute(
                jobs.update()
                .where(jobs.c.id == row.id, jobs.c.status == "todo")
                .values(status="doing", worker=self.me, heartbeat_at=now, updated_at=now)
            ).rowcount
        return (row.id, row.kind, row.payload) if taken == 1 else None

    def _beat(self, job_ids: list[int]) -> None:
        with self.ws.engine.begin() as conn:
            conn.execute(
                jobs.update()
                .where(jobs.c.id.in_(job_ids), jobs.c.worker == self.me)
                .values(heartbeat_at=utcnow())
            )

    def _run(self, job_id: int, kind: str, payload: dict[str, Any]) -> None:
        mine = (jobs.c.id == job_id) & (jobs.c.worker == self.me) & (jobs.c.status == "doing")
        try:
            run_job(self.ws, kind, payload)
        except Exception as exc:  # the job's own record says more; keep the queue going
            log.exception("job %s (%s) failed", job_id, kind)
            with self.ws.engine.begin() as conn:
                conn.execute(
                    jobs.update()
                    .where(mine)
                    .values(status="failed", message=f"{exc!r}", updated_at=utcnow())
                )
            return
        with self.ws.engine.begin() as conn:  # a finished job leaves nothing to keep
            conn.execute(jobs.delete().where(mine))
