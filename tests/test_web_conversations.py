"""The conversation workbench's pages and JSON API: turns streamed from the offline generator
and from a scripted OpenAI-compatible server that fails, relevance saved, regeneration."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.annotation import get_item
from assay.ingest import ingest_bytes
from assay.models import Project
from assay.project_settings import update_settings
from assay.web import create_app
from assay.workspace import Workspace
from tests.fakes.openai_server import FakeOpenAI, Status, Stream

PAYLOAD = "<img src=x onerror=alert(1)>"
API = "/api/projects/test/conversations"


@pytest.fixture
def client(ws: Workspace, project: Project) -> TestClient:
    docs = {
        "ferry.md": "The night ferry leaves at 22:40 from pier 3. It stops at the island.",
        "bikes.md": "Bikes ride free on every ferry. The night ferry carries ten bikes at most.",
        "winter.txt": "From December the night ferry leaves at 21:15 instead.",
    }
    for name, text in docs.items():
        ingest_bytes(ws, project, name, text.encode())
    client = TestClient(create_app(ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def events(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


def start(client: TestClient, query: str = "When does the night ferry leave?") -> dict[str, Any]:
    found = events(client.post(API, json={"query": query}))
    assert found[0]["type"] == "saved"
    assert found[-1]["type"] == "done", found[-1]
    return found[-1]


def put(client: TestClient, last: dict[str, Any]) -> dict[str, Any]:
    url = f"{API}/{last['item']['id']}"
    response = client.put(url, json={"version": last["item"]["version"], "item": last["input"]})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_a_turn_is_retrieved_generated_streamed_and_stored(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    found = events(client.post(API, json={"query": "When does the night ferry leave?"}))
    kinds = [e["type"] for e in found]
    assert kinds[0] == "saved" and kinds[-1] == "done" and kinds.count("delta") >= 2
    streamed = "".join(e["text"] for e in found if e["type"] == "delta")
    item = get_item(ws, project, found[-1]["item"]["id"])
    assert item.kind == "conversation" and len(item.turns) == 1
    turn = item.turns[0]
    assert turn.answer == turn.original_answer == streamed and "22:40" in streamed
    assert turn.generation["kind"] == "offline" and turn.generation["model"] == "offline-extractive"
    assert turn.generation["retrieval"]["query"] == "When does the night ferry leave?"
    assert len(turn.retrieved) == 3
    assert {"chunk_id", "doc_id", "start", "end", "score", "rank", "text"} <= set(turn.retrieved[0])
    # the retrieved contexts are unrated, so the checks say so
    codes = {f["code"] for f in found[-1]["findings"]}
    assert {"passages_unrated", "enrichments_missing"} <= codes
    listed = client.get(API).json()
    assert listed["total"] == 1 and listed["items"][0]["turn_count"] == 1

    # a second turn goes through the item's own endpoint, with the history and the version
    url = f"{API}/{item.id}/turns"
    stale = client.post(url, json={"version": 99, "query": "And in winter?"})
    assert stale.status_code == 409 and stale.json()["current"]["version"] == item.version
    second = events(client.post(url, json={"version": item.version, "query": "And in winter?"}))
    assert second[-1]["type"] == "done"
    assert len(get_item(ws, project, item.id).turns) == 2


def test_relevance_toggles_are_saved_and_regenerate_uses_only_relevant(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    last = start(client)
    turn = last["input"]["turns"][0]
    by_name = {v: k for k, v in last["documents"].items()}
    labels = {}
    for context in turn["retrieved"]:
        label = "relevant" if context["doc_id"] == by_name["winter.txt"] else "irrelevant"
        labels[context["doc_id"]] = label
        turn["evidence"].append(
            {key: context[key] for key in ("doc_id", "start", "end", "text")}
            | {"label": label, "origin": "retrieved"}
        )
    turn["enrichments"] = {"answerability": ["ANSWERABLE"]}
    turn["answer"] = "It leaves at 22:40."  # an edit, kept apart from the original
    saved = put(client, last)
    stored = get_item(ws, project, saved["item"]["id"]).turns[0]
    assert {e.doc_id: e.label for e in stored.evidence} == labels
    assert stored.answer == "It leaves at 22:40." and stored.original_answer != stored.answer
    assert not {"passages_unrated", "enrichments_missing"} & {f["code"] for f in saved["findings"]}

    url = f"{API}/{saved['item']['id']}/turns/1/generate"
    found = events(client.post(url, json={"version": saved["item"]["version"]}))
    assert found[-1]["type"] == "done"
    again = get_item(ws, project, saved["item"]["id"]).turns[0]
    assert "21:15" in again.answer and "22:40" not in again.answer  # only the winter passage
    assert again.answer == again.original_answer
    assert again.generation["passages"] == "relevant" and again.generation["passage_count"] == 1
    assert again.generation["retrieval"]["query"]  # how it was retrieved is kept


def test_regenerate_without_relevant_passages_is_refused(client: TestClient) -> None:
    last = start(client)
    url = f"{API}/{last['item']['id']}/turns/1/generate"
    refused = client.post(url, json={"version": last["item"]["version"]})
    assert refused.status_code == 422 and "relevant" in refused.json()["detail"]
    assert (
        client.post(
            f"{API}/{last['item']['id']}/turns/2/generate",
            json={"version": last["item"]["version"], "source": "retrieved"},
        ).status_code
        == 404
    )


@pytest.mark.parametrize(
    "script",
    [
        [Status(500, "the model crashed")],
        [Stream(pieces=("The night ", "ferry leaves ", "at 22:40", "."), break_after=2)],
    ],
    ids=["status-500", "stream-broken"],
)
def test_generator_failures_keep_the_turn_and_partial_text(
    client: TestClient, ws: Workspace, project: Project, script: list[Any]
) -> None:
    with FakeOpenAI(script) as fake:
        settings = {"kind": "openai", "base_url": fake.url, "model": "m", "retries": 0}
        update_settings(ws, project, {"generator": settings})
        found = events(client.post(API, json={"query": "When does the night ferry leave?"}))
    assert found[0]["type"] == "saved" and found[-1]["type"] == "error"
    assert found[-1]["detail"]  # a message for the page
    partial = "".join(e["text"] for e in found if e["type"] == "delta")
    item = get_item(ws, project, found[-1]["item"]["id"])
    turn = item.turns[0]
    assert turn.query == "When does the night ferry leave?" and len(turn.retrieved) == 3
    assert turn.generation["partial"] is True and turn.generation["error"]
    assert turn.answer == partial
    if isinstance(script[0], Stream):
        assert partial == "The night ferry leaves "

    # retry once the generator is back: the answer is complete
    update_settings(ws, project, {"generator": None})
    url = f"{API}/{item.id}/turns/1/generate"
    retried = events(client.post(url, json={"version": item.version, "source": "retrieved"}))
    assert retried[-1]["type"] == "done"
    fixed = get_item(ws, project, item.id).turns[0]
    assert "22:40" in fixed.answer and "partial" not in fixed.generation


def test_settings_validate_templates_and_vocabulary(client: TestClient) -> None:
    url = "/api/projects/test/conversation-settings"
    shown = client.get(url).json()
    assert shown["generator"]["kind"] == "offline" and "api_key" not in shown["generator"]
    assert shown["enrichments"]["answerability"] == ["ANSWERABLE", "PARTIAL", "UNANSWERABLE"]
    bad = client.put(url, json={"generator": {"prompt_template": "{question} {nonsense}"}})
    assert bad.status_code == 422 and "nonsense" in bad.json()["detail"]
    assert client.get(url).json()["generator"] == shown["generator"]
    key = client.put(url, json={"generator": {"api_key": "sk-secret"}})
    assert key.status_code == 422
    good = client.put(url, json={"enrichments": {"Multi-Turn": ["Follow-up", "Correction"]}})
    assert good.status_code == 200
    assert good.json()["enrichments"] == {"Multi-Turn": ["Follow-up", "Correction"]}
    assert client.put(url, json={"enrichments": {"x": []}}).status_code == 422


def test_retriever_overrides_are_checked_and_used(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    refused = client.post(API, json={"query": "ferry", "retriever": {"embedder": "x"}})
    assert refused.status_code == 422
    rewrite = client.post(API, json={"query": "ferry", "retriever": {"query_from": "rewrite"}})
    assert rewrite.status_code == 422 and "rewrite" in rewrite.json()["detail"]
    found = events(
        client.post(
            API,
            json={
                "query": "it?",
                "rewrite": "bikes on the ferry",
                "retriever": {"k": 1, "query_from": "rewrite"},
            },
        )
    )
    turn = get_item(ws, project, found[-1]["item"]["id"]).turns[0]
    assert len(turn.retrieved) == 1
    assert turn.generation["retrieval"]["query"] == "bikes on the ferry"
    assert turn.rewrite == "bikes on the ferry"


def test_overlap_and_support(client: TestClient) -> None:
    answer = "The night ferry leaves at 22:40. Penguins sing."
    passage = "Tickets are sold online. The night ferry leaves at 22:40 from pier 3."
    result = client.post(f"{API}/overlap", json={"answer": answer, "passages": [passage, "x"]})
    body = result.json()
    assert body["answer_spans"] == [[0, 31]]
    sentences = body["passages"][0]["sentences"]
    assert len(sentences) == 1 and passage[sentences[0]["start"] :].startswith("The night ferry")
    start, end = body["passages"][0]["phrases"][0]
    assert passage[start:end].lower() == "the night ferry leaves at 22:40"
    assert body["passages"][1] == {"score": 0.0, "sentences": [], "phrases": []}
    units = body["support"]["units"]
    assert units[0]["score"] > 0.9 and units[0]["source"] == 0 and units[-1]["score"] < 0.5


def test_pages_escape_what_users_typed(client: TestClient, ws: Workspace) -> None:
    last = start(client, query=PAYLOAD + " ferry")
    listing = client.get("/projects/test/conversations")
    assert listing.status_code == 200 and PAYLOAD not in listing.text
    page = client.get(f"/projects/test/conversations/{last['item']['id']}")
    assert page.status_code == 200 and PAYLOAD not in page.text
    assert "conversation.js" in page.text
    assert client.get("/projects/test/conversations/new").status_code == 200
    german = client.get("/projects/test/conversations", headers={"Accept-Language": "de"})
    assert "Neues Gespräch" in german.text
    qa = client.post("/api/projects/test/items", json={"turns": [{"query": "q"}]}).json()
    assert client.get(f"/projects/test/conversations/{qa['item']['id']}").status_code == 404
    assert "conversations" in {
        tag
        for path in client.get("/api/openapi.json").json()["paths"].values()
        for op in path.values()
        for tag in op.get("tags", [])
    }
