"""The suggestions JSON API against the in-process fake OpenAI server: asked, listed,
accepted into evidence, rejected, a conversation turn's rewrite; timeouts, endpoint errors
and garbage replies answer 502 with the reason and store nothing; the offline generator
answers that suggestions need an LLM. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.gold.items import create_item, get_item
from assay.llm.response_cache import clear_cache
from assay.records import Item, Project, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.fakes.openai_server import Behaviour, FakeOpenAI, Raw, Reply, Slow, Status
from tests.suggestion_sample import DOCS, JUDGE, QUESTION, REWRITE, add_documents, use_fake


@pytest.fixture
def any_project(any_ws: Workspace) -> Project:
    return create_project(any_ws, "test", "en")


@pytest.fixture
def client(any_ws: Workspace, any_project: Project) -> TestClient:
    client = TestClient(create_app(any_ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    client.cookies.set("assay_author", "Ada")
    return client


def url(item_id: str, tail: str = "") -> str:
    return f"/api/projects/test/items/{item_id}/suggestions{tail}"


def whole(ids: dict[str, str], *names: str) -> list[dict[str, Any]]:
    return [{"doc_id": ids[n], "start": 0, "end": len(DOCS[n])} for n in names]


def setup(ws: Workspace, project: Project) -> tuple[Item, dict[str, str]]:
    ids = add_documents(ws, project)
    return create_item(ws, project, Item(turns=[Turn(query=QUESTION)])), ids


def test_suggest_accept_two_reject_one(
    client: TestClient, any_ws: Workspace, any_project: Project
) -> None:
    item, ids = setup(any_ws, any_project)
    listed = client.get(url(item.id)).json()
    assert listed == {
        "suggestions": [],
        "documents": {},
        "generator": {"kind": "offline", "model": "offline-extractive", "needs_llm": True},
    }
    offline = client.post(url(item.id), json={"passages": whole(ids, "ferry.md")})
    assert offline.status_code == 422 and "need an LLM" in offline.json()["detail"]

    with FakeOpenAI([JUDGE]) as fake:
        use_fake(any_ws, any_project, fake)
        body = {"passages": whole(ids, "ferry.md", "bikes.md", "cake.md")}
        made = client.post(url(item.id), json=body)
    assert made.status_code == 201, made.text
    created = made.json()["created"]
    assert [s["label"] for s in created] == ["relevant", "distracting", "irrelevant"]
    assert made.json()["model"] == "fake-judge-1"
    first = created[0]
    assert first["state"] == "pending" and first["created_by"] == "Ada"
    assert len(first["prompt_hash"]) == 64 and first["params"]["model"] == "m"
    assert first["reason"] == "Fake reason 1: relevant." and first["turn"] == 1
    assert client.get(url(item.id)).json()["generator"]["needs_llm"] is False

    # a stale version is refused with the item as stored now
    stale = client.post(url(item.id, "/accept"), json={"version": 99, "ids": [first["id"]]})
    assert stale.status_code == 409 and stale.json()["current"]["version"] == item.version
    accept = {"version": item.version, "ids": [created[0]["id"], created[1]["id"]]}
    accepted = client.post(url(item.id, "/accept"), json=accept)
    assert accepted.status_code == 200, accepted.text
    answer = accepted.json()
    assert answer["item"]["version"] == item.version + 1
    assert [s["state"] for s in answer["suggestions"]] == ["accepted", "accepted"]
    assert answer["suggestions"][0]["decided_by"] == "Ada"
    shown = answer["input"]["turns"][0]["evidence"]
    assert [(e["label"], e["origin"]) for e in shown] == [
        ("relevant", "llm-suggestion"),
        ("distracting", "llm-suggestion"),
    ]
    assert set(answer["documents"]) == {ids["ferry.md"], ids["bikes.md"]}
    rejected = client.post(url(item.id, "/reject"), json={"ids": [created[2]["id"]]})
    assert rejected.status_code == 200 and rejected.json()["item"]["version"] == item.version + 1

    stored = get_item(any_ws, any_project, item.id)
    assert [(e.label, e.origin, e.author) for e in stored.turns[0].evidence] == [
        ("relevant", "llm-suggestion", "Ada"),
        ("distracting", "llm-suggestion", "Ada"),
    ]
    states = [s["state"] for s in client.get(url(item.id)).json()["suggestions"]]
    assert states == ["accepted", "accepted", "rejected"]
    pending = client.get(url(item.id) + "?state=pending").json()["suggestions"]
    assert pending == []
    again = client.post(url(item.id, "/reject"), json={"ids": [created[0]["id"]]})
    assert again.status_code == 409 and "decided already" in again.json()["detail"]

    dashboard = client.get("/api/projects/test/dashboard").json()
    rates = dashboard["suggestions"]
    assert rates["overall"] | {"acceptance_rate": None} == {
        "pending": 0,
        "accepted": 2,
        "rejected": 1,
        "total": 3,
        "acceptance_rate": None,
    }
    assert rates["relevance_by_model"][0]["model"] == "fake-judge-1"
    page = client.get("/projects/test/dashboard")
    assert page.status_code == 200 and "Labels: fake-judge-1" in page.text
    assert "dash-suggestions" in page.text  # the bars: one per label and per model


FAILURES: dict[str, tuple[list[Behaviour], str]] = {
    "timeout": ([Slow(5.0)], "timed out"),
    "server-error": ([Status(500, "the model crashed")], "500 server error"),
    "refused-key": ([Status(401, "bad key")], "ASSAY_LLM_API_KEY"),
    "not-json-body": ([Raw("{this is not json")], "malformed reply"),
    "prose": ([Reply("The first passage answers it.")], "not JSON"),
    "wrong-shape": ([Reply(json.dumps({"judgments": [{"passage": 7}]}))], "no passage 7"),
}


@pytest.mark.parametrize(("script", "words"), FAILURES.values(), ids=FAILURES.keys())
def test_llm_failures_answer_502_and_store_nothing(
    client: TestClient,
    any_ws: Workspace,
    any_project: Project,
    script: list[Behaviour],
    words: str,
) -> None:
    item, ids = setup(any_ws, any_project)
    # only the slow reply is meant to time out: the others get a bound a busy machine keeps
    timeout_s = 0.5 if isinstance(script[0], Slow) else 120.0
    with FakeOpenAI(script) as fake:
        use_fake(any_ws, any_project, fake, timeout_s=timeout_s)
        failed = client.post(url(item.id), json={"passages": whole(ids, "ferry.md", "cake.md")})
    assert failed.status_code == 502, failed.text
    assert words in failed.json()["detail"] and failed.json()["stored"] == 0
    assert client.get(url(item.id)).json()["suggestions"] == []
    assert get_item(any_ws, any_project, item.id) == item


def test_bad_requests_name_what_is_wrong(
    client: TestClient, any_ws: Workspace, any_project: Project
) -> None:
    item, ids = setup(any_ws, any_project)
    with FakeOpenAI([JUDGE]) as fake:
        use_fake(any_ws, any_project, fake)
        missing = client.post(url("no-such-item"), json={})
        assert missing.status_code == 404
        extra = client.post(url(item.id), json={"passages": [], "colour": "red"})
        assert extra.status_code == 422 and "colour" in extra.json()["detail"]
        no_turn = client.post(url(item.id), json={"turn": 3})
        assert no_turn.status_code == 404 and "no turn 3" in no_turn.json()["detail"]
        outside = [{"doc_id": ids["cake.md"], "start": 5, "end": 10_000}]
        unknown = [{"doc_id": "nope", "start": 0, "end": 4}]
        made = client.post(url(item.id), json={"passages": outside + unknown})
        assert made.status_code == 201
        assert made.json()["created"] == [] and fake.count == 0
        reasons = [s["reason"] for s in made.json()["skipped"]]
        assert reasons == [
            f"outside the document (0..{len(DOCS['cake.md'])})",
            "no such document in this project",
        ]
    assert (
        client.post(url(item.id, "/accept"), json={"version": 1, "ids": [12345]}).status_code == 404
    )
    assert client.post(url(item.id, "/accept"), json={"version": 1, "ids": []}).status_code == 422


def test_a_conversation_turn_gets_a_rewrite_to_accept_or_edit(
    client: TestClient, any_ws: Workspace, any_project: Project
) -> None:
    add_documents(any_ws, any_project)
    turns = [Turn(query=QUESTION, answer="At 22:40."), Turn(query="And in winter?")]
    item = create_item(any_ws, any_project, Item(kind="conversation", turns=turns))
    with FakeOpenAI([REWRITE]) as fake:
        use_fake(any_ws, any_project, fake)
        made = client.post(url(item.id), json={"kind": "rewrite", "turn": 2})
        garbage = fake.reset([Reply("When does it leave in winter?")])
        clear_cache(any_ws.engine)  # else the same request is answered from the cache
        failed = client.post(url(item.id), json={"kind": "rewrite", "turn": 2})
    assert garbage.count == 1
    assert failed.status_code == 502 and "not JSON" in failed.json()["detail"]
    assert made.status_code == 201, made.text
    [suggestion] = made.json()["created"]
    assert suggestion["kind"] == "rewrite" and suggestion["turn"] == 2
    assert suggestion["text"] == "When does the night ferry leave in winter?"
    edited = "When does the night ferry leave from December?"
    body = {"version": item.version, "ids": [suggestion["id"]], "rewrite": edited}
    accepted = client.post(url(item.id, "/accept"), json=body)
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["input"]["turns"][1]["rewrite"] == edited
    assert accepted.json()["suggestions"][0]["final_text"] == edited
    assert get_item(any_ws, any_project, item.id).turns[1].rewrite == edited
    assert len(client.get(url(item.id)).json()["suggestions"]) == 1  # the failure stored none
