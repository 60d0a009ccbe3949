"""The agreement page and the adjudication view, with their JSON API, on SQLite and
PostgreSQL; who may adjudicate in team mode."""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi.testclient import TestClient

from assay.gold.items import create_item, get_item, save_item
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.sessions import create_session
from assay.records import Item, Project, Turn, to_json
from assay.review.agreement import agreement_report
from assay.review.copies import copy_item
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.test_review_agreement import SENTENCES, hand_in, setup, turn

PAYLOAD = "<img src=x onerror=alert(1)>"


def client_for(ws: Workspace, cookie: str | None = None) -> TestClient:
    client = TestClient(create_app(ws), follow_redirects=False)
    if cookie:
        client.cookies.set("assay_session", cookie)
    client.get("/api/session")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def overlap(ws: Workspace) -> tuple[Project, str, dict[str, str]]:
    """An original done by ada and bob, who disagree on the type and one passage."""
    project, doc, who = setup(ws, ["ada", "bob"])
    original = create_item(ws, project, Item(turns=[Turn(query="What is refunded?")]))
    copies = {n: copy_item(ws, project, original.id, who[n]) for n in ("ada", "bob")}
    hand_in(ws, project, copies["ada"], turn(doc, "fact_single", {0: None}, PAYLOAD), who["ada"])
    bob = turn(doc, "summary", {0: None, 1: None}, "Hotels.")
    hand_in(ws, project, copies["bob"], bob, who["bob"])
    return project, original.id, copies


def test_agreement_page_and_its_json_twin(any_ws: Workspace) -> None:
    project, _, _ = overlap(any_ws)
    client = client_for(any_ws)
    api = client.get("/api/projects/p/agreement")
    assert api.status_code == 200
    body = {k: v for k, v in api.json().items() if k != "computed_at"}  # when it was computed
    assert body == json.loads(json.dumps(to_json(agreement_report(any_ws, project))))
    assert api.json()["pairs"][0]["name"] == "ada / bob"
    chunks = client.get("/api/projects/p/agreement?chunking=sent").json()
    assert chunks["chunking"] == "sent" and chunks["pairs"][0]["measures"]["passages_f1"] == 2 / 3
    missing = client.get("/api/projects/p/agreement?chunking=nope")
    assert missing.status_code == 404 and "no chunking named 'nope'" in missing.json()["detail"]

    page = client.get("/projects/p/agreement?chunking=sent")
    assert page.status_code == 200
    assert 'id="table-pairs"' in page.text and "ada / bob" in page.text
    assert "Awaiting adjudication: 1" in page.text
    assert '<option value="sent" selected>' in page.text
    german = client.get("/projects/p/agreement", headers={"Accept-Language": "de"}).text
    assert "Je Paar von Annotierenden" in german and "Übereinstimmung" in german


def test_adjudication_list_view_and_merge(any_ws: Workspace) -> None:
    project, original, copies = overlap(any_ws)
    client = client_for(any_ws)
    waiting = client.get("/api/projects/p/adjudication").json()["items"]
    assert [w["id"] for w in waiting] == [original]
    assert original in client.get("/projects/p/adjudication").text

    view = client.get(f"/api/projects/p/adjudication/{original}").json()
    assert [v["annotator"] for v in view["versions"]] == ["gold", "ada", "bob"]
    assert view["turns"][0]["fields"]["query_type"]["differs"] is True
    page = client.get(f"/projects/p/adjudication/{original}").text
    assert PAYLOAD not in page.split('id="adjudication-data">')[0]  # only in the JSON island
    island = re.search(r'id="adjudication-data">(.*?)</script>', page, re.S)
    assert island and "<img" not in island.group(1)  # escaped inside the island

    url = f"/api/projects/p/adjudication/{original}"
    ada, bob = copies["ada"], copies["bob"]
    body: dict[str, Any] = {
        "version": view["version"],
        "base": ada,
        "turns": [
            {
                "query": ada,
                "query_type": bob,
                "answer": bob,
                "passages": [{"source": bob, "index": 1, "group": 7}, {"source": ada, "index": 0}],
            }
        ],
    }
    bad = client.post(url, json={**body, "base": "nobody"})
    assert bad.status_code == 422 and "base" in bad.json()["detail"]
    stale = client.post(url, json={**body, "version": view["version"] + 5})
    assert stale.status_code == 409 and stale.json()["current"]["id"] == original
    saved = client.post(url, json=body)
    assert saved.status_code == 200, saved.text
    gold = saved.json()["item"]
    assert gold["status"] == "accepted"
    t = gold["turns"][0]
    assert (t["query_type"], t["answer"]) == ("summary", "Hotels.")
    assert (t["evidence"][0]["text"], t["evidence"][0]["group"]) == (SENTENCES[1], 7)
    again = client.post(url, json=body)  # the page's version is stale now
    assert again.status_code == 409
    assert client.get("/api/projects/p/adjudication").json()["items"] == []
    assert get_item(any_ws, project, original).version == gold["version"]


def test_reviewers_adjudicate_annotators_may_not_and_questions_stay_locked(
    any_ws: Workspace,
) -> None:
    project, original, copies = overlap(any_ws)
    rita = create_account(any_ws, "rita", "a long password of rita")
    set_role(any_ws, project.id, rita.id, "reviewer")
    ann = create_account(any_ws, "ann", "a long password of ann")
    set_role(any_ws, project.id, ann.id, "annotator")
    # bob rewrote the question in his copy
    stored = get_item(any_ws, project, copies["bob"])
    stored.turns[0].query = "What does a hotel night cost?"
    save_item(any_ws, project, copies["bob"], stored, stored.version)
    create_account(any_ws, "root", "a long password of root", admin=True)
    set_team_mode(any_ws, True)

    annotator = client_for(any_ws, create_session(any_ws, ann.id)[0])
    assert annotator.get("/projects/p/adjudication").status_code == 403
    assert annotator.get(f"/api/projects/p/adjudication/{original}").status_code == 403
    assert annotator.get("/api/projects/p/agreement").status_code == 403

    reviewer = client_for(any_ws, create_session(any_ws, rita.id)[0])
    view = reviewer.get(f"/api/projects/p/adjudication/{original}").json()
    bob = copies["bob"]
    pick = {"query": bob, "query_type": bob, "answer": bob}
    body = {"version": view["version"], "base": bob, "turns": [pick]}
    refused = reviewer.post(f"/api/projects/p/adjudication/{original}", json=body)
    assert refused.status_code == 403 and "change an item's question" in refused.json()["detail"]
    body["turns"] = [{**pick, "query": original}]
    done = reviewer.post(f"/api/projects/p/adjudication/{original}", json=body)
    assert done.status_code == 200 and done.json()["item"]["status"] == "accepted"
    assert reviewer.get("/projects/p/agreement").status_code == 200
