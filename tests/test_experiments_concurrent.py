"""Experiments at the endpoint's speed: units at once, shards over workers, a budget cap.

Against a real OpenAI-compatible endpoint with a fixed latency (tests/fakes/latency_llm.py)
and on SQLite and PostgreSQL: a run with many units at once stores what the one-by-one run
stores; a shard held by a worker that stopped beating is taken over and nothing stored is
run again; two runs side by side share the shards without scoring a task twice; the
budget stops the run at its cap; a queued run with no worker says so. The runs ask the
endpoint every time (``cache=False``): the tests count its requests, which the response cache
would answer for repeated prompts (tests/test_llm_cache.py is about the cache).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from assay.experiments import create_experiment, get_experiment, iter_results, run_experiment
from assay.experiments.budget import Budget
from assay.experiments.runner import evaluate_tasks, help_experiment
from assay.experiments.shards import plan_shards
from assay.experiments.tasks import build_tasks
from assay.jobs.workers import beat, leave
from assay.records import Project
from assay.store.db import utcnow
from assay.store.schema import experiment_shards, experiments
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.experiments_corpus import build_corpus
from tests.fakes.latency_llm import LatencyLLM

LATENCY_S = 0.2


@pytest.fixture
def gold(any_ws: Workspace) -> Project:
    return build_corpus(any_ws, _project(any_ws)).project


def _project(ws: Workspace) -> Project:
    from assay.store.projects import create_project

    return create_project(ws, "conc", "en")


@pytest.fixture
def llm() -> Iterator[LatencyLLM]:
    with LatencyLLM(LATENCY_S) as fake:
        yield fake


def _generator(url: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "openai", "base_url": url, "model": "gen", "retries": 0, **extra}


def _judge(url: str) -> dict[str, Any]:
    return {
        "kind": "judge",
        "name": "supported",
        "values": ["yes", "no"],
        "generator": {"kind": "openai", "base_url": url, "model": "judge", "retries": 0},
    }


def _rag(ws: Workspace, project: Project, name: str, url: str, **options: Any) -> int:
    pipelines = [
        {"name": "kw", "retriever": {"kind": "keyword"}, "generator": _generator(url)},
        {"name": "kw3", "retriever": {"kind": "keyword", "k": 3}, "generator": _generator(url)},
    ]
    created = create_experiment(
        ws,
        project,
        name,
        mode="rag",
        pipelines=pipelines,
        metrics=["token_f1", _judge(url)],
        **options,
    )
    return created.id


def _stored(ws: Workspace, project: Project, ref: int) -> dict[tuple[str, str], Any]:
    return {
        (r.pipeline, r.task_id): (r.answer, r.metrics, r.error, r.created_at)
        for r in iter_results(ws, project, ref)
    }


def _same(a: dict[tuple[str, str], Any], b: dict[tuple[str, str], Any]) -> bool:
    return {k: v[:3] for k, v in a.items()} == {k: v[:3] for k, v in b.items()}


def test_units_at_once_store_what_one_by_one_stores(
    any_ws: Workspace, gold: Project, llm: LatencyLLM
) -> None:
    one = _rag(any_ws, gold, "one", llm.url, concurrency=1)
    done = run_experiment(any_ws, gold, one, cache=False)
    assert done.status == "done" and done.done_count == 10 and done.error_count == 0
    assert llm.peak == 1
    assert llm.requests == 20  # a generation and a judgment per unit

    llm.reset()
    many = _rag(any_ws, gold, "many", llm.url)  # from max_in_flight: 16 for the one endpoint
    done = run_experiment(any_ws, gold, many, cache=False)
    assert done.status == "done" and done.done_count == 10
    assert 1 < llm.peak <= 16 and llm.requests == 20
    assert _same(_stored(any_ws, gold, one), _stored(any_ws, gold, many))
    assert done.aggregates == get_experiment(any_ws, gold, one).aggregates
    assert done.costs["total"]["calls"] == 20


def test_assay_eval_at_once_equals_one_by_one(
    any_ws: Workspace, gold: Project, llm: LatencyLLM
) -> None:
    from assay.experiments.pipelines import parse_pipeline

    tasks = build_tasks(any_ws, gold)
    spec = parse_pipeline({"name": "kw", "generator": _generator(llm.url, max_in_flight=8)})
    options: dict[str, Any] = {"mode": "rag", "metrics": ["token_f1", _judge(llm.url)]}
    alone = evaluate_tasks(any_ws, gold, spec, tasks, concurrency=1, **options, cache=False)
    assert llm.peak == 1
    together = evaluate_tasks(any_ws, gold, spec, tasks, **options, cache=False)
    assert llm.peak > 1
    assert [r.task.task_id for r in together.rows] == [t.task_id for t in tasks]
    assert [(r.outcome.answer, r.metrics) for r in together.rows] == [
        (r.outcome.answer, r.metrics) for r in alone.rows
    ]
    assert together.summary == alone.summary


def _shard_size(ws: Workspace, experiment_id: int, size: int) -> None:
    with ws.engine.begin() as conn:
        selection = conn.scalar(
            sa.select(experiments.c.selection).where(experiments.c.id == experiment_id)
        )
        conn.execute(
            experiments.update()
            .where(experiments.c.id == experiment_id)
            .values(selection={**selection, "shard_size": size})
        )


def test_a_shard_whose_worker_stopped_beating_is_taken_over(
    any_ws: Workspace, gold: Project, llm: LatencyLLM
) -> None:
    """A worker on another machine claimed shard 0, stored one unit, then went silent; its
    lease runs out and the next run resumes its shard with only the missing units."""
    ref = _rag(any_ws, gold, "taken", llm.url)
    _shard_size(any_ws, ref, 2)
    first = run_experiment(any_ws, gold, ref, should_stop=iter([False, True]).__next__, cache=False)
    assert first.status == "cancelled" and first.done_count == 2  # one task, two pipelines
    before = _stored(any_ws, gold, ref)
    long_ago = utcnow() - timedelta(hours=1)
    with any_ws.engine.begin() as conn:  # as a worker that died mid-run leaves it
        conn.execute(experiments.update().where(experiments.c.id == ref).values(status="running"))
        conn.execute(
            experiment_shards.update()
            .where(experiment_shards.c.experiment_id == ref, experiment_shards.c.shard == 0)
            .values(status="doing", worker="elsewhere:4242#gone", heartbeat_at=long_ago)
        )
    llm.reset()
    done = run_experiment(any_ws, gold, ref, cache=False)
    assert done.status == "done" and done.done_count == 10 and done.error_count == 0
    after = _stored(any_ws, gold, ref)
    assert {k: after[k] for k in before} == before  # nothing stored was run again
    assert llm.requests == 2 * (10 - 2)


def test_a_shard_with_a_fresh_heartbeat_is_left_to_its_worker(
    any_ws: Workspace, gold: Project, llm: LatencyLLM
) -> None:
    ref = _rag(any_ws, gold, "held", llm.url)
    _shard_size(any_ws, ref, 2)
    with any_ws.engine.begin() as conn:
        plan_shards(conn, ref, 5, 2)
        conn.execute(experiments.update().where(experiments.c.id == ref).values(status="running"))
        conn.execute(
            experiment_shards.update()
            .where(experiment_shards.c.experiment_id == ref, experiment_shards.c.shard == 0)
            .values(status="doing", worker="elsewhere:4242#alive", heartbeat_at=utcnow())
        )
    help_experiment(any_ws, gold, ref, cache=False)  # takes the other shards, not the held one
    with any_ws.engine.connect() as conn:
        states = dict(
            conn.execute(
                sa.select(experiment_shards.c.shard, experiment_shards.c.status).where(
                    experiment_shards.c.experiment_id == ref
                )
            ).all()
        )
    assert states == {0: "doing", 1: "done", 2: "done"}
    stored = _stored(any_ws, gold, ref)
    assert len(stored) == 2 * 3  # tasks 2, 3 and 4 through both pipelines
    assert llm.requests == 2 * 6


def test_two_runs_share_the_shards_and_score_each_unit_once(
    any_ws: Workspace, gold: Project, llm: LatencyLLM
) -> None:
    """A lead and a helper (threads of one process here, workers elsewhere): every unit is
    asked once, stored once, and the run ends done."""
    ref = _rag(any_ws, gold, "shared", llm.url, concurrency=2)
    _shard_size(any_ws, ref, 1)
    lead = threading.Thread(target=run_experiment, args=(any_ws, gold, ref))
    lead.start()
    helper_done = threading.Event()

    def help_when_running() -> None:
        while get_experiment(any_ws, gold, ref, with_aggregates=False).status != "running":
            threading.Event().wait(0.02)
        help_experiment(any_ws, gold, ref, once_per_process=False, cache=False)
        helper_done.set()

    helper = threading.Thread(target=help_when_running)
    helper.start()
    lead.join(120)
    helper.join(120)
    done = get_experiment(any_ws, gold, ref)
    assert done.status == "done" and done.done_count == 10 and done.error_count == 0
    assert llm.requests == 20  # two per unit: no unit was run twice
    with any_ws.engine.connect() as conn:
        workers = conn.scalars(
            sa.select(experiment_shards.c.worker).where(experiment_shards.c.experiment_id == ref)
        ).all()
    assert len(set(workers)) == 2  # both runs took shards


def _generation(ws: Workspace, project: Project, name: str, url: str, **options: Any) -> int:
    pipeline = {"name": "gen", "generator": _generator(url)}
    created = create_experiment(
        ws, project, name, mode="generation", pipelines=[pipeline], metrics=["token_f1"], **options
    )
    return created.id


@pytest.mark.parametrize("concurrency", [1, 4])
def test_the_budget_stops_the_run_at_its_cap(
    any_ws: Workspace, gold: Project, llm: LatencyLLM, concurrency: int
) -> None:
    ref = _generation(any_ws, gold, "capped", llm.url, concurrency=concurrency)
    stopped = run_experiment(any_ws, gold, ref, budget=Budget(max_requests=3), cache=False)
    assert stopped.status == "cancelled" and "budget reached" in stopped.message
    assert stopped.done_count == 3 and llm.requests == 3
    assert stopped.budget == {"max_cost_usd": None, "max_requests": 3}
    resumed = run_experiment(any_ws, gold, ref, budget=Budget(), cache=False)
    assert resumed.status == "done" and resumed.done_count == 5 and llm.requests == 5


def test_a_cost_cap_needs_a_price_and_stops_at_it(
    any_ws: Workspace, gold: Project, llm: LatencyLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.errors import InvalidInput

    ref = _generation(any_ws, gold, "priced", llm.url, concurrency=1)
    with pytest.raises(InvalidInput, match="no price for gen"):
        run_experiment(any_ws, gold, ref, budget=Budget(max_cost_usd=0.01), cache=False)
    # 60 USD a million input tokens: a request of ~150 tokens costs about 0.01 USD
    monkeypatch.setenv("ASSAY_LLM_PRICES", '{"gen": {"input": 60, "output": 0}}')
    stopped = run_experiment(any_ws, gold, ref, budget=Budget(max_cost_usd=0.025), cache=False)
    assert stopped.status == "cancelled" and "budget reached" in stopped.message
    assert 0 < stopped.done_count < 5
    costs = [
        r.details["usage"]["generate"]["prompt_tokens"] * 60 / 1e6
        for r in iter_results(any_ws, gold, ref)
    ]
    assert sum(costs) - max(costs) < 0.025  # no unit started once the cap was in sight


def test_a_queued_run_without_a_worker_says_how_to_start_one(
    any_ws: Workspace, gold: Project, llm: LatencyLLM
) -> None:
    ref = _generation(any_ws, gold, "waits", llm.url)
    settings = Settings(
        home=any_ws.settings.home,
        database_url=any_ws.settings.database_url,
        server_runs_jobs=False,
    )
    ws = Workspace.open(settings)
    try:
        with TestClient(create_app(ws)) as client:
            client.get("/")
            client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
            url = f"/api/projects/{gold.name}/experiments/{ref}"
            started = client.post(f"{url}/run", json={"max_requests": 100})
            assert started.status_code == 202, started.text
            assert started.json()["progress"]["waiting"] == "no_worker"
            again = client.post(f"{url}/run")
            assert again.status_code == 409 and "assay worker" in again.json()["detail"]
            page = client.get(f"/projects/{gold.name}/experiments/{ref}")
            assert "Start one with `assay worker`" in page.text
            beat(ws, "worker", "elsewhere:1")  # a worker runs somewhere: no warning
            shown = client.get(url).json()["experiment"]
            assert shown["progress"]["waiting"] == "" and shown["progress"]["running"]
            assert shown["budget"] == {"max_cost_usd": None, "max_requests": 100}
            leave(ws, "elsewhere:1")
    finally:
        ws.close()


def test_a_storm_of_429_slows_the_run_and_loses_no_task(any_ws: Workspace, gold: Project) -> None:
    """An endpoint that takes two requests at once while the run sends eight: the refused
    ones are tried again (Retry-After) and every task ends with a result."""
    with LatencyLLM(0.1, limit=2) as fake:
        pipeline = {"name": "gen", "generator": _generator(fake.url, retries=10)}
        created = create_experiment(
            any_ws, gold, "storm", mode="generation", pipelines=[pipeline], concurrency=8
        )
        done = run_experiment(any_ws, gold, created.id, cache=False)
        stats = fake.stats()
    assert done.status == "done" and done.done_count == 5 and done.error_count == 0
    assert stats["rejected"] > 0 and stats["requests"] == 5  # each task answered once


def test_the_cli_caps_a_run_and_shows_what_it_spent(
    ws: Workspace, llm: LatencyLLM, tmp_path: Any
) -> None:
    from typer.testing import CliRunner

    from assay.cli import make_app

    project = build_corpus(ws, _project(ws)).project
    _generation(ws, project, "cli", llm.url, concurrency=1)
    home = ["--home", str(ws.settings.home)]
    ran = CliRunner().invoke(
        make_app(), [*home, "experiments", "run", "cli", "-p", project.name, "--max-requests", "2"]
    )
    assert ran.exit_code == 0, ran.output
    assert "cancelled, 2/5 done" in ran.output and "budget reached" in ran.output
    shown = CliRunner().invoke(make_app(), [*home, "experiments", "show", "cli", "-p", "conc"])
    assert "this run: 2 request(s), 0% of 2 call(s) cached" in shown.output
    assert "budget max 2 requests" in shown.output
    bad = CliRunner().invoke(
        make_app(), [*home, "experiments", "run", "cli", "-p", "conc", "--max-requests", "0"]
    )
    assert bad.exit_code == 1 and "max_requests must be a whole number >= 1" in bad.output
    assert llm.requests == 2


def test_run_against_a_server_without_a_worker_says_how_to_start_one(
    ws: Workspace, llm: LatencyLLM, tmp_path: Any
) -> None:
    """Measured before: "Running 0/53" forever. Now the CLI stops and says why."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from assay.people.accounts import create_account
    from assay.people.mode import set_team_mode
    from assay.people.tokens import create_token
    from tests.conftest import LiveServer

    project = build_corpus(ws, _project(ws)).project
    _generation(ws, project, "remote", llm.url)
    root = create_account(ws, "root", "correct horse battery", admin=True)
    set_team_mode(ws, True)
    token, _ = create_token(ws, root.id, "ci", "write")
    settings = Settings(home=ws.settings.home, server_runs_jobs=False)
    with Workspace.open(settings) as served, LiveServer(served) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
        env.update(ASSAY_URL=server.url, ASSAY_HOME=str(tmp_path / "none"), ASSAY_TOKEN=token)
        env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[1] / "src"), ""])
        done = subprocess.run(
            [sys.executable, "-m", "assay", "experiments", "run", "remote", "-p", project.name],
            capture_output=True,
            text=True,
            env=env,
            timeout=180,
        )
        shown = subprocess.run(
            [sys.executable, "-m", "assay", "experiments", "show", "remote", "-p", project.name],
            capture_output=True,
            text=True,
            env=env,
            timeout=180,
        )
    assert done.returncode == 1
    assert "no process is running jobs: start one with `assay worker`" in done.stderr
    assert "queued, 0/5 done" in shown.stdout and "Waiting: no process" in shown.stdout
    assert llm.requests == 0
