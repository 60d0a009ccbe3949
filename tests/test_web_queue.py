"""Assignment and queues on the web (team mode, signed in), on SQLite and PostgreSQL: the
lead's assignment API and page, an annotator's queue with Submit → next and "N of M", blind
mode on item pages, lists and JSON, a lost reservation, and refused assignments."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from assay.corpus.documents import get_document_by_name
from assay.corpus.ingest import ingest_bytes
from assay.gold.item_lists import item_ids
from assay.gold.items import create_item, get_item
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Evidence, Item, Project, Turn
from assay.store.db import utcnow
from assay.store.projects import create_project, get_project
from assay.store.review_schema import assignments
from assay.store.workspace import Workspace
from tests.test_web_signin import PASSWORD, browser, sign_in

API = "/api/projects/p"


@pytest.fixture
def team(any_ws: Workspace) -> Workspace:
    """Team mode; project p with a document and six draft items; lead lea, annotators ada
    and bob, viewer vic, and eve who is no member."""
    create_account(any_ws, "root", PASSWORD, admin=True)
    project = create_project(any_ws, "p", "en")
    for name, role in (("lea", "lead"), ("ada", "annotator"), ("bob", "annotator"),
                       ("vic", "viewer")):  # fmt: skip
        set_role(any_ws, project.id, create_account(any_ws, name, PASSWORD).id, role)
    create_account(any_ws, "eve", PASSWORD)
    ingest_bytes(any_ws, project, "ferry.md", b"# Ferry\n\nThe night ferry leaves at 22:40.\n")
    for n in range(6):
        create_item(any_ws, project, Item(turns=[Turn(query=f"Question {n}?")]))
    set_team_mode(any_ws, True)
    return any_ws


def client(ws: Workspace, user: str) -> TestClient:
    c = browser(ws)
    assert sign_in(c, user).status_code == 200
    return c


def answered(c: TestClient, item_id: str) -> dict[str, object]:
    """The item's editable content with an answer and one passage of the document."""
    payload = c.get(f"{API}/items/{item_id}").json()
    body = payload["input"]
    doc_id = c.get(f"{API}/documents").json()["documents"][0]["id"]
    body["turns"][0]["answer"] = "At 22:40."
    body["turns"][0]["evidence"] = [{"doc_id": doc_id, "text": "22:40", "label": "relevant"}]
    return {"version": payload["item"]["version"], "item": body}


def test_a_lead_assigns_with_overlap_and_annotators_work_through_their_queues(
    team: Workspace,
) -> None:
    lead, ada, bob = client(team, "lea"), client(team, "ada"), client(team, "bob")
    made = lead.post(
        f"{API}/assignments",
        json={"to": ["ada", "bob"], "status": "draft", "overlap": 2, "blind": True},
    )
    assert made.status_code == 201, made.text
    assert made.json()["items"] == 6 and made.json()["tasks"] == {"ada": 6, "bob": 6}
    assert made.json()["settings"] == {"blind": True, "lock_minutes": 30}
    queue = ada.get(f"{API}/queue").json()
    assert (queue["done"], queue["total"], queue["open"]) == (0, 6, 6)
    page = ada.get("/projects/p/queue").text
    assert "0 of 6 done" in page and "My queue" in page

    first = ada.post(f"{API}/queue/next").json()
    assert first["url"].startswith("/projects/p/items/") and "?task=" in first["url"]
    editor = ada.get(first["url"]).text
    assert 'id="queue-bar"' in editor and "0 of 6 done" in editor
    task, item_id = first["task"]["id"], first["task"]["item_id"]
    submitted = ada.post(f"{API}/queue/{task}/submit", json=answered(ada, item_id))
    assert submitted.status_code == 200, submitted.text
    assert submitted.json()["item"]["status"] == "submitted"
    following = submitted.json()["next_url"]
    assert "?task=" in following and item_id not in following
    assert "1 of 6 done" in ada.get(following).text

    # blind mode: ada never sees bob's copies (page, JSON, lists), even when annotators may
    # read every item; the lead does
    assert lead.put(f"{API}/settings", json={"annotators_see_all": True}).status_code == 200
    bobs = bob.get(f"{API}/queue").json()["tasks"]
    bobs_copy = bobs[0]["item_id"]
    refused = ada.get(f"{API}/items/{bobs_copy}")
    assert refused.status_code == 403 and "blind mode" in refused.json()["detail"]
    assert ada.get(f"/projects/p/items/{bobs_copy}").status_code == 403
    listed = ada.get(f"{API}/items", params={"copies": "include", "limit": 100}).json()
    assert bobs_copy not in {row["id"] for row in listed["items"]}
    assert lead.get(f"{API}/items/{bobs_copy}").status_code == 200
    assert lead.get(f"{API}/items", params={"copies": "only"}).json()["total"] == 12
    assert lead.get(f"{API}/items").json()["total"] == 6  # the default list: gold only
    assert ada.get(f"{API}/items/{item_id}").status_code == 200  # her own copy

    # skip with a reason; the lead sees it and the counts
    second = following.split("task=")[1]
    skipped = ada.post(f"{API}/queue/{second}/skip", json={"reason": "Unclear question."})
    assert skipped.status_code == 200 and "?task=" in skipped.json()["next_url"]
    view = lead.get(f"{API}/assignments").json()
    counts = {a["user"]: (a["open"], a["done"], a["skipped"]) for a in view["annotators"]}
    assert counts == {"ada": (4, 1, 1), "bob": (6, 0, 0)}
    assert view["skipped"][0]["reason"] == "Unclear question."
    assert "Unclear question." in lead.get("/projects/p/assignments").text
    assert ada.post(f"{API}/queue/{task}/skip", json={"reason": " "}).status_code == 422
    # someone else's task, someone else's queue, the lead's pages: refused
    assert bob.post(f"{API}/queue/{second}/skip", json={"reason": "x"}).status_code == 403
    assert ada.get(f"{API}/queue", params={"user": "bob"}).status_code == 403
    assert ada.get(f"{API}/assignments").status_code == 403
    mine = {"to": ["ada"], "status": "draft"}
    assert ada.post(f"{API}/assignments", json=mine).status_code == 403
    assert lead.get(f"{API}/queue", params={"user": "bob"}).json()["total"] == 6


def test_refused_assignments_say_why_and_assign_nothing(team: Workspace) -> None:
    lead = client(team, "lea")
    cases = [
        ({"to": ["ada", "eve"]}, 422, "eve is not a member of project 'p'"),
        ({"to": ["nobody"]}, 404, "nobody"),
        ({"to": ["vic"]}, 422, "vic is a viewer in project 'p' and may not edit items"),
        ({"to": ["ada", "bob"], "overlap": 3}, 422, "overlap 3 needs at least 3 annotators"),
        ({"to": [], "overlap": 2}, 422, "the shared pool hands each item to one person"),
        ({"to": ["ada"], "status": ""}, 422, "say which items to assign"),
        # PostgreSQL refuses a NUL even as a query parameter: a 422 before the database
        ({"to": ["ada"], "ids": ["a\x00b"]}, 422, "ids"),
        ({"to": ["ada\x00"]}, 422, "to"),
    ]
    for body, status, message in cases:
        answer = lead.post(f"{API}/assignments", json={"status": "draft", **body})
        assert answer.status_code == status, (body, answer.text)
        assert message in answer.json()["detail"], answer.text
    assert lead.get(f"{API}/assignments").json()["task_count"] == 0


def test_a_lost_reservation_keeps_the_work_as_a_separate_version(team: Workspace) -> None:
    lead, ada, bob = client(team, "lea"), client(team, "ada"), client(team, "bob")
    first_id = item_ids(team, _project(team))[0]
    pool = lead.post(f"{API}/assignments", json={"ids": [first_id], "lock_minutes": 5})
    assert pool.json()["tasks"] == {"": 1}
    taken = ada.post(f"{API}/queue/next").json()
    assert taken["task"]["holder"] == "ada"
    assert bob.post(f"{API}/queue/next").json()["task"] is None  # reserved for ada
    mine = answered(ada, first_id)
    saved = ada.put(f"{API}/items/{first_id}", json=mine)  # her autosave renews it
    assert saved.status_code == 200
    with team.engine.begin() as conn:  # her reservation runs out, bob takes the task
        conn.execute(assignments.update().values(locked_until=utcnow() - timedelta(seconds=1)))
    assert bob.post(f"{API}/queue/next").json()["task"]["holder"] == "bob"
    late = ada.put(f"{API}/items/{first_id}", json={**mine, "version": 2})
    assert late.status_code == 403  # no longer hers: her autosave stores nothing
    assert "only on their own items or items assigned to them" in late.json()["detail"]
    mine["item"]["turns"][0]["answer"] = "Ada's last words."  # type: ignore[index]
    refusal = ada.post(f"{API}/queue/{taken['task']['id']}/submit", json={**mine, "version": 2})
    assert refusal.status_code == 409
    detail = refusal.json()["detail"]
    assert "bob took task" in detail and "kept as your own version" in detail
    kept = get_item(team, _project(team), refusal.json()["kept"])
    assert (kept.author, kept.status) == ("ada", "submitted")
    assert kept.turns[0].answer == "Ada's last words."
    assert get_item(team, _project(team), first_id).turns[0].answer == "At 22:40."  # bob's now


def _project(ws: Workspace) -> Project:
    return get_project(ws, "p")


def test_a_conversation_task_opens_the_workbench_with_submit_and_next(team: Workspace) -> None:
    project = _project(team)
    doc_id = team_doc(team)
    evidence = Evidence(doc_id=doc_id, start=None, end=None, text="22:40")
    talk = create_item(
        team,
        project,
        Item(
            kind="conversation",
            turns=[Turn(query="When?", answer="At 22:40.", evidence=[evidence])],
        ),
    )
    lead, ada = client(team, "lea"), client(team, "ada")
    made = lead.post(f"{API}/assignments", json={"to": ["ada"], "kind": "conversation"})
    assert made.json()["items"] == 1
    first = ada.post(f"{API}/queue/next").json()
    assert first["url"] == f"/projects/p/conversations/{talk.id}?task={first['task']['id']}"
    page = ada.get(first["url"]).text
    assert 'id="queue-submit"' in page and "Submit and next" in page and "0 of 1 done" in page
    german = ada.get(first["url"], headers={"accept-language": "de"}).text
    assert "Einreichen und weiter" in german and "0 von 1 erledigt" in german
    done = ada.post(f"{API}/queue/{first['task']['id']}/submit", json={"version": 1})
    assert done.status_code == 200 and done.json()["item"]["status"] == "submitted"
    assert done.json()["next_url"] == "/projects/p/queue"  # nothing left


def team_doc(ws: Workspace) -> str:
    return get_document_by_name(ws, _project(ws), "ferry.md").id


def test_a_reviewers_reject_sends_the_task_back_to_the_top_of_the_queue(team: Workspace) -> None:
    lead, ada = client(team, "lea"), client(team, "ada")
    ids = item_ids(team, _project(team))[:2]
    assert lead.post(f"{API}/assignments", json={"to": ["ada"], "ids": ids}).status_code == 201
    first = ada.post(f"{API}/queue/next").json()["task"]
    done = ada.post(f"{API}/queue/{first['id']}/submit", json=answered(ada, first["item_id"]))
    assert done.status_code == 200
    version = done.json()["item"]["version"]
    reason = "Cite the timetable, not the intro."
    rejected = lead.post(
        f"{API}/items/{first['item_id']}/review",
        json={"verdict": "reject", "reason": reason, "version": version},
    )
    assert rejected.status_code == 200, rejected.text
    queue = ada.get(f"{API}/queue").json()
    assert (queue["done"], queue["total"]) == (0, 2)
    assert queue["tasks"][0]["item_id"] == first["item_id"]
    assert queue["tasks"][0]["returned"] == reason
    back = ada.post(f"{API}/queue/next").json()["task"]
    assert back["item_id"] == first["item_id"]
    assert f"Sent back: {reason}" in ada.get("/projects/p/queue").text
