"""The comments API (``/api/projects/{name}/items/{id}/comments``), its access rules in team
mode, and the open-comments column of the items list."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient

from assay.gold.items import create_item, get_item, save_item
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.sessions import create_session
from assay.records import Item, Turn
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from assay.web import create_app

ANSWER = "The night ferry leaves at 22:40 from pier 3."


def _client(ws: Workspace, session: str | None = None) -> TestClient:
    client = TestClient(create_app(ws))
    client.get("/api/session")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    if session:
        client.cookies.set("assay_session", session)
    return client


def test_comment_reply_resolve_and_outdated_through_the_api(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p")
    item = create_item(any_ws, project, Item(turns=[Turn(query="When?", answer=ANSWER)]))
    client = _client(any_ws)
    url = f"/api/projects/p/items/{item.id}/comments"
    start = ANSWER.index("22:40")
    made = client.post(
        url, json={"body": "Local time?", "target": "answer", "turn": 0, "start": start,
                   "end": start + 5, "quote": "22:40"},
    )  # fmt: skip
    assert made.status_code == 201, made.text
    first = made.json()
    assert (first["quote"], first["anchor"], first["mine"]) == ("22:40", "ok", True)
    reply = client.post(url, json={"body": "Yes, CET.", "parent_id": first["id"]}).json()
    assert reply["parent_id"] == first["id"]

    listed = client.get("/api/projects/p/items").json()["items"]
    assert [row["open_comments"] for row in listed] == [1]
    page = client.get("/projects/p/items").text
    assert 'class="num open-comments">1<' in page

    done = client.patch(f"{url}/{first['id']}", json={"resolved": True})
    assert done.json()["resolved"] is True
    assert client.get("/api/projects/p/items").json()["items"][0]["open_comments"] == 0
    assert client.patch(f"{url}/{first['id']}", json={}).status_code == 422
    edited = client.patch(f"{url}/{reply['id']}", json={"body": "Yes: CET."}).json()
    assert edited["body"] == "Yes: CET."

    stored = get_item(any_ws, project, item.id)
    changed = replace(stored.turns[0], answer="The night ferry leaves from pier 3.")
    save_item(any_ws, project, item.id, replace(stored, turns=[changed]), stored.version)
    found = client.get(url).json()
    assert [(c["body"], c["anchor"]) for c in found["comments"]] == [
        ("Local time?", "outdated"),
        ("Yes: CET.", "ok"),
    ]
    assert found["can_write"] is True

    bad = client.post(url, json={"body": "x", "target": "answer", "start": 0, "end": 999})
    assert bad.status_code == 422 and "0 <= start < end" in bad.json()["detail"]
    assert client.post(url, json={"body": "x", "colour": "red"}).status_code == 422
    assert client.delete(f"{url}/{first['id']}").status_code == 204
    assert client.get(url).json()["comments"] == []
    assert client.get("/api/projects/p/items/nope/comments").status_code == 404


@pytest.fixture
def team(any_ws: Workspace) -> dict[str, TestClient]:
    project = create_project(any_ws, "p")
    create_account(any_ws, "root", "correct horse battery", admin=True)
    clients = {}
    for role in ("annotator", "reviewer", "viewer"):
        account = create_account(any_ws, role, "correct horse battery")
        set_role(any_ws, project.id, account.id, role)
        clients[role] = _client(any_ws, create_session(any_ws, account.id)[0])
    set_team_mode(any_ws, True)
    return clients


def test_viewers_read_comments_and_only_authors_edit_theirs(
    any_ws: Workspace, team: dict[str, TestClient]
) -> None:
    p = get_project(any_ws, "p")
    item = create_item(any_ws, p, Item(turns=[Turn(query="When?", answer=ANSWER)]))
    url = f"/api/projects/p/items/{item.id}/comments"
    made = team["reviewer"].post(url, json={"body": "Check the pier."})
    assert made.status_code == 201
    comment = made.json()
    assert team["viewer"].post(url, json={"body": "me too"}).status_code == 403
    seen = team["viewer"].get(url).json()
    assert seen["can_write"] is False and seen["comments"][0]["mine"] is False
    annotator = team["annotator"]
    assert (
        annotator.post(url, json={"body": "Fixed", "parent_id": comment["id"]}).status_code == 201
    )
    refused = annotator.patch(f"{url}/{comment['id']}", json={"body": "changed"})
    assert refused.status_code == 403 and "only its author (reviewer)" in refused.json()["detail"]
    assert annotator.delete(f"{url}/{comment['id']}").status_code == 403
    assert annotator.patch(f"{url}/{comment['id']}", json={"resolved": True}).status_code == 200


def test_the_cli_lists_adds_replies_and_resolves(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from assay.cli import make_app
    from assay.store.settings import Settings

    home = tmp_path / "ws"
    ws = Workspace.open(Settings(home=home))
    try:
        project = create_project(ws, "handbook")
        item = create_item(ws, project, Item(turns=[Turn(query="When?", answer=ANSWER)]))
    finally:
        ws.close()

    def invoke(*args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(make_app(), ["--home", str(home), "comments", *args])

    assert invoke("handbook", item.id).output.strip() == "No comments."
    added = invoke("handbook", item.id, "--add", "Which pier?", "--json")
    assert added.exit_code == 0, added.output
    first = json.loads(added.output)["comments"][0]
    assert (first["body"], first["target"], first["anchor"]) == ("Which pier?", "item", "ok")
    replied = invoke("handbook", item.id, "--add", "Pier 3", "--reply-to", str(first["id"]))
    assert replied.exit_code == 0, replied.output
    assert "↳" in replied.output and "Pier 3" in replied.output and "1 open" in replied.output
    resolved = invoke("handbook", item.id, "--resolve", str(first["id"]))
    assert "resolved by" in resolved.output and "0 open" in resolved.output
    bad = invoke("handbook", item.id, "--add", " ")
    assert bad.exit_code != 0 and "needs some text" in bad.output
    assert invoke("handbook", "nope").exit_code != 0
    lone = invoke("handbook", item.id, "--reply-to", "1")
    assert lone.exit_code != 0 and "--reply-to needs --add" in lone.output


def test_the_conversations_list_counts_open_threads(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p")
    item = create_item(
        any_ws, project, Item(kind="conversation", turns=[Turn(query="Hi?", answer="Hello.")])
    )
    client = _client(any_ws)
    url = f"/api/projects/p/items/{item.id}/comments"
    assert client.post(url, json={"body": "Greeting only", "target": "question", "start": 0,
                                  "end": 2}).status_code == 201  # fmt: skip
    listed = client.get("/api/projects/p/conversations").json()["items"]
    assert [row["open_comments"] for row in listed] == [1]
    assert 'class="num open-comments">1<' in client.get("/projects/p/conversations").text
