"""The history page and restore, and the versions pages, with their JSON twins."""

from __future__ import annotations

from fastapi.testclient import TestClient

from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item, editable_copy, get_item, save_item
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.sessions import create_session
from assay.records import Item, Turn
from assay.review.history import item_history
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app

TEXT = "The night train leaves at 22:40. Bikes travel free on weekdays."


def _client(ws: Workspace) -> TestClient:
    client = TestClient(create_app(ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def _item(client: TestClient, doc_id: str, answer: str) -> dict[str, object]:
    passage = {"doc_id": doc_id, "start": 0, "end": 32, "text": TEXT[:32]}
    turn = {"query": "When does the train leave?", "answer": answer, "evidence": [passage]}
    return {"turns": [turn]}


def test_history_page_json_and_restore(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p")
    doc = ingest_bytes(any_ws, project, "t.txt", TEXT.encode())
    client = _client(any_ws)
    item = client.post("/api/projects/p/items", json=_item(client, doc.id, "At 22:40.")).json()
    url = f"/api/projects/p/items/{item['item']['id']}"
    edited = _item(client, doc.id, "<b>Never</b>")
    assert client.put(url, json={"version": 1, "item": edited}).status_code == 200

    history = client.get(url + "/history").json()
    first = history["events"][0]["event"]
    answer = [c for c in history["events"][1]["changes"] if c["field"] == "answer"]
    assert answer == [
        {"field": "answer", "before": "At 22:40.", "after": "<b>Never</b>", "turn": 1,
         "change": "changed"}
    ]  # fmt: skip
    page = client.get(f"/projects/p/items/{item['item']['id']}/history")
    assert page.status_code == 200
    assert "&lt;b&gt;Never&lt;/b&gt;" in page.text and "<b>Never</b>" not in page.text
    assert f'class="secondary small restore-button" data-event="{first}"' in page.text
    editor = client.get(f"/projects/p/items/{item['item']['id']}").text
    assert f"/projects/p/items/{item['item']['id']}/history" in editor

    too_big = client.post(url + "/restore", json={"event": 2**33, "version": 1})
    assert too_big.status_code == 422 and "event" in too_big.text  # never the driver's error
    stale = client.post(url + "/restore", json={"event": first, "version": 1})
    assert stale.status_code == 409
    assert stale.json()["current"]["turns"][0]["answer"] == "<b>Never</b>"
    done = client.post(url + "/restore", json={"event": first, "version": 2})
    assert done.status_code == 200
    assert done.json()["item"]["turns"][0]["answer"] == "At 22:40."
    assert client.get(url + "/history").json()["events"][-1]["action"] == "restore"
    assert client.get("/api/projects/p/items/nope/history").status_code == 404
    conversation = Item(kind="conversation", turns=[Turn(query="Hello?")])
    conv_id = create_item(any_ws, project, conversation).id
    workbench = client.get(f"/projects/p/conversations/{conv_id}").text
    assert f"/projects/p/items/{conv_id}/history" in workbench
    conv_history = client.get(f"/projects/p/items/{conv_id}/history").text
    assert f'href="/projects/p/conversations/{conv_id}"' in conv_history


def test_versions_pages_and_api(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p")
    doc = ingest_bytes(any_ws, project, "t.txt", TEXT.encode())
    client = _client(any_ws)
    none = client.post("/api/projects/p/versions", json={"name": "v1"})
    assert none.status_code == 422 and "nothing to freeze" in none.json()["detail"]
    item = client.post("/api/projects/p/items", json=_item(client, doc.id, "At 22:40.")).json()
    url = f"/api/projects/p/items/{item['item']['id']}"
    assert client.post(url + "/status", json={"version": 1, "status": "submitted"}).is_success
    assert client.post(url + "/review", json={"version": 2, "verdict": "accept"}).is_success

    v1 = client.post("/api/projects/p/versions", json={"name": "v1"})
    assert v1.status_code == 201 and v1.json()["item_count"] == 1
    again = client.post("/api/projects/p/versions", json={"name": "v1"})
    assert again.status_code == 409 and "already has a dataset version" in again.json()["detail"]
    client.put(url, json={"version": 3, "item": _item(client, doc.id, "22:40")})
    assert client.post("/api/projects/p/versions", json={"name": "v2"}).status_code == 201

    listed = client.get("/api/projects/p/versions").json()
    assert [v["name"] for v in listed] == ["v2", "v1"]
    shown = client.get("/api/projects/p/versions/v1").json()
    assert shown["items"][0]["query"] == "When does the train leave?"
    diff = client.get("/api/projects/p/version-diff", params={"a": "v1", "b": "v2"}).json()
    assert [c["field"] for c in diff["changed"][0]["changes"]] == ["answer"]
    unknown = client.get("/api/projects/p/version-diff", params={"a": "v1", "b": "v9"})
    assert unknown.status_code == 404 and "'v9'" in unknown.json()["detail"]

    experiment = client.post(
        "/api/projects/p/experiments",
        json={"name": "e1", "pipelines": ["keyword"], "version": "v1", "start": False},
    )
    assert experiment.status_code == 201, experiment.text
    shown_experiment = client.get(f"/projects/p/experiments/{experiment.json()['id']}").text
    assert 'id="experiment-version"' in shown_experiment and v1.json()["hash"] in shown_experiment
    assert 'id="exp-version"' in client.get("/projects/p/experiments").text

    page = client.get("/projects/p/versions").text
    assert v1.json()["hash"][:12] in page and 'id="version-form"' in page
    assert "22:40" in client.get("/projects/p/version-diff?a=v1&b=v2").text
    assert v1.json()["hash"] in client.get("/projects/p/versions/v1").text


def test_a_reviewer_may_not_restore_an_earlier_question(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p")
    item = create_item(any_ws, project, Item(turns=[Turn(query="Q1", answer="a1")]))
    edited = editable_copy(item)
    edited.turns[0].query = "Q2"
    edited.turns[0].answer = "a2"
    saved = save_item(any_ws, project, item.id, edited, 1)
    reviewer = create_account(any_ws, "rita", "a long password 1")
    set_role(any_ws, project.id, reviewer.id, "reviewer")
    create_account(any_ws, "root", "a long password 2", admin=True)
    set_team_mode(any_ws, True)
    client = _client(any_ws)
    client.cookies.set("assay_session", create_session(any_ws, reviewer.id)[0])
    first, second = (e.event for e in item_history(any_ws, project, item.id))
    url = f"/api/projects/p/items/{item.id}/restore"

    refused = client.post(url, json={"event": first, "version": saved.version})

    assert refused.status_code == 403 and "change an item's question" in refused.json()["detail"]
    assert get_item(any_ws, project, item.id).version == saved.version
    allowed = client.post(url, json={"event": second, "version": saved.version})
    assert allowed.status_code == 200
