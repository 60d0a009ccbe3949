"""The conversation workbench's pages and JSON API: turns streamed from the offline generator
and from a scripted OpenAI-compatible server that fails, relevance saved, regeneration into a
draft beside the person's answer (taken, discarded, or failing without changing anything)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from assay.cli import make_app
from assay.corpus.ingest import ingest_bytes
from assay.formats import get_format
from assay.gold.item_lists import list_items
from assay.gold.items import create_item, get_item, item_events
from assay.gold.project_config import update_settings
from assay.llm import Message, prompt_hash
from assay.records import Item, Project, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle
from assay.web import create_app
from tests.fakes.openai_server import Behaviour, FakeOpenAI, Raw, Slow, Status, Stream

PAYLOAD = "<img src=x onerror=alert(1)>"
API = "/api/projects/test/conversations"
HUMAN = "A person checked this: the night ferry leaves at 22:40."


def make_client(ws: Workspace, project: Project) -> TestClient:
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


@pytest.fixture
def client(ws: Workspace, project: Project) -> TestClient:
    return make_client(ws, project)


@pytest.fixture
def any_project(any_ws: Workspace) -> Project:
    return create_project(any_ws, "test", "en")


@pytest.fixture
def db_client(any_ws: Workspace, any_project: Project) -> TestClient:
    """A client on SQLite and on PostgreSQL, signed as the annotator "Ada"."""
    client = make_client(any_ws, any_project)
    client.cookies.set("assay_author", "Ada")
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


def test_relevance_toggles_are_saved_and_regenerate_drafts_from_relevant(
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
    assert found[-1]["type"] == "done" and found[-1]["stored"] == "draft"
    again = get_item(ws, project, saved["item"]["id"]).turns[0]
    assert again.answer == "It leaves at 22:40."  # the person's answer is not touched
    assert again.original_answer == stored.original_answer
    draft = again.generation["draft"]
    assert "21:15" in draft["text"] and "22:40" not in draft["text"]  # only the winter passage
    assert draft["passages"] == "relevant" and draft["passage_count"] == 1
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


# ---------------------------------------------------------------- human text is never overwritten


def use_fake(ws: Workspace, project: Project, fake: FakeOpenAI) -> None:
    settings = {"kind": "openai", "base_url": fake.url, "model": "m", "retries": 0}
    update_settings(ws, project, {"generator": settings | {"timeout_s": 0.5}})


def written(client: TestClient) -> dict[str, Any]:
    """A conversation whose first answer a person rewrote."""
    last = start(client)
    last["input"]["turns"][0]["answer"] = HUMAN
    return put(client, last)


FAILURES: dict[str, list[Behaviour]] = {
    "status-500": [Status(500, "the model crashed")],
    "status-429": [Status(429, "slow down", headers={"Retry-After": "0"})],
    "garbage-json": [Raw("{this is not json")],
    "garbage-event": [Stream(pieces=("The night ", "ferry ", "leaves."), garbage_after=2)],
    "hang": [Slow(5.0)],
    "hang-mid-stream": [Stream(pieces=("The night ", "ferry ", "leaves."), hang_after=2)],
    "stream-dropped": [Stream(pieces=("The night ", "ferry ", "leaves."), break_after=2)],
}


@pytest.mark.parametrize("script", FAILURES.values(), ids=FAILURES.keys())
def test_a_failed_regenerate_changes_nothing(
    db_client: TestClient, any_ws: Workspace, any_project: Project, script: list[Behaviour]
) -> None:
    saved = written(db_client)
    item_id = saved["item"]["id"]
    before = get_item(any_ws, any_project, item_id)
    history = item_events(any_ws, any_project, item_id)
    with FakeOpenAI(script) as fake:
        use_fake(any_ws, any_project, fake)
        url = f"{API}/{item_id}/turns/1/generate"
        found = events(db_client.post(url, json={"version": before.version, "source": "retrieved"}))
    assert fake.count == 1
    assert found[-1]["type"] == "error" and found[-1]["detail"]
    assert found[-1]["item"]["version"] == before.version
    assert found[-1]["input"]["turns"][0]["answer"] == HUMAN
    after = get_item(any_ws, any_project, item_id)
    assert after == before  # answer, original answer, generation record, version, timestamps
    assert item_events(any_ws, any_project, item_id) == history


def test_a_regenerated_draft_waits_beside_the_answer_until_taken(
    db_client: TestClient, any_ws: Workspace, any_project: Project
) -> None:
    saved = written(db_client)
    item_id = saved["item"]["id"]
    original = saved["input"]["turns"][0]["original_answer"]
    pieces = ("The night ferry ", "leaves at 22:40 [1].")
    with FakeOpenAI([Stream(pieces=pieces)]) as fake:
        use_fake(any_ws, any_project, fake)
        url = f"{API}/{item_id}/turns/1/generate"
        found = events(
            db_client.post(
                url, json={"version": saved["item"]["version"]} | {"source": "retrieved"}
            )
        )
    assert [e["text"] for e in found if e["type"] == "delta"] == list(pieces)
    done = found[-1]
    assert done["type"] == "done" and done["stored"] == "draft"
    turn = get_item(any_ws, any_project, item_id).turns[0]
    assert turn.answer == HUMAN and turn.original_answer == original
    draft = turn.generation["draft"]
    asked = [Message(m["role"], m["content"]) for m in fake.requests[0]["messages"]]
    assert draft["text"] == "".join(pieces)
    assert draft["model"] == "m" and draft["kind"] == "openai"
    assert draft["prompt_hash"] == prompt_hash(asked)
    assert draft["params"] == {"temperature": 0.0, "max_tokens": 512}
    assert done["input"]["turns"][0]["generation"]["draft"]["text"] == draft["text"]

    take = f"{API}/{item_id}/turns/1/draft/take"
    version = done["item"]["version"]
    stale = db_client.post(take, json={"version": version - 1})
    assert stale.status_code == 409 and stale.json()["current"]["version"] == version
    assert get_item(any_ws, any_project, item_id).turns[0].answer == HUMAN
    taken = db_client.post(take, json={"version": version})
    assert taken.status_code == 200, taken.text
    turn = get_item(any_ws, any_project, item_id).turns[0]
    assert turn.answer == turn.original_answer == draft["text"]
    assert "draft" not in turn.generation and turn.generation["prompt_hash"] == draft["prompt_hash"]
    assert turn.generation["taken_by"] == "Ada" and turn.generation["retrieval"]["query"]
    last = item_events(any_ws, any_project, item_id)[-1]
    assert last["action"] == "take-draft" and last["actor"] == "Ada"
    assert last["before"]["turns"][0]["answer"] == HUMAN  # the replaced answer stays in the history
    again = db_client.post(take, json={"version": taken.json()["item"]["version"]})
    assert again.status_code == 422 and "no draft" in again.json()["detail"]


def test_a_draft_can_be_discarded(
    db_client: TestClient, any_ws: Workspace, any_project: Project
) -> None:
    saved = written(db_client)
    item_id = saved["item"]["id"]
    url = f"{API}/{item_id}/turns/1/generate"
    body = {"version": saved["item"]["version"], "source": "retrieved"}
    done = events(db_client.post(url, json=body))[-1]
    assert done["stored"] == "draft"  # the offline generator drafts too
    discard = f"{API}/{item_id}/turns/1/draft/discard"
    dropped = db_client.post(discard, json={"version": done["item"]["version"]})
    assert dropped.status_code == 200, dropped.text
    turn = get_item(any_ws, any_project, item_id).turns[0]
    assert turn.answer == HUMAN and "draft" not in turn.generation
    last = item_events(any_ws, any_project, item_id)[-1]
    assert last["action"] == "discard-draft" and last["actor"] == "Ada"
    missing = db_client.post(f"{API}/{item_id}/turns/2/draft/discard", json={"version": 99})
    assert missing.status_code in (404, 409)


@pytest.mark.parametrize(
    "script",
    [
        [Status(500, "the model crashed")],
        [Stream(pieces=("The night ", "ferry leaves ", "at 22:40", "."), break_after=2)],
    ],
    ids=["status-500", "stream-dropped"],
)
def test_a_failed_first_answer_leaves_no_answer_and_the_error(
    db_client: TestClient, any_ws: Workspace, any_project: Project, script: list[Behaviour]
) -> None:
    with FakeOpenAI(script) as fake:
        use_fake(any_ws, any_project, fake)
        found = events(db_client.post(API, json={"query": "When does the night ferry leave?"}))
    assert found[0]["type"] == "saved" and found[-1]["type"] == "error"
    assert found[-1]["detail"]  # a message for the page
    item = get_item(any_ws, any_project, found[-1]["item"]["id"])
    turn = item.turns[0]
    assert turn.query == "When does the night ferry leave?" and len(turn.retrieved) == 3
    assert turn.answer == turn.original_answer == ""  # nothing partial passes for an answer
    assert turn.generation["error"] and "partial" not in turn.generation
    assert turn.generation["model"] == "m" and turn.generation["retrieval"]["query"]

    # retry once the generator is back: a turn without an answer gets one directly
    update_settings(any_ws, any_project, {"generator": None})
    url = f"{API}/{item.id}/turns/1/generate"
    retried = events(db_client.post(url, json={"version": item.version, "source": "retrieved"}))
    assert retried[-1]["type"] == "done" and retried[-1]["stored"] == "answer"
    fixed = get_item(any_ws, any_project, item.id).turns[0]
    assert "22:40" in fixed.answer and fixed.answer == fixed.original_answer
    assert "error" not in fixed.generation and "draft" not in fixed.generation


@pytest.mark.parametrize("query", ["\x00\x01\x02", "\x1b\x07\x7f\x9b", " \t\n ", "\u200b\u200b"])
def test_a_question_without_visible_text_is_refused(
    db_client: TestClient, any_ws: Workspace, any_project: Project, query: str
) -> None:
    refused = db_client.post(API, json={"query": query})
    assert refused.status_code == 422, refused.text
    assert "empty or made only of control characters" in refused.json()["detail"]
    assert db_client.get(API).json()["total"] == 0  # no empty conversation left behind
    last = start(db_client)
    item_id, version = last["item"]["id"], last["item"]["version"]
    refused = db_client.post(f"{API}/{item_id}/turns", json={"version": version, "query": query})
    assert refused.status_code == 422
    stored = get_item(any_ws, any_project, item_id)
    assert stored.version == version and len(stored.turns) == 1


def test_control_characters_inside_a_question_are_dropped(
    db_client: TestClient, any_ws: Workspace, any_project: Project
) -> None:
    last = start(db_client, query="When\x00 does the night\x07 ferry leave?")
    turn = get_item(any_ws, any_project, last["item"]["id"]).turns[0]
    assert turn.query == "When does the night ferry leave?"


def test_a_chat_saved_by_the_cli_regenerates_and_exports(
    client: TestClient, ws: Workspace, project: Project, tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        make_app(),
        ["--home", str(ws.settings.home), "chat", "--project", "test", "--save"],
        input="When does the night ferry leave?\nAnd from December on?\n",
    )
    assert result.exit_code == 0, result.output
    (summary,) = list_items(ws, project, kind="conversation")[1]
    item = get_item(ws, project, summary.id)
    contexts = [c for t in item.turns for c in t.retrieved]
    assert contexts and all("doc_id" in c and "document_id" not in c for c in contexts)
    assert {"ferry.md", "winter.txt"} <= set(
        client.get(f"{API}/{item.id}").json()["documents"].values()
    )

    url = f"{API}/{item.id}/turns/2/generate"
    found = events(client.post(url, json={"version": item.version, "source": "retrieved"}))
    assert found[-1]["type"] == "done" and found[-1]["stored"] == "draft", found[-1]
    take = f"{API}/{item.id}/turns/2/draft/take"
    assert client.post(take, json={"version": found[-1]["item"]["version"]}).status_code == 200
    bundle = export_bundle(ws, project)
    get_format("ragaphene").write(bundle, tmp_path / "chat.json")
    get_format("native").write(bundle, tmp_path / "chat.zip")
    exported = json.loads((tmp_path / "chat.json").read_text())
    assert "21:15" in json.dumps(exported)


def test_contexts_in_the_old_cli_shape_are_read(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    last = start(client)
    old = [
        {"document_id": c["doc_id"], "title": "x"} | {k: v for k, v in c.items() if k != "doc_id"}
        for c in last["input"]["turns"][0]["retrieved"]
    ]
    item = create_item(
        ws,
        project,
        Item(
            kind="conversation",
            turns=[Turn(query="When does the night ferry leave?", answer=HUMAN, retrieved=old)],
        ),
    )
    shown = client.get(f"{API}/{item.id}").json()
    assert [c["doc_id"] for c in shown["input"]["turns"][0]["retrieved"]] == [
        c["doc_id"] for c in last["input"]["turns"][0]["retrieved"]
    ]
    assert set(shown["documents"].values()) == {"ferry.md", "bikes.md", "winter.txt"}
    url = f"{API}/{item.id}/turns/1/generate"
    found = events(client.post(url, json={"version": item.version, "source": "retrieved"}))
    assert (
        found[-1]["type"] == "done"
        and "22:40" in found[-1]["input"]["turns"][0]["generation"]["draft"]["text"]
    )
