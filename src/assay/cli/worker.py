"""``assay worker``: run background jobs (experiment runs, web imports and exports) from the
workspace's queue."""

from __future__ import annotations

import os
import signal
import threading
from typing import TYPE_CHECKING, Any

import typer

from assay.cli.common import command, console, run

if TYPE_CHECKING:
    from assay.store.workspace import Workspace


def register(app: typer.Typer) -> None:
    command(app, "worker", worker)


def worker(ctx: typer.Context) -> None:
    """Run background jobs (experiment runs, web imports and exports) until stopped.

    On PostgreSQL, start as many as you like, on any machine that reaches the database: each
    takes jobs from the shared queue, and a job whose worker died (killed, machine gone) is
    resumed by another once it missed three heartbeats (ASSAY_JOB_HEARTBEAT_SECONDS). On
    SQLite, `assay serve` already runs jobs itself; a worker runs them the same way, for a
    server started with ASSAY_SERVER_RUNS_JOBS=false. On PostgreSQL a worker's ASSAY_HOME may be
    a folder of its own: originals, run files, import uploads and exports are kept in the
    database as well and fetched into the folder when it misses them.
    The first Ctrl+C or SIGTERM stops taking jobs and lets the running ones finish; a second
    one stops at once, and the next worker resumes what was cut short.
    """
    run(ctx, _work)


def _work(ws: Workspace) -> None:
    from assay.cli.serve import share_folder
    from assay.jobs import open_jobs

    share_folder(ws)
    jobs = open_jobs(ws, run_here=False)
    stop = threading.Event()

    def stop_on_signal(signum: int, _frame: Any) -> None:
        name = signal.Signals(signum).name
        if stop.is_set():
            console().print(f"{name} again: stopping now; the next worker resumes the jobs.")
            os._exit(130)  # the jobs' heartbeats stop: another worker takes them over
        console().print(
            f"{name}: no new jobs; finishing the running ones (send it again to stop now).",
            markup=False,
        )
        stop.set()

    signal.signal(signal.SIGINT, stop_on_signal)
    signal.signal(signal.SIGTERM, stop_on_signal)
    queue = "procrastinate on PostgreSQL" if ws.engine.dialect.name == "postgresql" else "SQLite"
    console().print(f"Assay worker: running jobs from the queue ({queue}).", markup=False)
    jobs.work(stop)
