"""Review on the web: the verdict API, an item's reviews, the review queue and its page, and
who may review what in team mode (signed in as a reviewer, an annotator, a lead)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.gold.items import create_item, get_item, item_events, set_status
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Item, Project, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app

PASSWORD = "correct horse battery"


def client_for(ws: Workspace, username: str | None = None) -> TestClient:
    client = TestClient(create_app(ws), follow_redirects=False)
    client.get("/api/session")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    if username is not None:
        signed = client.post("/api/session", json={"username": username, "password": PASSWORD})
        assert signed.status_code == 200, signed.text
    return client


def submitted(
    ws: Workspace, project: Project, author: int | None = None, query: str = "When?"
) -> Item:
    item = create_item(
        ws, project, Item(turns=[Turn(query=query, answer="At 22:40.")]), author=author
    )
    return set_status(ws, project, item.id, "submitted", item.version, actor=author)


def test_verdicts_and_their_refusals(ws: Workspace, project: Project) -> None:
    client = client_for(ws)
    item = submitted(ws, project)
    url = f"/api/projects/test/items/{item.id}"

    missing = client.post(url + "/review", json={"verdict": "reject", "version": item.version})
    assert missing.status_code == 422
    assert missing.json()["detail"].startswith("reason: a reject needs a reason")
    unknown = client.post(url + "/review", json={"verdict": "ok", "version": item.version})
    assert (unknown.status_code, unknown.json()["detail"][:8]) == (422, "verdict:")

    draft = create_item(ws, project, Item(turns=[Turn(query="Draft?")]))
    refused = client.post(
        f"/api/projects/test/items/{draft.id}/review", json={"verdict": "accept", "version": 1}
    )
    assert refused.status_code == 422
    assert "it is a draft: its author submits it first" in refused.json()["detail"]

    edits = client.get(url).json()["input"]
    edits["turns"][0]["answer"] = "22:40, pier 3."
    done = client.post(
        url + "/review", json={"verdict": "accept", "version": item.version, "edits": edits}
    )
    assert done.status_code == 200, done.text
    assert done.json()["review"]["verdict"] == "accept_edited"
    assert done.json()["review"]["changes"] == [
        {"field": "turns[0].answer", "before": "At 22:40.", "after": "22:40, pier 3."}
    ]
    assert done.json()["item"]["status"] == "accepted"

    late = client.post(url + "/review", json={"verdict": "accept", "version": item.version})
    assert late.status_code == 409
    assert "accepted with edits by" in late.json()["detail"]
    assert late.json()["current"]["status"] == "accepted"

    reviews = client.get(url + "/reviews").json()
    assert [r["verdict"] for r in reviews["reviews"]] == ["accept_edited"]
    assert "it was accepted already" in reviews["refusal"]


def test_the_queue_and_its_page(ws: Workspace, project: Project) -> None:
    client = client_for(ws)
    first = submitted(ws, project, query="First <b>question</b>?")
    submitted(ws, project, query="Second?")
    queue = client.get("/api/projects/test/review-queue").json()
    assert queue["progress"] == {"reviewed": 0, "total": 2, "waiting": 2, "by_you": 0}
    assert [i["query"] for i in queue["items"]] == ["First <b>question</b>?", "Second?"]

    taken = client.post("/api/projects/test/review-queue/next").json()
    assert taken["item"] == first.id and taken["url"] == f"/projects/test/items/{first.id}"
    page = client.get("/projects/test/review")
    assert page.status_code == 200
    assert "First &lt;b&gt;question&lt;/b&gt;?" in page.text
    assert "0 of 2 reviewed" in page.text and "Start review" in page.text
    german = client.get("/projects/test/review", headers={"Accept-Language": "de"})
    assert "0 von 2 geprüft" in german.text and "Prüfung beginnen" in german.text

    editor = client.get(f"/projects/test/items/{first.id}")
    assert 'id="review-accept"' in editor.text and "review.js" in editor.text

    skipped = client.post(
        f"/api/projects/test/review-queue/{first.id}/skip", json={"reason": "later"}
    )
    assert skipped.status_code == 200
    assert client.post("/api/projects/test/review-queue/next").json()["item"] != first.id


@pytest.fixture
def team(any_ws: Workspace) -> dict[str, Any]:
    create_account(any_ws, "root", PASSWORD, admin=True)
    project = create_project(any_ws, "p")
    ids = {}
    for name, role in (("ann", "annotator"), ("rita", "reviewer"), ("lee", "lead")):
        ids[name] = create_account(any_ws, name, PASSWORD).id
        set_role(any_ws, project.id, ids[name], role)
    set_team_mode(any_ws, True)
    return {"ws": any_ws, "project": project, **ids}


def test_team_roles_in_review(team: dict[str, Any]) -> None:
    ws, project = team["ws"], team["project"]
    item = submitted(ws, project, team["ann"])
    url = f"/api/projects/p/items/{item.id}"
    rita, ann, lee = client_for(ws, "rita"), client_for(ws, "ann"), client_for(ws, "lee")

    # the annotator may not review, nor see the queue of other people's items
    assert ann.post(url + "/review", json={"verdict": "accept", "version": 2}).status_code == 403
    assert ann.get("/api/projects/p/review-queue").status_code == 403
    assert ann.get("/projects/p/review").status_code == 403

    # the reviewer edits the answer (a review edit), not the question
    stored = rita.get(url).json()["input"]
    stored["turns"][0]["query"] = "Changed?"
    assert rita.put(url, json={"version": 2, "item": stored}).status_code == 403
    edits = rita.get(url).json()["input"]
    edits["turns"][0]["query"] = "Changed?"
    body = {"verdict": "accept", "version": 2, "edits": edits}
    assert rita.post(url + "/review", json=body).status_code == 403
    edits["turns"][0]["query"] = "When?"
    edits["turns"][0]["answer"] = "22:40"
    saved = rita.put(url, json={"version": 2, "item": edits})
    assert saved.status_code == 200
    assert item_events(ws, project, item.id)[-1]["action"] == "review_edit"
    assert rita.get(url + "/reviews").json()["pending"][0]["field"] == "turns[0].answer"

    rejected = rita.post(
        url + "/review", json={"verdict": "reject", "version": 3, "reason": "Cite it."}
    )
    assert rejected.status_code == 200
    assert get_item(ws, project, item.id).status == "rejected"
    # the author sees the verdict and its reason on their own item
    seen = ann.get(url + "/reviews").json()
    assert [(r["verdict"], r["reason"], r["reviewer"]) for r in seen["reviews"]] == [
        ("reject", "Cite it.", "rita")
    ]
    assert seen["refusal"].startswith("ann may not review items")

    # a reviewer does not review their own items; a lead may
    own = submitted(ws, project, team["rita"], "Rita's?")
    own_url = f"/api/projects/p/items/{own.id}"
    refused = rita.post(own_url + "/review", json={"verdict": "accept", "version": 2})
    assert refused.status_code == 403 and "it is their own" in refused.json()["detail"]
    assert rita.post("/api/projects/p/review-queue/next").json()["item"] is None
    assert lee.post("/api/projects/p/review-queue/next").json()["item"] == own.id
    lead_own = submitted(ws, project, team["lee"], "Lee's?")
    accepted = lee.post(
        f"/api/projects/p/items/{lead_own.id}/review", json={"verdict": "accept", "version": 2}
    )
    assert accepted.status_code == 200


def test_the_status_route_leaves_verdicts_to_review(ws: Workspace, project: Project) -> None:
    client = client_for(ws)
    item = submitted(ws, project)
    url = f"/api/projects/test/items/{item.id}"
    for status in ("accepted", "rejected"):
        refused = client.post(url + "/status", json={"version": item.version, "status": status})
        assert refused.status_code == 422
        assert refused.json()["detail"].startswith(f"status: {status} is a reviewer's verdict")
    assert get_item(ws, project, item.id).status == "submitted"
