"""The response cache over the API (what it holds, dropping it), ``assay cache`` against a
server, and an experiment created with start and no cache; on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from assay.cli import make_app
from assay.llm.response_cache import ResponseCache, cache_summary
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.tokens import create_token
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.conftest import LiveServer
from tests.experiments_corpus import build_corpus
from tests.fakes.openai_server import Computed, FakeOpenAI
from tests.test_llm_cache import echo, results_of

URL = "http://models.example/v1/chat/completions"


def store(ws: Workspace, project_id: int, model: str, count: int) -> None:
    cache = ResponseCache(ws.engine, project_id)
    for n in range(count):
        body = {"model": model, "messages": [{"role": "user", "content": str(n)}]}
        cache.put(cache.key(URL, body), URL, model, {"choices": [{"text": "x" * (n + 1)}]})


def client_for(ws: Workspace) -> TestClient:
    client = TestClient(create_app(ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def test_the_api_shows_and_drops_one_projects_cache(any_ws: Workspace) -> None:
    one = create_project(any_ws, "one", "en")
    two = create_project(any_ws, "two", "en")
    store(any_ws, one.id, "small", 2)
    store(any_ws, one.id, "large", 1)
    store(any_ws, two.id, "small", 4)
    client = client_for(any_ws)
    shown = client.get("/api/projects/one/llm-cache")
    assert shown.status_code == 200, shown.text
    data = shown.json()
    assert data["entries"] == 3 and data["bytes"] > 0
    assert [(m["model"], m["entries"]) for m in data["models"]] == [("large", 1), ("small", 2)]
    assert data["bytes"] == sum(m["bytes"] for m in data["models"])
    assert data["oldest"] <= data["newest"]
    assert data["oldest"] == min(m["oldest"] for m in data["models"])
    dropped = client.delete("/api/projects/one/llm-cache")
    assert dropped.status_code == 200 and dropped.json() == {"dropped": 3}
    empty = client.get("/api/projects/one/llm-cache").json()
    assert empty == {"entries": 0, "bytes": 0, "oldest": None, "newest": None, "models": []}
    assert cache_summary(any_ws.engine, two.id)["entries"] == 4  # the other project's stay
    missing = client.delete("/api/projects/nope/llm-cache")
    assert missing.status_code == 404 and "nope" in missing.text


@pytest.fixture
def team_server(any_ws: Workspace):  # type: ignore[no-untyped-def]
    """Team mode, project handbook with cached replies, a lead's and a viewer's token."""
    create_account(any_ws, "root", "correct horse battery", admin=True)
    project = create_project(any_ws, "handbook", "en")
    tokens = {}
    for role in ("lead", "viewer"):
        account = create_account(any_ws, role, "correct horse battery")
        set_role(any_ws, project.id, account.id, role)
        tokens[role] = create_token(any_ws, account.id, "cli", "write")[0]
    store(any_ws, project.id, "m", 2)
    set_team_mode(any_ws, True)
    with LiveServer(any_ws) as server:
        yield server.url, tokens


def test_cache_commands_against_a_server(team_server: Any, monkeypatch: Any) -> None:
    url, tokens = team_server
    app, runner = make_app(), CliRunner()
    monkeypatch.setenv("ASSAY_URL", url)

    def assay(role: str, *args: str) -> Any:
        monkeypatch.setenv("ASSAY_TOKEN", tokens[role])
        return runner.invoke(app, list(args))

    shown = assay("viewer", "cache", "show")  # the server's only project, read by a viewer
    assert shown.exit_code == 0, shown.output
    assert f"Response cache of project 'handbook' on {url}: 2 replies" in shown.output
    refused = assay("viewer", "cache", "clear", "--yes")
    assert refused.exit_code != 0
    assert "viewer may not run experiments" in refused.output.replace("\n", " ")
    kept = assay("lead", "cache", "clear", "-p", "handbook", "--json")
    assert kept.exit_code == 0 and '"dropped": 2' in kept.output
    assert '"entries": 0' in assay("lead", "cache", "show", "--json").output


def test_create_with_start_takes_no_cache_to_the_run(ws: Workspace) -> None:
    from assay.jobs import EXPERIMENT

    corpus = build_corpus(ws, create_project(ws, "api", "en"))
    client = client_for(ws)
    registry = client.app.state.jobs  # type: ignore[attr-defined]
    with FakeOpenAI([Computed(echo)]) as server:
        generator = {"kind": "openai", "base_url": server.url, "model": "m", "retries": 0}
        asked, ids = [], []
        for name, options in (("one", {}), ("two", {"cache": False}), ("three", {})):
            created = client.post(
                "/api/projects/api/experiments",
                json={
                    "name": name,
                    "mode": "rag",
                    "pipelines": [{"name": "rag", "generator": generator}],
                    "metrics": ["token_f1"],
                    "start": True,
                    **options,
                },
            )
            assert created.status_code == 201, created.text
            ids.append(created.json()["id"])
            assert registry.wait(EXPERIMENT, {"experiment": ids[-1]}, timeout=120)
            asked.append(server.count)
    assert asked == [5, 10, 10]  # cache false: all 5 asked again; then all from the cache
    expected = results_of(ws, corpus.project, ids[0])
    assert results_of(ws, corpus.project, ids[1]) == expected
    assert results_of(ws, corpus.project, ids[2]) == expected
