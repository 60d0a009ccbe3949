"""Transactions passed in: entry points own one transaction per operation, so an operation of
several writes commits or rolls back as one; long runs (experiments, synthesis) commit each
task or draft on its own. On SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from typer.testing import CliRunner, Result

from assay.cli import make_app
from assay.cli.common import State
from assay.corpus.chunkings import create_chunking
from assay.corpus.ingest import ingest_bytes
from assay.errors import DatabaseBusy
from assay.experiments import (
    cancel_experiment,
    create_experiment,
    delete_experiment,
    get_experiment,
    iter_results,
    list_experiments,
    run_experiment,
    shard_run,
)
from assay.experiments import store as experiment_store
from assay.formats import get_format
from assay.gold.item_lists import iter_items
from assay.gold.synthesis import synthesize
from assay.records import Project
from assay.store.db import transaction
from assay.store.projects import create_project, list_projects
from assay.store.schema import experiment_tasks, experiments
from assay.store.workspace import Workspace
from assay.transfer import evaluations, import_bundle
from assay.web import create_app
from tests.experiments_corpus import build_corpus
from tests.test_formats_inspectorraget import rich_file, write_file


class Undone(Exception):
    """What the caller's next step raises, after a stage function wrote in its transaction."""


def _rows(ws: Workspace) -> tuple[int, int]:
    """Experiments and frozen tasks stored, read on a connection of its own."""
    with ws.engine.connect() as conn:
        count = conn.scalar(sa.select(sa.func.count()).select_from(experiments)) or 0
        frozen = conn.scalar(sa.select(sa.func.count()).select_from(experiment_tasks)) or 0
    return int(count), int(frozen)


@pytest.fixture
def gold(any_ws: Workspace) -> Project:
    project = create_project(any_ws, "gold", "en")
    build_corpus(any_ws, project)
    return project


def _fail_after_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The experiment's second write (its frozen tasks) is made, then the write fails as a
    busy database would."""
    insert = experiment_store.insert_tasks

    def failing(experiment_id: int, tasks: Any, *, conn: sa.Connection) -> None:
        insert(experiment_id, tasks, conn=conn)
        raise DatabaseBusy("the database is busy with another write")

    monkeypatch.setattr(experiment_store, "insert_tasks", failing)


# ---------------------------------------------------------------- stage functions


def test_create_experiment_is_rolled_back_with_the_callers_transaction(
    any_ws: Workspace, gold: Project
) -> None:
    with pytest.raises(Undone), transaction(any_ws.engine, None) as conn:
        made = create_experiment(any_ws, gold, "e", pipelines=["keyword"], conn=conn)
        assert made.task_count > 0  # read back inside the caller's transaction
        assert [e.name for e in list_experiments(any_ws, gold, conn=conn)] == ["e"]
        raise Undone
    assert _rows(any_ws) == (0, 0)
    assert list_experiments(any_ws, gold) == []
    again = create_experiment(any_ws, gold, "e", pipelines=["keyword"])  # the name is free
    assert _rows(any_ws) == (1, again.task_count)


def test_cancel_and_delete_are_rolled_back_with_the_callers_transaction(
    any_ws: Workspace, gold: Project
) -> None:
    made = create_experiment(any_ws, gold, "e", pipelines=["keyword"])
    with pytest.raises(Undone), transaction(any_ws.engine, None) as conn:
        assert cancel_experiment(any_ws, gold, "e", conn=conn).status == "cancelled"
        delete_experiment(any_ws, gold, made.id, conn=conn)
        assert list_experiments(any_ws, gold, conn=conn) == []
        raise Undone
    kept = get_experiment(any_ws, gold, "e", with_aggregates=False)
    assert kept.status == "pending" and not kept.stop_requested
    assert _rows(any_ws) == (1, made.task_count)


# ---------------------------------------------------------------- entry points


def test_web_create_leaves_nothing_when_its_second_write_fails(
    any_ws: Workspace, gold: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = TestClient(create_app(any_ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    body = {"name": "e", "pipelines": ["keyword"], "start": False}
    with monkeypatch.context() as patch:
        _fail_after_tasks(patch)
        refused = client.post("/api/projects/gold/experiments", json=body)
    assert refused.status_code == 503, refused.text
    assert _rows(any_ws) == (0, 0)
    assert client.get("/api/projects/gold/experiments").json() == []
    created = client.post("/api/projects/gold/experiments", json=body)
    assert created.status_code == 201, created.text


def test_web_delete_is_one_operation(any_ws: Workspace, gold: Project) -> None:
    """The route reads the experiment, checks that no run is going and deletes it with its
    tasks, all in one transaction."""
    made = create_experiment(any_ws, gold, "e", pipelines=["keyword"])
    client = TestClient(create_app(any_ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    assert client.delete(f"/api/projects/gold/experiments/{made.id}").status_code == 204
    assert _rows(any_ws) == (0, 0)
    assert client.delete(f"/api/projects/gold/experiments/{made.id}").status_code == 404


def _cli(ws: Workspace, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    """Run ``assay`` on ``ws``'s database; the workspace the command opened is closed after
    it (a CLI process just exits, a test must not leave PostgreSQL connections behind)."""
    opened: list[Workspace] = []
    workspace = State.workspace

    def keep(self: State, *, create: bool = False) -> Workspace:
        opened.append(workspace(self, create=create))
        return opened[-1]

    env = {"ASSAY_DATABASE_URL": ws.settings.database_url or ""}
    with monkeypatch.context() as patch:
        patch.setattr(State, "workspace", keep)
        result = CliRunner().invoke(make_app(), ["--home", str(ws.settings.home), *args], env=env)
    for each in opened:
        each.close()
    return result


def test_cli_create_leaves_nothing_when_its_second_write_fails(
    any_ws: Workspace, gold: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ("experiments", "create", "e", "--project", "gold")
    with monkeypatch.context() as patch:
        _fail_after_tasks(patch)
        refused = _cli(any_ws, monkeypatch, *args)
    assert refused.exit_code == 1, refused.output
    assert "busy" in refused.output
    assert _rows(any_ws) == (0, 0)
    created = _cli(any_ws, monkeypatch, *args)
    assert created.exit_code == 0, created.output
    assert [e.name for e in list_experiments(any_ws, gold)] == ["e"]


def test_an_import_with_an_evaluation_is_one_transaction(
    any_ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Documents and items are written first, the experiment last: when that write fails,
    none of the import is left."""

    def failing(*args: Any, **kwargs: Any) -> int:
        raise DatabaseBusy("the database is busy with another write")

    bundle = get_format("inspectorraget").read(write_file(tmp_path, rich_file()))
    with monkeypatch.context() as patch:
        patch.setattr(evaluations, "store_imported_experiment", failing)
        with pytest.raises(DatabaseBusy):
            import_bundle(any_ws, "eval", bundle)
    assert "eval" not in {p.name for p in list_projects(any_ws)}
    assert _rows(any_ws) == (0, 0)
    import_bundle(any_ws, "eval", bundle)
    assert _rows(any_ws)[0] == 1


# ---------------------------------------------------------------- long runs


def test_a_run_commits_results_in_batches(
    any_ws: Workspace, gold: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another connection sees each batch of finished tasks while the run goes on; stopping
    it writes what it has, and a resume runs only the rest."""
    monkeypatch.setattr(shard_run, "BATCH", 2)
    monkeypatch.setattr(shard_run, "FLUSH_S", 3600.0)  # batches by count only, however slow
    made = create_experiment(any_ws, gold, "e", pipelines=["keyword"])
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, len(list(iter_results(any_ws, gold, made.id)))))

    stopped = run_experiment(
        any_ws, gold, made.id, progress=progress, should_stop=lambda: len(seen) > 3
    )
    assert stopped.status == "cancelled" and stopped.done_count == 3
    assert seen == [(0, 0), (1, 0), (2, 0), (3, 2)]  # the first batch of two, then one
    done = run_experiment(any_ws, gold, made.id)
    assert done.status == "done" and done.done_count == made.task_count


def test_synthesis_commits_each_draft_on_its_own(any_ws: Workspace) -> None:
    project = create_project(any_ws, "drafts", "en")
    text = "Trains run hourly. Hotels cost 120 euros. Taxis need a receipt. Meals are paid."
    ingest_bytes(any_ws, project, "travel.txt", text.encode())
    create_chunking(any_ws, project, "sent", "sentences", {"sentences": 1})
    stored: list[int] = []

    def progress(done: int, total: int) -> None:
        stored.append(len(list(iter_items(any_ws, project))))  # a connection of its own
        if done == 2:
            raise Undone

    with pytest.raises(Undone):
        synthesize(any_ws, project, n=4, chunking="sent", progress=progress)
    assert stored == [1, 2]
    assert len(list(iter_items(any_ws, project))) == 2  # the drafts before the stop are kept
