"""The access guard's one read (team mode, signed in), on SQLite and PostgreSQL: a request
asks for its session, project, role and item owner once, and every answer still decides as
before: a role changed or removed counts from the next request, an assigned item is its
annotator's, an ended session and an unknown project are refused as they were."""

from __future__ import annotations

from typing import Any

import pytest

from assay.gold.items import create_item
from assay.people.accounts import create_account, get_account
from assay.people.members import remove_member, set_role
from assay.people.mode import set_team_mode
from assay.records import Item, Turn
from assay.review.assignments import ItemFilter, assign
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from tests.test_web_items_save import statements
from tests.test_web_signin import PASSWORD, browser, sign_in

API = "/api/projects/p"


@pytest.fixture
def team(any_ws: Workspace) -> tuple[Workspace, list[str]]:
    """Team mode; project p; lead lea, annotators ada and bob; two items of lea's."""
    create_account(any_ws, "root", PASSWORD, admin=True)
    project = create_project(any_ws, "p", "en")
    for name, role in (("lea", "lead"), ("ada", "annotator"), ("bob", "annotator")):
        set_role(any_ws, project.id, create_account(any_ws, name, PASSWORD).id, role)
    lea = get_account(any_ws, "lea").id
    ids = [
        create_item(any_ws, project, Item(turns=[Turn(query=f"Q{n}?")]), author=lea).id
        for n in range(2)
    ]
    set_team_mode(any_ws, True)
    return any_ws, ids


def test_a_signed_in_request_reads_session_project_role_and_owner_once(team: Any) -> None:
    ws, ids = team
    lea = browser(ws)
    assert sign_in(lea, "lea").status_code == 200
    lea.get(f"{API}/items/{ids[0]}")  # the session's first use may write last_seen_at
    with statements(ws) as sent:
        reply = lea.get(f"{API}/items/{ids[0]}")
    assert reply.status_code == 200
    assert reply.json()["item"]["id"] == ids[0]
    guard = [s for s in sent if "FROM sessions" in s or "JOIN sessions" in s]
    assert len(guard) == 1 and "project_members" in guard[0]
    assert not [s for s in sent if s.startswith("SELECT project_members.role")]
    assert not [s for s in sent if s.startswith("SELECT projects.")]
    assert not [s for s in sent if s.startswith("SELECT items.author_id")]
    with statements(ws) as sent:
        page = lea.get(f"/projects/p/items/{ids[0]}")
    assert page.status_code == 200
    assert not [s for s in sent if s.startswith("SELECT project_members.role")]
    assert not [s for s in sent if s.startswith("SELECT items.author_id")]


def test_a_role_changed_between_requests_counts_from_the_next(team: Any) -> None:
    ws, ids = team
    project = get_project(ws, "p")
    ada = browser(ws)
    assert sign_in(ada, "ada").status_code == 200
    assert ada.get(f"{API}/items/{ids[0]}").status_code == 403  # lea's item, not hers
    set_role(ws, project.id, get_account(ws, "ada").id, "lead")
    assert ada.get(f"{API}/items/{ids[0]}").status_code == 200
    remove_member(ws, project.id, get_account(ws, "ada").id)
    refused = ada.get(f"{API}/items/{ids[0]}")
    assert refused.status_code == 403
    assert "not a member" in refused.json()["detail"]


def test_an_item_assigned_to_an_annotator_is_theirs_to_open_and_save(team: Any) -> None:
    ws, ids = team
    project = get_project(ws, "p")
    lea_id = get_account(ws, "lea").id
    assign(ws, project, ItemFilter(ids=[ids[1]]), ["ada"], assigned_by=lea_id)
    ada, bob = browser(ws), browser(ws)
    assert sign_in(ada, "ada").status_code == 200
    assert sign_in(bob, "bob").status_code == 200
    payload = ada.get(f"{API}/items/{ids[1]}").json()
    body = payload["input"]
    body["turns"][0]["answer"] = "assigned, so mine"
    saved = ada.put(f"{API}/items/{ids[1]}", json={"version": 1, "item": body})
    assert saved.status_code == 200, saved.text
    assert saved.json()["item"]["turns"][0]["answer"] == "assigned, so mine"
    assert bob.get(f"{API}/items/{ids[1]}").status_code == 403
    assert bob.put(f"{API}/items/{ids[1]}", json={"version": 2, "item": body}).status_code == 403
    assert ada.get(f"{API}/items/{ids[0]}").status_code == 403  # not assigned to her


def test_ended_sessions_and_unknown_projects_are_refused_as_before(team: Any) -> None:
    ws, ids = team
    lea = browser(ws)
    assert lea.get(f"{API}/items/{ids[0]}").status_code == 401  # never signed in
    assert sign_in(lea, "lea").status_code == 200
    missing = lea.get("/api/projects/nope/items")
    assert missing.status_code == 404 and "no project named 'nope'" in missing.json()["detail"]
    assert lea.delete("/api/session").status_code in (200, 204)
    assert lea.get(f"{API}/items/{ids[0]}").status_code == 401
