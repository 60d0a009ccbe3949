"""Which processes run jobs: a heartbeat row per server with jobs on and per ``assay worker``.

A queued job waits for a process that runs jobs; when there is none (a server started with
ASSAY_SERVER_RUNS_JOBS=false and no ``assay worker``) it would wait forever without a word.
Each such process keeps its row in ``job_workers`` fresh (every job heartbeat) and removes
it when it stops, so pages and the CLI can say that no worker runs and how to start one.
A row whose heartbeat is older than three beats belongs to a process that died.
"""

from __future__ import annotations

import contextlib
import threading
from datetime import timedelta

import sqlalchemy as sa

from assay.store.db import utcnow
from assay.store.import_lock import holder_id
from assay.store.jobs_schema import job_workers
from assay.store.workspace import Workspace

START_WORKER = (
    "no process is running jobs: start one with `assay worker` (on any machine that reaches "
    "the database), or start the server with ASSAY_SERVER_RUNS_JOBS=true"
)


def beat(ws: Workspace, role: str, name: str | None = None) -> None:
    """Say that this process runs jobs (``role``: server or worker)."""
    name = name or holder_id()
    now = utcnow()
    with ws.engine.begin() as conn:
        updated = conn.execute(
            job_workers.update().where(job_workers.c.name == name).values(heartbeat_at=now)
        ).rowcount
        if not updated:
            conn.execute(
                job_workers.insert().values(name=name, role=role, started_at=now, heartbeat_at=now)
            )


def leave(ws: Workspace, name: str | None = None) -> None:
    with ws.engine.begin() as conn:
        conn.execute(job_workers.delete().where(job_workers.c.name == (name or holder_id())))


def live_workers(ws: Workspace) -> int:
    """How many processes run jobs now (a fresh heartbeat)."""
    cutoff = utcnow() - timedelta(seconds=3 * ws.settings.job_heartbeat_seconds)
    with ws.engine.connect() as conn:
        return int(
            conn.scalar(
                sa.select(sa.func.count())
                .select_from(job_workers)
                .where(job_workers.c.heartbeat_at >= cutoff)
            )
            or 0
        )


def keep_beating(ws: Workspace, role: str, stop: threading.Event) -> threading.Thread:
    """A thread that beats until ``stop`` is set, then removes this process's row."""

    def loop() -> None:
        while True:
            with contextlib.suppress(Exception):  # a busy database: the next beat tries again
                beat(ws, role)
            if stop.wait(ws.settings.job_heartbeat_seconds):
                break
        with contextlib.suppress(Exception):  # gone at exit: the row ages out
            leave(ws)

    thread = threading.Thread(target=loop, name="assay-worker-heartbeat", daemon=True)
    thread.start()
    return thread
