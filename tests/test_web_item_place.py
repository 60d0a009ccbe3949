"""The editor's place in its list (Previous, Next, "N of M") and who sees its Delete button,
on SQLite and PostgreSQL."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.gold.items import create_item
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Item, Project, Turn
from assay.review.assignments import ItemFilter, assign
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app, items_view

PASSWORD = "correct horse battery"


def client_for(ws: Workspace) -> TestClient:
    client = TestClient(create_app(ws), follow_redirects=False)
    client.get("/api/session")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def editor_data(client: TestClient, url: str) -> dict[str, Any]:
    page = client.get(url)
    assert page.status_code == 200, page.text
    found = re.search(r'id="editor-data">(.*?)</script>', page.text, re.S)
    assert found is not None
    return json.loads(html.unescape(found.group(1)))  # type: ignore[no-any-return]


def links(client: TestClient, query: str) -> list[str]:
    listing = client.get("/projects/test/items?" + query).text
    return [html.unescape(u) for u in re.findall(r'<td class="q"><a href="([^"]+)"', listing)]


@pytest.fixture
def listed(any_ws: Workspace) -> tuple[Workspace, Project, list[str]]:
    project = create_project(any_ws, "test", "en")
    ids = [create_item(any_ws, project, Item(turns=[Turn(query=f"q{n}")])).id for n in range(4)]
    return any_ws, project, ids


def test_previous_next_and_count_follow_the_list(
    listed: tuple[Workspace, Project, list[str]],
) -> None:
    ws, _, ids = listed
    client = client_for(ws)
    urls = links(client, "sort=created")
    assert [ids[n] in urls[n] for n in range(4)] == [True] * 4

    first = editor_data(client, urls[0])["place"]
    assert first["prev_url"] is None and ids[1] in first["next_url"]
    assert (first["number"], first["total"], first["exact"]) == (1, 4, True)

    second = editor_data(client, first["next_url"])["place"]
    assert ids[0] in second["prev_url"] and ids[2] in second["next_url"]
    assert second["number"] == 2
    # the previous link leads back to the first item at its place
    back = editor_data(client, second["prev_url"])["place"]
    assert back["number"] == 1 and ids[1] in back["next_url"]

    last = editor_data(client, urls[3])["place"]
    assert ids[2] in last["prev_url"] and last["next_url"] is None

    # descending order (the default list): the neighbours swap
    newest = links(client, "")
    assert ids[3] in newest[0]
    top = editor_data(client, newest[0])["place"]
    assert top["prev_url"] is None and ids[2] in top["next_url"]

    # opened without a list: no place, Submit and new only
    alone = editor_data(client, f"/projects/test/items/{ids[0]}")
    assert alone["place"] is None and alone["new_url"] == "/projects/test/items/new"
    page = client.get(f"/projects/test/items/{ids[0]}").text
    assert 'id="submit-new"' in page and 'id="submit-next"' not in page
    listed_page = client.get(urls[0]).text
    assert 'id="submit-next"' in listed_page and "1 of 4" in listed_page


def test_the_count_is_bounded_like_the_list(
    listed: tuple[Workspace, Project, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, _, _ = listed
    monkeypatch.setattr(items_view, "COUNT_AHEAD", 2)
    client = client_for(ws)
    url = links(client, "sort=created")[0]
    place = editor_data(client, url)["place"]
    assert (place["total"], place["exact"]) == (2, False)
    assert "1 of 2+" in client.get(url).text


def test_only_those_who_may_delete_see_the_button(any_ws: Workspace) -> None:
    project = create_project(any_ws, "test", "en")
    create_account(any_ws, "root", PASSWORD, admin=True)
    ann = create_account(any_ws, "ann", PASSWORD)
    rev = create_account(any_ws, "rev", PASSWORD)
    set_role(any_ws, project.id, ann.id, "annotator")
    set_role(any_ws, project.id, rev.id, "reviewer")
    item = create_item(any_ws, project, Item(turns=[Turn(query="mine")]), author=ann.id)
    set_team_mode(any_ws, True)
    url = f"/projects/test/items/{item.id}"

    annotator = client_for(any_ws)
    signed = annotator.post("/api/session", json={"username": "ann", "password": PASSWORD})
    assert signed.status_code == 200
    assert editor_data(annotator, url)["may_delete"] is True
    assert 'id="delete-button"' in annotator.get(url).text
    assert editor_data(annotator, "/projects/test/items/new")["may_delete"] is True

    reviewer = client_for(any_ws)
    signed = reviewer.post("/api/session", json={"username": "rev", "password": PASSWORD})
    assert signed.status_code == 200
    assert editor_data(reviewer, url)["may_delete"] is False
    assert 'id="delete-button"' not in reviewer.get(url).text
    # and the access layer refuses the request itself, whatever the page shows
    assert reviewer.delete(f"/api/projects/test/items/{item.id}").status_code == 403
    assert annotator.delete(f"/api/projects/test/items/{item.id}").status_code == 204


def test_an_annotators_own_list_walks_written_and_assigned_items(any_ws: Workspace) -> None:
    """Her list is read in two parts (what she wrote, what she was assigned), merged in the
    list's order: Previous and Next walk both, the last one's Next is a new item."""
    project = create_project(any_ws, "test", "en")
    root = create_account(any_ws, "root", PASSWORD, admin=True)
    ann = create_account(any_ws, "ann", PASSWORD)
    set_role(any_ws, project.id, ann.id, "annotator")
    # created in turn: hers, the lead's (assigned to her), hers, the lead's (not hers)
    authors = [ann.id, root.id, ann.id, root.id]
    ids = [
        create_item(any_ws, project, Item(turns=[Turn(query=f"q{n}")]), author=a).id
        for n, a in enumerate(authors)
    ]
    assign(any_ws, project, ItemFilter(ids=[ids[1]]), ["ann"], assigned_by=root.id)
    set_team_mode(any_ws, True)
    client = client_for(any_ws)
    signed = client.post("/api/session", json={"username": "ann", "password": PASSWORD})
    assert signed.status_code == 200

    urls = links(client, "sort=created")
    assert [any(i in u for i in ids) for u in urls] == [True] * 3
    assert [ids[n] in urls[m] for m, n in enumerate((0, 1, 2))] == [True] * 3

    first = editor_data(client, urls[0])
    assert first["place"]["prev_url"] is None and ids[1] in first["place"]["next_url"]
    assert (first["place"]["number"], first["place"]["total"]) == (1, 3)
    assert first["next_url"] == first["place"]["next_url"]  # "save and next" goes there too

    middle = editor_data(client, first["place"]["next_url"])
    assert ids[0] in middle["place"]["prev_url"] and ids[2] in middle["place"]["next_url"]
    assert middle["place"]["number"] == 2

    last = editor_data(client, middle["place"]["next_url"])
    assert ids[1] in last["place"]["prev_url"] and last["place"]["next_url"] is None
    assert last["next_url"] == last["new_url"] == "/projects/test/items/new"

    newest = editor_data(client, links(client, "")[0])  # newest first: the neighbours swap
    assert ids[2] in links(client, "")[0] and newest["place"]["prev_url"] is None
    assert ids[1] in newest["place"]["next_url"]
