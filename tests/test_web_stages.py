"""Retrieval stages on the web: the rerank toggle of the search API, the stage fields of the
experiment form, and token and cost totals on the experiment page and in its JSON."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from assay.experiments import create_experiment, run_experiment
from assay.gold.project_config import update_settings
from assay.records import Project
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.experiments_corpus import Corpus, build_corpus
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rerank_server import FakeReranker, Overlap, Raw


@pytest.fixture
def corpus(ws: Workspace, project: Project) -> Corpus:
    return build_corpus(ws, project)


@pytest.fixture
def client(ws: Workspace) -> TestClient:
    client = TestClient(create_app(ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


@pytest.fixture
def fake() -> Iterator[FakeReranker]:
    with FakeReranker([Overlap()]) as server:
        yield server


def test_search_apis_take_the_rerank_option(
    ws: Workspace, corpus: Corpus, client: TestClient, fake: FakeReranker
) -> None:
    name = corpus.project.name
    query = {"q": "leave days employee", "k": 2}
    refused = client.get(f"/api/projects/{name}/editor/search", params={**query, "rerank": True})
    assert refused.status_code == 422 and "has no reranker" in refused.json()["detail"]
    page = client.get(f"/projects/{name}/items/new")
    assert 'id="search-rerank"' not in page.text
    update_settings(ws, corpus.project, {"reranker": {"url": fake.url, "depth": 5, "retries": 0}})
    plain = client.get(f"/api/projects/{name}/editor/search", params=query).json()
    assert fake.requests == []
    reranked = client.get(
        f"/api/projects/{name}/editor/search", params={**query, "rerank": True}
    ).json()
    assert len(fake.requests) == 1 and fake.requests[0]["query"] == "leave days employee"
    assert len(reranked["hits"]) == 2 and reranked["documents"]
    assert [h["score"] for h in reranked["hits"]] != [h["score"] for h in plain["hits"]]
    api = client.get(f"/api/projects/{name}/search", params={**query, "rerank": "true"}).json()
    assert [h["chunk_id"] for h in api] == [h["chunk_id"] for h in reranked["hits"]]
    page = client.get(f"/projects/{name}/items/new")
    assert 'id="search-rerank"' in page.text
    fake.reset([Raw("garbage")])
    failed = client.get(f"/api/projects/{name}/editor/search", params={**query, "rerank": True})
    assert failed.status_code >= 400 and f"reranker {fake.url}" in failed.text


def test_experiment_form_offers_the_stages(
    ws: Workspace, corpus: Corpus, client: TestClient, fake: FakeReranker
) -> None:
    name = corpus.project.name
    page = client.get(f"/projects/{name}/experiments").text
    assert "Neighbouring chunks" in page and "Metadata filter" in page
    assert "the project&#39;s reranker" not in page and "HyDE" not in page
    update_settings(ws, corpus.project, {"reranker": {"url": fake.url, "retries": 0}})
    page = client.get(f"/projects/{name}/experiments").text
    assert "the project&#39;s reranker" in page and "exp_stages.js" in page
    german = client.get(f"/projects/{name}/experiments", headers={"Accept-Language": "de"}).text
    assert "Nachbar-Chunks" in german
    created = client.post(
        f"/api/projects/{name}/experiments",
        json={
            "name": "from-form",
            "pipelines": [
                "keyword",
                {"name": "k+r", "reranker": {"url": fake.url}, "expand": 1, "filters": "a = b"},
            ],
            "start": False,
        },
    )
    assert created.status_code == 201, created.text
    spec = created.json()["pipelines"][1]
    assert spec["filters"] == {"a": ["b"]} and spec["expand"] == 1


def test_experiment_page_and_json_show_tokens_and_costs(
    ws: Workspace, corpus: Corpus, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_LLM_PRICES", '{"fake-model": {"input": 1000, "output": 1000}}')
    project = corpus.project
    with FakeOpenAI([Reply("hotel refund")]) as server:
        generator = {"kind": "openai", "base_url": server.url, "model": "m", "retries": 0}
        created = create_experiment(
            ws,
            project,
            "costly",
            mode="rag",
            pipelines=["keyword", {"name": "llm", "generator": generator}],
        )
        run_experiment(ws, project, created.id)
    data = client.get(f"/api/projects/{project.name}/experiments/{created.id}").json()
    costs = data["experiment"]["costs"]
    assert costs["pipelines"]["llm"]["calls"] == 5
    assert costs["pipelines"]["keyword"]["calls"] == 0
    assert costs["total"]["cost_usd"] == pytest.approx((55 + 25) * 1000 / 1e6)
    page = client.get(f"/projects/{project.name}/experiments/{created.id}").text
    assert 'id="token-row"' in page and 'id="cost-total"' in page
    assert "55 / 25" in page and "0.0800" in page
    german = client.get(
        f"/projects/{project.name}/experiments/{created.id}", headers={"Accept-Language": "de"}
    ).text
    assert "0,0800" in german and "Modellaufrufe" in german
