"""Durable background jobs, with real processes: an experiment run survives the process that
ran it (killed with SIGKILL mid-run, it finishes on another process without losing or
repeating a task), and a cancel reaches a run in another process. On SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from assay.experiments import cancel_experiment, create_experiment, get_experiment
from assay.jobs import EXPERIMENT, Jobs, open_jobs
from assay.jobs.kinds import submit_experiment
from assay.jobs.sqlite_queue import SqliteQueue
from assay.records import Project
from assay.store.db import utcnow
from assay.store.jobs_schema import jobs as jobs_table
from assay.store.projects import create_project
from assay.store.schema import experiment_results
from assay.store.workspace import Workspace
from tests.experiments_corpus import build_corpus
from tests.fakes.rag_service import FakeRag

SRC = str(Path(__file__).resolve().parents[1] / "src")
TASK_SECONDS = 0.4
HEARTBEAT = "0.5"


@pytest.fixture
def project(any_ws: Workspace) -> Project:
    project = create_project(any_ws, "test", "en")
    build_corpus(any_ws, project)
    return project


@pytest.fixture
def jobs(any_ws: Workspace) -> Iterator[Jobs]:
    """The queue as the test process sees it: it submits and cancels, never runs a job."""
    jobs = open_jobs(any_ws, run_here=False)
    yield jobs
    jobs.close()


@pytest.fixture
def slow_service() -> Iterator[FakeRag]:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        time.sleep(TASK_SECONDS)  # slow enough to kill a run between its tasks
        return {"answer": "An answer.", "contexts": []}

    with FakeRag(answer) as service:
        yield service


def experiment(ws: Workspace, project: Project, service: FakeRag) -> int:
    pipeline = {"name": "slow", "kind": "external", "endpoint": service.url, "retries": 0}
    created = create_experiment(  # one task at a time: a kill falls between two of them
        ws, project, "slow", mode="rag", pipelines=[pipeline], metrics=["token_f1"], concurrency=1
    )
    assert created.total == 5
    return created.id


def spawn(ws: Workspace, tmp_path: Path, *args: str) -> subprocess.Popen[bytes]:
    """``assay ARGS`` in a process of its own, on the same workspace."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update(
        ASSAY_HOME=str(ws.settings.home),
        ASSAY_DATABASE_URL=ws.settings.database_url,
        ASSAY_JOB_HEARTBEAT_SECONDS=HEARTBEAT,
        PYTHONPATH=os.pathsep.join([SRC, env.get("PYTHONPATH", "")]),
    )
    with (tmp_path / f"{args[0]}-{time.monotonic_ns()}.log").open("wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "assay", *args], env=env, stdout=log, stderr=subprocess.STDOUT
        )


def stored(ws: Workspace, experiment_id: int) -> dict[str, Any]:
    """task id -> when its result was stored."""
    with ws.engine.connect() as conn:
        rows = conn.execute(
            sa.select(experiment_results.c.task_id, experiment_results.c.created_at).where(
                experiment_results.c.experiment_id == experiment_id
            )
        )
        return {r.task_id: r.created_at for r in rows}


def wait_until(check: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.05)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


SERVE = ("serve", "--port", "0")


@pytest.mark.parametrize(
    ("first", "then"),
    [(SERVE, ("worker",)), (SERVE, SERVE)],
    ids=["killed-server-then-worker", "killed-server-then-restart"],
)
def test_a_killed_run_finishes_on_another_process_without_losing_or_repeating_a_task(
    any_ws: Workspace,
    project: Project,
    slow_service: FakeRag,
    jobs: Jobs,
    tmp_path: Path,
    first: tuple[str, ...],
    then: tuple[str, ...],
) -> None:
    experiment_id = experiment(any_ws, project, slow_service)
    assert submit_experiment(jobs, any_ws, experiment_id)

    a = spawn(any_ws, tmp_path, *first)
    try:
        wait_until(lambda: len(stored(any_ws, experiment_id)) >= 2, "two tasks are stored")
    finally:
        a.kill()  # SIGKILL: no chance to clean up
        a.wait()
    before = stored(any_ws, experiment_id)
    assert 2 <= len(before) < 5
    assert get_experiment(any_ws, project, experiment_id).status == "running"

    b = spawn(any_ws, tmp_path, *then)
    try:
        wait_until(
            lambda: get_experiment(any_ws, project, experiment_id).status == "done",
            "the run finished on the second process",
        )
    finally:
        stop(b)

    after = stored(any_ws, experiment_id)
    done = get_experiment(any_ws, project, experiment_id)
    assert len(after) == done.total == done.done_count == 5 and done.error_count == 0
    assert {t: after[t] for t in before} == before  # nothing stored was run again
    asked = Counter(body["task_id"] for body in slow_service.requests)
    assert set(asked) == set(after)
    assert all(asked[t] == 1 for t in before)
    # only tasks never stored may have been asked twice: the one the kill cut short and
    # those finished after the last batch was written (a second's worth at most)
    assert sum(asked.values()) - len(asked) <= 1 + int(1 / TASK_SECONDS)
    assert not jobs.active(EXPERIMENT, {"experiment": experiment_id})


def test_cancel_reaches_a_run_in_another_process(
    any_ws: Workspace, project: Project, slow_service: FakeRag, jobs: Jobs, tmp_path: Path
) -> None:
    experiment_id = experiment(any_ws, project, slow_service)
    assert submit_experiment(jobs, any_ws, experiment_id)
    worker = spawn(any_ws, tmp_path, "worker")
    try:
        wait_until(lambda: len(stored(any_ws, experiment_id)) >= 1, "a task is stored")
        cancel_experiment(any_ws, project, experiment_id)
        wait_until(
            lambda: get_experiment(any_ws, project, experiment_id).status == "cancelled",
            "the worker stopped the run",
        )
        assert worker.poll() is None  # the worker goes on, ready for other jobs
        wait_until(
            lambda: not jobs.active(EXPERIMENT, {"experiment": experiment_id}), "the job ended"
        )
        assert len(stored(any_ws, experiment_id)) < 5
    finally:
        stop(worker)
    assert worker.returncode == 0  # SIGTERM stops a worker cleanly


def test_a_queued_run_cancelled_before_any_worker_took_it_never_starts(
    any_ws: Workspace, project: Project, slow_service: FakeRag, jobs: Jobs
) -> None:
    experiment_id = experiment(any_ws, project, slow_service)
    assert submit_experiment(jobs, any_ws, experiment_id)
    assert not submit_experiment(jobs, any_ws, experiment_id)  # one run at a time
    cancel_experiment(any_ws, project, experiment_id)
    jobs.cancel(EXPERIMENT, {"experiment": experiment_id})
    assert not jobs.active(EXPERIMENT, {"experiment": experiment_id})
    assert get_experiment(any_ws, project, experiment_id).status == "cancelled"
    assert submit_experiment(jobs, any_ws, experiment_id)  # and it can be run again


@pytest.mark.sqlite_only("the jobs table is the queue of a SQLite workspace")
def test_the_sqlite_queue_runs_one_job_per_key_and_requeues_a_dead_process(ws: Workspace) -> None:
    queue = SqliteQueue(ws, heartbeat_s=10, concurrency=2)
    now = utcnow()
    with ws.engine.begin() as conn:
        for worker, status in [("elsewhere:1", "doing"), (None, "todo")]:
            conn.execute(
                jobs_table.insert().values(
                    kind=EXPERIMENT, key="experiment-1", payload={"experiment": 1},
                    status=status, worker=worker, heartbeat_at=now, message="",
                    created_at=now, updated_at=now,
                )
            )  # fmt: skip
    assert queue.requeue_stalled() == 0  # another host, a fresh heartbeat: alive
    assert queue._claim() is None  # its key is running there
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with ws.engine.begin() as conn:
        conn.execute(
            jobs_table.update()
            .where(jobs_table.c.status == "doing")
            .values(worker=f"{socket.gethostname()}:{gone.pid}")
        )
    assert queue.requeue_stalled() == 1  # its process on this host is gone
    claimed = queue._claim()
    assert claimed is not None and claimed[2] == {"experiment": 1}
    assert queue._claim() is None  # the second job of the key waits for the first


@pytest.mark.sqlite_only("the jobs table is the queue of a SQLite workspace")
def test_a_job_this_process_runs_is_never_requeued_for_a_late_heartbeat(ws: Workspace) -> None:
    """A long import batch can hold the write lock (or the GIL) past three heartbeats; if the
    process requeued its own running job it would claim it again and run it twice at once."""
    queue = SqliteQueue(ws, heartbeat_s=0.5, concurrency=2)
    late = utcnow() - timedelta(seconds=60)
    with ws.engine.begin() as conn:
        job_id = conn.execute(
            jobs_table.insert().values(
                kind=EXPERIMENT, key="experiment-1", payload={"experiment": 1},
                status="doing", worker=queue.me, heartbeat_at=late, message="",
                created_at=late, updated_at=late,
            )
        ).inserted_primary_key[0]  # fmt: skip
    assert queue.requeue_stalled(alive={job_id}) == 0  # its thread here is running it
    assert queue.requeue_stalled() == 1  # its thread is gone: it is stalled


def test_every_server_process_shows_a_run_another_one_runs(
    any_ws: Workspace, project: Project, slow_service: FakeRag
) -> None:
    from fastapi.testclient import TestClient

    from assay.web import create_app

    experiment_id = experiment(any_ws, project, slow_service)
    runner, watcher = TestClient(create_app(any_ws)), TestClient(create_app(any_ws))
    runner.get("/")
    runner.headers["X-CSRF-Token"] = runner.cookies["assay_csrf"]
    assert runner.post(f"/api/projects/test/experiments/{experiment_id}/run").status_code == 202

    def seen() -> dict[str, Any]:
        shown = watcher.get(f"/api/projects/test/experiments/{experiment_id}").json()
        return shown["experiment"]["progress"]  # type: ignore[no-any-return]

    wait_until(lambda: seen()["running"] and seen()["done"] >= 1, "the watcher sees it run")
    finished = {"status": "done", "running": False}
    wait_until(lambda: seen().items() >= finished.items(), "the watcher sees it finish")
    assert seen()["done"] == seen()["total"] == 5
