"""External RAG systems as pool sources, over the real HTTP contract against an in-process fake
service: contexts placed and pooled with the project's own hits; timeouts, HTTP errors,
garbage and refused endpoints become clear per-source errors, the other sources still pool,
and nothing stored changes. Also the JSON endpoints."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.corpus.chunkings import document_chunks, get_chunking
from assay.errors import InvalidInput
from assay.experiments.pools import question_pool
from assay.gold.items import get_item
from assay.gold.project_config import update_settings
from assay.llm.outgoing import OutgoingRefused
from assay.records import Project
from assay.search.pool_settings import parse_pool_settings
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.experiments_corpus import Corpus, build_corpus
from tests.fakes.rag_service import FakeRag


@pytest.fixture
def corpus(ws: Workspace, project: Project) -> Corpus:
    return build_corpus(ws, project)


def _settings(url: str, **extra: Any) -> Any:
    return parse_pool_settings(
        {
            "depth": 3,
            "sources": [
                {"name": "keyword", "kind": "keyword"},
                {"name": "mine", "kind": "external", "endpoint": url, "retries": 0, **extra},
            ],
        }
    )


def test_external_contexts_are_placed_and_pooled(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    chunks = document_chunks(ws, get_chunking(ws, project), corpus.travel.id)
    hotel = next(c for c in chunks if "Hotel" in corpus.travel.text[c.start : c.end])

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        return {
            "answer": "120 euros.",
            "contexts": [
                {"text": "Laptops are encrypted with full disk encryption"},
                {"chunk_id": hotel.chunk_id, "score": 2.0},
                "Text that is in no document",
                {"doc_id": "leave.txt", "text": "30 days of paid leave"},
            ],
        }

    item = corpus.items[0]
    with FakeRag(answer) as service:
        pool = question_pool(ws, project, _settings(service.url), item_id=item.id)
        sent = service.requests
    assert sent[0]["k"] == 3 and sent[0]["task_id"] == f"{item.id}::1"
    assert sent[0]["query"] == item.turns[0].query
    by_chunk = {e.chunk_id: e for e in pool.entries}
    assert by_chunk[hotel.chunk_id].found_by == {"keyword": 1, "mine": 2}
    assert by_chunk[hotel.chunk_id].judged == "relevant"
    laptops = next(e for e in pool.entries if "Laptops" in e.text)
    assert laptops.found_by == {"mine": 1} and laptops.doc_id == corpus.security.id
    assert pool.unplaced == {"mine": 1}  # the text found nowhere; the 4th is beyond depth 3
    assert pool.errors == {}


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        ("slow", "timed out"),
        (500, "HTTP 500"),
        (404, "HTTP 404"),
        ("<html>not json</html>", "not JSON"),
        ({"contexts": 5}, "'contexts' must be a list"),
        ({"contexts": [{"score": "high", "text": "x"}]}, "contexts[1].score must be a number"),
    ],
)
def test_a_failing_system_is_reported_and_the_rest_pools(
    ws: Workspace, corpus: Corpus, reply: Any, says: str
) -> None:
    project = corpus.project
    item = corpus.items[0]
    before = get_item(ws, project, item.id)
    with FakeRag(lambda body: reply) as service:
        # only the slow reply is meant to time out: the others get a bound a busy machine keeps
        timeout_s = 0.3 if reply == "slow" else 120.0
        pool = question_pool(
            ws, project, _settings(service.url, timeout_s=timeout_s), item_id=item.id
        )
    assert says in pool.errors["mine"] and service.url in pool.errors["mine"]
    assert pool.entries and all(e.found_by.keys() == {"keyword"} for e in pool.entries)
    after = get_item(ws, project, item.id)
    assert after.version == before.version and after.turns == before.turns


def test_a_refused_endpoint_fails_its_source_only(ws: Workspace, corpus: Corpus) -> None:
    settings = _settings("http://169.254.169.254/latest")
    pool = question_pool(ws, corpus.project, settings, query="hotel refund")
    assert "refused" in pool.errors["mine"] and pool.entries


def test_pool_settings_refuse_what_the_outgoing_policy_refuses(
    ws: Workspace, corpus: Corpus
) -> None:
    project = corpus.project
    with pytest.raises(OutgoingRefused, match="source 'mine'"):
        update_settings(
            ws,
            project,
            {
                "pool": {
                    "sources": [
                        {"name": "mine", "kind": "external", "endpoint": "http://10.9.8.7/"}
                    ]
                }
            },
        )
    with pytest.raises(InvalidInput, match="http"):
        update_settings(
            ws,
            project,
            {"pool": {"sources": [{"name": "m", "kind": "external", "endpoint": "ftp://x"}]}},
        )
    assert "pool" not in get_project(ws, project.name).settings


def _client(ws: Workspace) -> TestClient:
    client = TestClient(create_app(ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def test_json_endpoints_with_an_external_source(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    client = _client(ws)
    calls = {"n": 0}

    def answer(body: dict[str, Any]) -> Any:
        calls["n"] += 1
        return (
            503
            if "paid leave" in body["query"]
            else {"contexts": [{"doc_id": "travel.txt", "text": "Meals on business trips"}]}
        )

    with FakeRag(answer) as service:
        update_settings(ws, project, {"pool": _settings(service.url).model_dump()})
        free = client.get("/api/projects/test/pool", params={"q": "hotel costs per night"})
        assert free.status_code == 200, free.text
        body = free.json()
        assert body["sources"] == ["keyword", "mine"] and body["judged"] == 0
        assert body["documents"][corpus.travel.id] == "travel.txt"
        meals = next(e for e in body["entries"] if "Meals" in e["text"])
        assert meals["found_by"] == {"mine": 1}
        item = corpus.items[1]  # the paid-leave question: the system answers 503
        judged = client.get(f"/api/projects/test/items/{item.id}/pool")
        assert judged.status_code == 200, judged.text
        data = judged.json()
        assert "HTTP 503" in data["errors"]["mine"] and data["judged"] == 1
        assert data["coverage"] == pytest.approx(1 / data["pooled"])
        summary = client.get("/api/projects/test/pool/summary", params={"depth": 2})
        assert summary.status_code == 200, summary.text
        figures = summary.json()["summary"]
        assert figures["questions"] == 6 and figures["depth"] == 2
        assert figures["sources"]["mine"]["errors"] == 1
    assert client.get("/api/projects/test/pool", params={"q": " "}).status_code == 422
    assert client.get("/api/projects/test/pool", params={"q": "x", "depth": 0}).status_code == 422
    missing = client.get("/api/projects/test/items/nope/pool")
    assert missing.status_code == 404


def _events(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


def test_the_workbench_retrieves_from_an_external_system(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    client = _client(ws)
    replies: list[Any] = []

    def answer(body: dict[str, Any]) -> Any:
        return replies.pop(0) if replies else {"contexts": [{"text": "Meals on business trips"}]}

    api = "/api/projects/test/conversations"
    with FakeRag(answer) as service:
        saved = client.put(
            "/api/projects/test/pool-settings",
            json={
                # the slow reply waits 30 s; 2 s leaves the quick ones room on a busy machine
                "sources": _settings(service.url, timeout_s=2.0).model_dump()["sources"],
                "chat": "mine",
            },
        )
        assert saved.status_code == 200, saved.text
        assert saved.json()["chat"] == "mine", saved.json()
        assert saved.json()["sources"][1]["retries"] == 0, saved.json()
        found = _events(client.post(api, json={"query": "What do meals on trips cost?"}))
        assert found[-1]["type"] == "done", found[-1]
        item = get_item(ws, project, found[-1]["item"]["id"])
        turn = item.turns[0]
        assert [c["title"] for c in turn.retrieved] == ["travel.txt"]
        assert turn.retrieved[0]["found_by"] == {"mine": 1}
        assert turn.generation["retrieval"]["settings"]["source"] == "mine"
        assert service.requests[0]["query"] == "What do meals on trips cost?"
        # the second turn sends the conversation so far; a failing system stores nothing
        for failure, says in ((500, "HTTP 500"), ("slow", "timed out"), ("[]", "JSON object")):
            replies.append(failure)
            url = f"{api}/{item.id}/turns"
            sent = client.post(url, json={"version": item.version, "query": "And hotels?"})
            assert sent.status_code == 503 and says in sent.json()["detail"], sent.text
            assert "'mine'" in sent.json()["detail"]
            assert get_item(ws, project, item.id).turns == item.turns
        second = _events(
            client.post(
                f"{api}/{item.id}/turns", json={"version": item.version, "query": "And hotels?"}
            )
        )
        assert second[-1]["type"] == "done"
        history = service.requests[-1]["history"]
        assert history == [{"role": "user", "content": "What do meals on trips cost?"}]
        # the whole pool: the index and the system, each passage once
        client.put("/api/projects/test/pool-settings", json={"chat": "pool"})
        pooled = _events(client.post(api, json={"query": "meals on business trips"}))
        contexts = get_item(ws, project, pooled[-1]["item"]["id"]).turns[0].retrieved
        meals = [c for c in contexts if "Meals" in c["text"]]
        assert len(meals) == 1 and meals[0]["found_by"] == {"keyword": 1, "mine": 1}
    bad = client.put("/api/projects/test/pool-settings", json={"chat": "nobody"})
    assert bad.status_code == 422 and "chat 'nobody' is no source" in bad.text
    assert len(get_item(ws, project, item.id).turns) == 2  # only the turn that was answered


def test_assay_chat_retrieves_from_the_pool_chat_source(
    ws: Workspace, corpus: Corpus, tmp_path: Any
) -> None:
    """The terminal chat follows the workbench's chat source; a failing source skips the
    question with its reason and the chat goes on."""
    from typer.testing import CliRunner

    from assay.cli import make_app

    project = corpus.project
    replies: list[Any] = ["[]"]

    def answer(body: dict[str, Any]) -> Any:
        return replies.pop(0) if replies else {"contexts": [{"text": "Meals on business trips"}]}

    with FakeRag(answer) as service:
        chosen = _settings(service.url).model_dump() | {"chat": "mine"}
        update_settings(ws, project, {"pool": chosen})
        result = CliRunner().invoke(
            make_app(),
            ["--home", str(ws.settings.home), "chat", "-p", "test", "--save"],
            input="What do meals cost?\nAnd meals on trips?\n",
        )
    assert result.exit_code == 0, result.output
    assert "passages from the pool source mine" in result.output
    assert "No passages:" in result.output and "'mine'" in result.output
    assert "travel.txt" in result.output
    saved = [line for line in result.output.splitlines() if line.startswith("Saved as draft")]
    item = get_item(ws, project, saved[0].split()[4])
    assert [t.query for t in item.turns] == ["And meals on trips?"]
    assert item.turns[0].retrieved[0]["found_by"] == {"mine": 1}
    assert [r["history"] for r in service.requests] == [[], []]
