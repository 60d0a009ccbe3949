"""The response cache: a deterministic request asked again makes no call, on SQLite and
PostgreSQL; runs with and without it give equal results; cost counts cached calls free."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.experiments import create_experiment, run_experiment
from assay.experiments.results import iter_results
from assay.llm import GeneratorSettings, Message, make_generator
from assay.llm.response_cache import ResponseCache, cache_summary, cacheable, clear_cache
from assay.llm.traffic import Traffic, workspace_traffic
from assay.store.projects import create_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from tests.experiments_corpus import build_corpus
from tests.fakes.openai_server import Computed, FakeOpenAI


def echo(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if "verdict" in content.lower():  # a judge's prompt
        return "<verdict>Yes</verdict>" if len(content) % 2 else "<verdict>No</verdict>"
    return f"said: {content[-40:]}"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI([Computed(echo)]) as server:
        yield server


def openai(url: str, **extra: Any) -> GeneratorSettings:
    return GeneratorSettings(kind="openai", base_url=url, model="m", retries=0, **extra)


QUESTION = [Message("user", "How much is a hotel night?")]


def test_a_repeated_request_is_answered_from_the_cache(any_ws: Workspace, fake: FakeOpenAI) -> None:
    project = create_project(any_ws, "cached", "en")
    traffic = workspace_traffic(any_ws, project.id)
    first = make_generator(openai(fake.url), traffic=traffic).generate(QUESTION)
    again = make_generator(openai(fake.url), traffic=traffic).generate(QUESTION)
    assert fake.count == 1
    assert not first.cached and again.cached
    assert again.text == first.text and again.prompt_hash == first.prompt_hash
    assert again.usage == {**first.usage, "cached": True}
    other = make_generator(openai(fake.url, max_tokens=77), traffic=traffic).generate(QUESTION)
    assert fake.count == 2 and not other.cached  # another parameter, another key
    summary = cache_summary(any_ws.engine, project.id)
    assert summary["entries"] == 2 and summary["bytes"] > 0
    assert summary["models"][0]["endpoint"].endswith("/chat/completions")
    assert clear_cache(any_ws.engine, project.id) == 2
    make_generator(openai(fake.url), traffic=traffic).generate(QUESTION)
    assert fake.count == 3  # asked again after the clear


def test_sampled_requests_are_not_cached_unless_asked(any_ws: Workspace, fake: FakeOpenAI) -> None:
    traffic = workspace_traffic(any_ws)
    for _ in range(2):
        make_generator(openai(fake.url, temperature=0.7), traffic=traffic).generate(QUESTION)
    assert fake.count == 2
    for _ in range(2):
        make_generator(openai(fake.url, temperature=0.7, seed=7), traffic=traffic).generate(
            QUESTION
        )
    assert fake.count == 3  # a seed makes it repeatable
    assert fake.requests[-1]["seed"] == 7
    for _ in range(2):
        make_generator(openai(fake.url, temperature=0.9, cache="always"), traffic=traffic).generate(
            QUESTION
        )
    assert fake.count == 4
    for _ in range(2):
        make_generator(openai(fake.url, cache="off"), traffic=traffic).generate(QUESTION)
    assert fake.count == 6
    no_cache = workspace_traffic(any_ws, cache=False)
    make_generator(openai(fake.url), traffic=no_cache).generate(QUESTION)
    assert fake.count == 7
    assert cacheable("auto", 0.0, None) and not cacheable("auto", 0.3, None)


def test_projects_have_their_own_entries(any_ws: Workspace, fake: FakeOpenAI) -> None:
    one = create_project(any_ws, "one", "en")
    two = create_project(any_ws, "two", "en")
    for project in (one, two):
        traffic = workspace_traffic(any_ws, project.id)
        make_generator(openai(fake.url), traffic=traffic).generate(QUESTION)
    assert fake.count == 2
    assert cache_summary(any_ws.engine)["entries"] == 2
    assert clear_cache(any_ws.engine, one.id) == 1
    assert cache_summary(any_ws.engine, two.id)["entries"] == 1


def test_the_same_key_stored_twice_keeps_the_first(any_ws: Workspace) -> None:
    cache = ResponseCache(any_ws.engine, None)
    key = cache.key("http://x/v1/chat/completions", {"model": "m", "stream": False})
    assert key == cache.key("http://x/v1/chat/completions", {"model": "m", "stream": True})
    cache.put(key, "http://x", "m", {"n": 1})
    cache.put(key, "http://x", "m", {"n": 2})  # another thread was first: no error
    assert cache.get(key) == {"n": 1}


def test_settings_refuse_a_bad_cache_mode_or_seed() -> None:
    with pytest.raises(Exception, match="cache must be one of auto, always, off"):
        GeneratorSettings(cache="sometimes")
    with pytest.raises(Exception, match="seed must be a whole number"):
        GeneratorSettings(seed=-1)


def rag_experiment(ws: Workspace, project: Any, name: str, url: str) -> int:
    generator = {"kind": "openai", "base_url": url, "model": "fake-model", "retries": 0}
    judge = {
        "kind": "judge",
        "name": "grounded",
        "instruction": "Is the answer supported by the documents?",
        "values": ["Yes", "No"],
        "generator": generator,
    }
    created = create_experiment(
        ws,
        project,
        name,
        mode="rag",
        pipelines=[{"name": "rag", "generator": generator}],
        metrics=["token_f1", judge],
    )
    return created.id


def results_of(ws: Workspace, project: Any, experiment: int) -> list[tuple[Any, ...]]:
    return sorted(
        (r.task_id, r.answer, json.dumps(r.metrics, sort_keys=True))
        for r in iter_results(ws, project, experiment)
    )


def test_an_experiment_rerun_makes_no_requests_and_scores_the_same(
    any_ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_LLM_PRICES", '{"fake-model": {"input": 1000, "output": 2000}}')
    corpus = build_corpus(any_ws, create_project(any_ws, "exp", "en"))
    project = corpus.project
    with FakeOpenAI([Computed(echo)]) as server:
        first = rag_experiment(any_ws, project, "first", server.url)
        done = run_experiment(any_ws, project, first)
        asked = server.count
        second = rag_experiment(any_ws, project, "second", server.url)
        again = run_experiment(any_ws, project, second)
        assert server.count == asked  # 0 requests: every reply came from the cache
        fresh = rag_experiment(any_ws, project, "fresh", server.url)
        uncached = run_experiment(any_ws, project, fresh, cache=False)
        assert server.count == 2 * asked  # --no-cache asks everything again
    assert asked == 2 * 5  # 5 tasks: an answer and a judgment each
    assert done.error_count == again.error_count == uncached.error_count == 0
    expected = results_of(any_ws, project, first)
    assert results_of(any_ws, project, second) == expected
    assert results_of(any_ws, project, fresh) == expected
    paid, cached = done.costs["total"], again.costs["total"]
    assert paid["cached_calls"] == 0 and paid["cost_usd"] > 0
    assert cached["calls"] == paid["calls"] == asked
    assert cached["cached_calls"] == asked and cached["cached_share"] == 1.0
    assert cached["cost_usd"] == 0.0
    assert cached["input_tokens"] == paid["input_tokens"]  # tokens shown, not billed


def test_cache_commands_show_and_clear(tmp_path: Path, fake: FakeOpenAI) -> None:
    home = tmp_path / "ws"
    with Workspace.open(Settings(home=home)) as ws:
        project = create_project(ws, "handbook", "en")
        traffic = workspace_traffic(ws, project.id)
        make_generator(openai(fake.url), traffic=traffic).generate(QUESTION)
        make_generator(openai(fake.url), traffic=Traffic(traffic.gates)).generate(QUESTION)
    app = make_app()
    runner = CliRunner()
    env = {"ASSAY_HOME": str(home)}
    shown = runner.invoke(app, ["cache", "show", "--json"], env=env)
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["entries"] == 1
    text = runner.invoke(app, ["cache", "show", "-p", "handbook"], env=env)
    assert "Response cache of project 'handbook': 1 replies" in text.output
    refused = runner.invoke(app, ["cache", "clear"], env=env, input="n\n")
    assert refused.exit_code == 1
    cleared = runner.invoke(app, ["cache", "clear", "-p", "handbook", "--yes"], env=env)
    assert cleared.exit_code == 0 and "Dropped 1 cached replies" in cleared.output
    missing = runner.invoke(app, ["cache", "show", "-p", "nope"], env=env)
    assert missing.exit_code != 0 and "nope" in missing.output


def test_the_run_api_takes_no_cache_to_the_job(ws: Workspace) -> None:
    from fastapi.testclient import TestClient

    from assay.jobs import EXPERIMENT, Jobs
    from assay.web import create_app

    corpus = build_corpus(ws, create_project(ws, "api", "en"))
    client = TestClient(create_app(ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    registry = client.app.state.jobs  # type: ignore[attr-defined]
    assert isinstance(registry, Jobs)
    with FakeOpenAI([Computed(echo)]) as server:
        asked, ids = [], []
        for name, query in (("one", ""), ("two", "?cache=false"), ("three", "")):
            experiment = rag_experiment(ws, corpus.project, name, server.url)
            ids.append(experiment)
            started = client.post(f"/api/projects/api/experiments/{name}/run{query}")
            assert started.status_code == 202, started.text
            assert registry.wait(EXPERIMENT, {"experiment": experiment}, timeout=120)
            asked.append(server.count)
    assert asked[0] == 10  # 5 answers, 5 judgments
    assert asked[1] == 20  # cache=false: everything asked again
    assert asked[2] == 20  # the cache answered everything
    expected = results_of(ws, corpus.project, ids[0])
    assert (
        results_of(ws, corpus.project, ids[1]) == results_of(ws, corpus.project, ids[2]) == expected
    )
