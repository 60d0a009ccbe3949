"""Imports and exports as durable jobs (``assay.jobs.transfer_work``): submitted by one
process and run by another (``assay worker``), cancelled, and, killed midway, resumed without
ever landing half or twice. On SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import functools
import io
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from assay.gold.item_lists import list_items
from assay.jobs import IMPORT, Jobs, open_jobs, transfer_work
from assay.jobs.transfer_jobs import get_job, new_job, update_job
from assay.jobs.transfer_work import cancel, run_import, settle_interrupted, start_import
from assay.records import Project
from assay.store.jobs_schema import transfer_jobs
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from assay.transfer import BatchPolicy, import_bundle
from tests.test_jobs import spawn, stop, wait_until
from tests.test_web_transfer import serving, wait


def questions(count: int) -> bytes:
    """A CSV of ``count`` questions with answers (no evidence: nothing to locate)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["query", "answer"])
    for number in range(count):
        writer.writerow([f"Question {number}: how far is the ferry?", f"Answer {number}."])
    return out.getvalue().encode()


def options(target: str = "test") -> dict[str, Any]:
    return {"target": target, "replace": False, "lenient": False, "status": None, "actor": None}


def items_in(ws: Workspace, name: str) -> int:
    return list_items(ws, get_project(ws, name), limit=1)[0]


def state(ws: Workspace, job_id: str) -> str:
    return get_job(ws, job_id).state


@pytest.fixture
def project(any_ws: Workspace) -> Project:
    return create_project(any_ws, "test", "en")


@pytest.fixture
def jobs(any_ws: Workspace) -> Iterator[Jobs]:
    """The queue as the test process sees it: it submits and cancels, never runs a job."""
    jobs = open_jobs(any_ws, run_here=False)
    yield jobs
    jobs.close()


def test_an_import_submitted_here_runs_on_a_worker_process(
    any_ws: Workspace, project: Project, jobs: Jobs, tmp_path: Path
) -> None:
    job = start_import(any_ws, jobs, "test", "csv", questions(30), "ferries.csv", options())
    assert job.state == "running" and job.stage == "queued"
    assert jobs.active(IMPORT, {"transfer": job.id})
    worker = spawn(any_ws, tmp_path, "worker")
    try:
        wait_until(lambda: state(any_ws, job.id) != "running", "the worker ran the import")
    finally:
        stop(worker)
    done = get_job(any_ws, job.id)
    assert done.state == "done", done.message
    assert done.result is not None and done.result["summary"]["item"]["imported"] == 30
    assert items_in(any_ws, "test") == 30
    assert not (any_ws.settings.home / "imports" / job.id).exists()  # the upload is gone


def test_a_queued_import_cancelled_never_runs(
    any_ws: Workspace, project: Project, jobs: Jobs
) -> None:
    job = start_import(any_ws, jobs, "test", "csv", questions(3), "ferries.csv", options())
    ended = cancel(any_ws, jobs, job)
    assert ended.state == "cancelled"
    assert not jobs.active(IMPORT, {"transfer": job.id})
    run_import(any_ws, {"transfer": job.id})  # a worker that took it meanwhile does nothing
    assert items_in(any_ws, "test") == 0
    assert not (any_ws.settings.home / "imports" / job.id).exists()


def test_a_cancelled_running_import_is_undone(
    any_ws: Workspace, project: Project, jobs: Jobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cancel comes after some batches have committed (as from another process): the
    import stops at its next batch and nothing of it stays."""
    job = start_import(any_ws, jobs, "test", "csv", questions(2500), "ferries.csv", options())
    batches: list[int] = []
    committed = transfer_work._ImportWatch.batch

    def cancel_at_the_third(watch: Any, conn: sa.Connection) -> None:
        batches.append(items_in(any_ws, "test"))
        if len(batches) == 3:
            update_job(any_ws, job.id, conn, cancel_requested=True)
        committed(watch, conn)

    monkeypatch.setattr(transfer_work, "PROGRESS_EVERY_S", 0.0)
    monkeypatch.setattr(transfer_work._ImportWatch, "batch", cancel_at_the_third)
    # batches of 100 records: a quiet SQLite import would take all 2500 in one or two
    small = functools.partial(import_bundle, batching=BatchPolicy(records=100, pause=0))
    monkeypatch.setattr(transfer_work, "import_bundle", small)
    run_import(any_ws, jobs_payload(any_ws, job.id))
    assert batches[2] > 0  # items were in the database when the cancel came
    ended = get_job(any_ws, job.id)
    assert ended.state == "cancelled" and "nothing was imported" in ended.message
    assert items_in(any_ws, "test") == 0
    assert get_project(any_ws, "test").importing_since is None


def test_a_cancel_reaches_an_import_running_in_another_process(
    any_ws: Workspace, project: Project, jobs: Jobs, tmp_path: Path
) -> None:
    job = start_import(any_ws, jobs, "test", "csv", questions(20000), "ferries.csv", options())
    worker = spawn(any_ws, tmp_path, "worker")
    try:
        wait_until(lambda: writing(any_ws, job.id), "the worker is writing items")
        cancel(any_ws, jobs, get_job(any_ws, job.id))
        wait_until(lambda: state(any_ws, job.id) != "running", "the worker stopped the import")
        assert worker.poll() is None  # the worker goes on, ready for other jobs
    finally:
        stop(worker)
    ended = get_job(any_ws, job.id)
    assert ended.state == "cancelled", ended.message
    assert items_in(any_ws, "test") == 0
    assert get_project(any_ws, "test").importing_since is None


def writing(ws: Workspace, job_id: str) -> bool:
    job = get_job(ws, job_id)
    return job.stage == "items" and job.done > 0


def test_a_killed_import_is_resumed_by_another_process_and_lands_once(
    any_ws: Workspace, project: Project, jobs: Jobs, tmp_path: Path
) -> None:
    # enough items for the import to outlast its first batches (up to 5,000 records or half a
    # second each on a quiet machine), so the kill comes while it writes
    job = start_import(any_ws, jobs, "test", "csv", questions(20000), "ferries.csv", options())
    first = spawn(any_ws, tmp_path, "worker")
    try:
        wait_until(lambda: writing(any_ws, job.id), "the first worker is writing items")
    finally:
        first.send_signal(signal.SIGKILL)  # no chance to clean up
        first.wait()
    assert state(any_ws, job.id) == "running"
    # what the killed run wrote is behind the project's import lock until it is undone
    assert get_project(any_ws, "test").importing_since is not None

    second = spawn(any_ws, tmp_path, "worker")
    try:
        wait_until(lambda: state(any_ws, job.id) != "running", "the second worker ran it")
    finally:
        stop(second)
    done = get_job(any_ws, job.id)
    assert done.state == "done", done.message
    assert items_in(any_ws, "test") == 20000  # whole, once
    assert get_project(any_ws, "test").importing_since is None


def test_an_import_applied_before_its_process_died_is_not_applied_again(
    any_ws: Workspace, project: Project, jobs: Jobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the import committed but before the job ended: the report came with
    the import's last batch, so the next run only brings the indexes up to date."""

    class Killed(BaseException):
        pass

    def killed(*_: Any) -> None:
        raise Killed

    job = start_import(any_ws, jobs, "test", "csv", questions(5), "ferries.csv", options())
    payload = jobs_payload(any_ws, job.id)
    with monkeypatch.context() as patched:
        patched.setattr(transfer_work, "sync_project", killed)
        with pytest.raises(Killed):
            run_import(any_ws, payload)
    cut_short = get_job(any_ws, job.id)
    assert cut_short.state == "running" and cut_short.result is not None
    run_import(any_ws, payload)
    assert state(any_ws, job.id) == "done"
    assert items_in(any_ws, "test") == 5


def test_a_started_job_that_left_the_queue_reads_as_interrupted(
    any_ws: Workspace, project: Project, jobs: Jobs
) -> None:
    queued = new_job(any_ws, "export", "test", "csv")
    assert settle_interrupted(any_ws, jobs, get_job(any_ws, queued)).state == "running"
    started = new_job(any_ws, "export", "test", "csv")
    update_job(any_ws, started, stage="items")  # a worker took it; the queue has no job
    with serving(any_ws) as client:
        shown = client.get(f"/api/projects/test/transfer/jobs/{started}").json()
        assert shown["state"] == "failed" and shown["message"].startswith("interrupted")
        assert client.get(f"/api/projects/test/transfer/jobs/{queued}").json()["state"] == "running"


def test_a_failed_import_names_file_and_line_and_a_late_cancel_leaves_it_as_it_ended(
    any_ws: Workspace, project: Project
) -> None:
    bad = b'query,answer,relevant\n"Fine?",yes,\n"Broken?",no,"[not json"\n'
    with serving(any_ws) as client:
        started = client.post(
            "/api/projects/test/transfer/imports",
            files={"file": ("ferries.csv", bad)},
            data={"format": "csv"},
        )
        failed = wait(client, started.json())
        assert failed["state"] == "failed"
        assert failed["message"].startswith("ferries.csv line 3, column 'relevant'")
        assert str(any_ws.settings.home) not in failed["message"]

        ended = client.post(started.json()["cancel"])  # an ended job stays as it ended
        assert ended.status_code == 200 and ended.json()["state"] == "failed"
    with any_ws.engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(transfer_jobs)) == 1


def jobs_payload(ws: Workspace, job_id: str) -> dict[str, Any]:
    """The payload ``start_import`` queued for the job (the same fields)."""
    job = get_job(ws, job_id)
    assert job.file is not None
    return {"transfer": job_id, "format": job.format, "upload": job.file, **options()}
