"""The items list, the item editor page and the items JSON API."""

from __future__ import annotations

import html
import json
import re
import time

import pytest
from fastapi.testclient import TestClient

from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item, get_item, parse_item
from assay.people.actors import account_for
from assay.records import Document, Item, Project, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app, items_view

PAYLOAD = "<img src=x onerror=alert(1)>"


@pytest.fixture
def doc(ws: Workspace, project: Project) -> Document:
    return ingest_bytes(
        ws, project, "ferry.md", b"# Ferry\n\nThe night ferry leaves at 22:40 from pier 3.\n"
    )


@pytest.fixture
def client(ws: Workspace) -> TestClient:
    client = TestClient(create_app(ws))
    client.get("/")  # the CSRF cookie
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def body(doc: Document, **turn: object) -> dict[str, object]:
    evidence = [{"doc_id": doc.id, "text": "22:40", "label": "relevant"}]
    return {"notes": "n", "turns": [{"query": "When?", "evidence": evidence, **turn}]}


def test_round_trip(client: TestClient, doc: Document) -> None:
    created = client.post("/api/projects/test/items", json=body(doc, answer="At 22:40."))
    assert created.status_code == 201
    item = created.json()["item"]
    assert item["version"] == 1 and item["status"] == "draft"
    assert created.json()["documents"] == {doc.id: "ferry.md"}
    assert created.json()["findings"] == []
    ev = item["turns"][0]["evidence"][0]
    assert (ev["start"], ev["end"], ev["group"], ev["anchor"]) == (35, 40, 1, "ok")

    url = f"/api/projects/test/items/{item['id']}"
    fetched = client.get(url).json()
    assert fetched["item"] == item
    assert [q["id"] for q in fetched["query_types"]][:2] == ["fact_single", "summary"]
    assert fetched["query_types"][0]["help"].startswith("The documents state")
    assert (
        client.get(url, headers={"Accept-Language": "de"}).json()["query_types"][0]["label"]
        == "Einzelfakt"
    )

    edited = fetched["input"]
    edited["turns"][0]["answer"] = "Twenty to eleven."
    saved = client.put(url, json={"version": 1, "item": edited})
    assert saved.status_code == 200
    assert saved.json()["item"]["version"] == 2
    assert [f["code"] for f in saved.json()["findings"]] == ["answer_unsupported"]

    submitted = client.post(url + "/status", json={"version": 2, "status": "submitted"})
    assert submitted.status_code == 200 and submitted.json()["item"]["status"] == "submitted"
    events = client.get(url + "/events").json()
    assert [e["action"] for e in events] == ["create", "save", "status"]

    assert client.delete(url).status_code == 204
    assert client.get(url).status_code == 404


def test_stale_save_gets_409_with_the_stored_item(client: TestClient, doc: Document) -> None:
    item = client.post("/api/projects/test/items", json=body(doc)).json()["item"]
    url = f"/api/projects/test/items/{item['id']}"
    assert (
        client.put(url, json={"version": 1, "item": body(doc, answer="first")}).status_code == 200
    )
    stale = client.put(url, json={"version": 1, "item": body(doc, answer="second")})
    assert stale.status_code == 409
    data = stale.json()
    assert "changed elsewhere" in data["detail"]
    assert data["current"]["version"] == 2
    assert data["current"]["turns"][0]["answer"] == "first"
    assert data["current_input"]["turns"][0]["answer"] == "first"
    # the stale status change gets the same answer
    assert client.post(url + "/status", json={"version": 1, "status": "draft"}).status_code == 409


def test_submit_lists_what_is_missing(client: TestClient, doc: Document) -> None:
    item = client.post("/api/projects/test/items", json={"turns": [{"query": ""}]}).json()["item"]
    refused = client.post(
        f"/api/projects/test/items/{item['id']}/status", json={"version": 1, "status": "submitted"}
    )
    assert refused.status_code == 422
    detail = refused.json()["detail"]
    for missing in ("the question is empty", "the answer is empty", "relevant passage"):
        assert missing in detail


def test_validation_errors_name_the_field(client: TestClient, doc: Document) -> None:
    wrong_type = client.post("/api/projects/test/items", json={"turns": [{"query": 3}]})
    assert wrong_type.status_code == 422 and "turns.0.query" in wrong_type.json()["detail"]
    no_doc = client.post(
        "/api/projects/test/items",
        json={"turns": [{"query": "q", "evidence": [{"doc_id": "nope", "text": "x"}]}]},
    )
    assert no_doc.status_code == 422 and "evidence 1" in no_doc.json()["detail"]
    item = client.post("/api/projects/test/items", json=body(doc)).json()["item"]
    no_version = client.put(f"/api/projects/test/items/{item['id']}", json={"item": body(doc)})
    assert no_version.status_code == 422 and "version" in no_version.json()["detail"]
    bad_status = client.post(
        f"/api/projects/test/items/{item['id']}/status", json={"version": 1, "status": "done"}
    )
    assert bad_status.status_code == 422 and "unknown status" in bad_status.json()["detail"]


def test_an_item_body_holds_only_what_an_editor_may_send(client: TestClient, doc: Document) -> None:
    """One record serves the store and the request body: the store's own fields (status,
    version, author, times, id) and unknown keys are refused, naming the field."""
    for key, value in [("status", "accepted"), ("version", 9), ("author", "mallory"), ("id", "x")]:
        refused = client.post("/api/projects/test/items", json={**body(doc), key: value})
        assert refused.status_code == 422, key
        assert f"field {key!r} is kept by the store" in refused.json()["detail"]
    typo = client.post("/api/projects/test/items", json={"turns": [{"querry": "q"}]})
    assert typo.status_code == 422 and "querry" in typo.json()["detail"]
    bad_label = client.post(
        "/api/projects/test/items",
        json={"turns": [{"query": "q", "evidence": [{"doc_id": doc.id, "label": "maybe"}]}]},
    )
    assert bad_label.status_code == 422 and "label" in bad_label.json()["detail"]
    empty = client.post("/api/projects/test/items", json={})
    assert empty.status_code == 201
    assert [t["query"] for t in empty.json()["item"]["turns"]] == [""]


def test_list_filters_sorting_and_pages(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    for n in range(120):
        create_item(
            ws,
            project,
            Item(
                turns=[
                    Turn(query=f"question {n:03}", query_type="summary" if n % 3 else "reasoning")
                ]
            ),
            author=account_for(ws, "ana" if n % 2 else "ben"),
            status="submitted" if n % 10 == 0 else "draft",
        )
    api = "/api/projects/test/items"
    assert client.get(api).json()["total"] == 120
    assert client.get(api, params={"status": "submitted"}).json()["total"] == 12
    assert client.get(api, params={"query_type": "reasoning"}).json()["total"] == 40
    assert (
        client.get(api, params={"author": "ana", "query_type": "reasoning"}).json()["total"] == 20
    )
    assert client.get(api, params={"text": "question 07"}).json()["total"] == 10
    page = client.get(api, params={"sort": "query", "offset": 100, "limit": 5}).json()
    assert [i["query"] for i in page["items"]] == [f"question {n}" for n in range(100, 105)]
    newest = client.get(api, params={"sort": "-created", "limit": 1}).json()["items"][0]
    assert newest["query"] == "question 119"
    assert client.get(api, params={"sort": "nonsense"}).status_code == 422

    first = client.get("/projects/test/items", params={"sort": "query"})
    assert first.status_code == 200 and "Page 1 of 3" in first.text
    assert first.text.count('<td class="q">') == 50
    third = client.get("/projects/test/items", params={"sort": "query", "page": 3})
    assert "Page 3 of 3" in third.text and third.text.count('<td class="q">') == 20
    assert "question 119" in third.text and "question 099" not in third.text
    drafts = client.get("/projects/test/items", params={"status": "draft", "author": "ben"})
    assert "(48)" in drafts.text and "Page 1 of 1" in drafts.text  # even n, not n % 10 == 0
    german = client.get("/projects/test/items", headers={"Accept-Language": "de"})
    assert "Seite 1 von 3" in german.text and "Neuer Eintrag" in german.text


def test_the_list_counts_no_further_than_it_shows(
    client: TestClient, ws: Workspace, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(items_view, "COUNT_AHEAD", 3)
    for n in range(5):
        create_item(ws, project, Item(turns=[Turn(query=f"q{n}")]))
    page = client.get("/projects/test/items").text
    assert "(3+)" in page and "Page 1 of more than 1" in page and "Last »" not in page
    assert page.count('<td class="q">') == 5
    api = "/api/projects/test/items"
    first = client.get(api, params={"limit": 2}).json()
    assert (first["total"], first["total_exact"], len(first["items"])) == (3, False, 2)
    exact = client.get(api, params={"limit": 2, "exact_total": "true"}).json()
    assert (exact["total"], exact["total_exact"]) == (5, True)
    later = client.get(api, params={"offset": 2}).json()  # counted to offset + 3: all of them
    assert (later["total"], later["total_exact"], len(later["items"])) == (5, True, 3)


def test_next_item_follows_the_list(client: TestClient, ws: Workspace, project: Project) -> None:
    ids = [create_item(ws, project, Item(turns=[Turn(query=f"q{n}")])).id for n in range(3)]
    listing = client.get("/projects/test/items", params={"sort": "created"}).text
    links = re.findall(r'<td class="q"><a href="([^"]+)"', listing)
    assert len(links) == 3 and ids[0] in links[0]
    editor = client.get(html.unescape(links[0])).text
    data = json.loads(
        html.unescape(re.search(r'id="editor-data">(.*?)</script>', editor, re.S).group(1))  # type: ignore[union-attr]
    )
    assert ids[1] in data["next_url"]
    last = client.get(html.unescape(links[2])).text
    assert "/projects/test/items/new" in last
    assert client.get(f"/projects/test/items/{ids[0]}").status_code == 200
    assert client.get("/projects/test/items/new").status_code == 200
    assert client.get("/projects/test/items/unknown").status_code == 404


def test_payloads_are_stored_verbatim_and_escaped(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    doc = ingest_bytes(ws, project, f"{PAYLOAD}.txt", f"Ferry {PAYLOAD} pier".encode())
    created = client.post(
        "/api/projects/test/items",
        json={
            "notes": PAYLOAD,
            "turns": [
                {
                    "query": PAYLOAD,
                    "answer": PAYLOAD,
                    "alternatives": [PAYLOAD],
                    "evidence": [{"doc_id": doc.id, "text": PAYLOAD, "label": "relevant"}],
                }
            ],
        },
    ).json()
    item_id = created["item"]["id"]
    stored = get_item(ws, project, item_id)
    assert stored.notes == PAYLOAD and stored.turns[0].query == PAYLOAD
    assert stored.turns[0].evidence[0].text == PAYLOAD
    listing = client.get("/projects/test/items")
    assert PAYLOAD not in listing.text and html.escape(PAYLOAD, quote=False) in listing.text
    editor = client.get(f"/projects/test/items/{item_id}")
    assert PAYLOAD not in editor.text  # the JSON blob escapes < and > as well
    assert "\\u003cimg" in editor.text


def test_state_changes_need_the_csrf_token(ws: Workspace, doc: Document) -> None:
    bare = TestClient(create_app(ws))
    refused = bare.post("/api/projects/test/items", json=body(doc))
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    bare.get("/projects/test/items")  # a page sets the token cookie
    token = bare.cookies["assay_csrf"]
    ok = bare.post("/api/projects/test/items", json=body(doc), headers={"X-CSRF-Token": token})
    assert ok.status_code == 201
    url = f"/api/projects/test/items/{ok.json()['item']['id']}"
    assert bare.put(url, json={"version": 1, "item": body(doc)}).status_code == 403
    assert bare.delete(url).status_code == 403
    assert bare.get(url).status_code == 200


def test_items_are_in_the_openapi_schema(client: TestClient) -> None:
    paths = client.get("/api/openapi.json").json()["paths"]
    for path in (
        "/api/projects/{name}/items",
        "/api/projects/{name}/items/{item_id}",
        "/api/projects/{name}/items/{item_id}/status",
        "/api/projects/{name}/items/{item_id}/events",
    ):
        assert path in paths
        assert all("items" in op["tags"] for op in paths[path].values())


def test_replaced_document_puts_items_in_needs_review_on_page_api_and_export(
    any_ws: Workspace,
) -> None:
    """Replace a cited document through the web: the item is flagged in the list (page and
    JSON), left out of the export with its passage named, and a strict export is refused."""
    project = create_project(any_ws, "test", "en")
    text = b"# Ferry\n\nThe night ferry leaves at 22:40 from pier 3.\n"
    doc = ingest_bytes(any_ws, project, "ferry.md", text)
    cited = create_item(any_ws, project, parse_item(body(doc), "test item"), status="accepted")
    calm = create_item(any_ws, project, parse_item(body(doc, query="Pier?"), "test item"))
    client = TestClient(create_app(any_ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    replaced = client.post(
        f"/api/projects/test/documents/{doc.id}/replace",
        files={"file": ("ferry.md", text.replace(b"22:40", b"23:10"))},
    )
    assert replaced.status_code == 200 and replaced.json()["stale_evidence"] == 2

    listed = client.get("/api/projects/test/items", params={"needs_review": "true"}).json()
    assert listed["total"] == 2 and all(row["needs_review"] for row in listed["items"])
    page = client.get("/projects/test/items", params={"review": "needed", "status": "accepted"})
    assert page.status_code == 200
    assert f"/items/{cited.id}" in page.text and f"/items/{calm.id}" not in page.text
    assert 'class="badge warn needs-review"' in page.text
    assert '<option value="needed" selected>' in page.text
    german = client.get(
        "/projects/test/items", params={"review": "needed"}, headers={"Accept-Language": "de"}
    )
    assert "muss geprüft werden" in german.text

    exports = "/api/projects/test/transfer/exports"
    strict = client.post(exports, json={"format": "csv", "statuses": ["all"], "strict": True})
    assert strict.status_code == 422
    assert cited.id in strict.json()["detail"] and calm.id in strict.json()["detail"]
    nothing = client.post(exports, json={"format": "csv"})
    assert nothing.status_code == 422 and "1 needing review" in nothing.json()["detail"]
    job = client.post(exports, json={"format": "csv", "allow_empty": True}).json()
    url = job["events"].removesuffix("/events")
    for _ in range(1200):  # a bound only against a hung thread
        if (done := client.get(url).json())["state"] != "running":
            break
        time.sleep(0.05)
    assert done["state"] == "done" and done["result"]["items"] == 0
    assert done["result"]["needs_review_count"] == 1
    (entry,) = done["result"]["needs_review"]
    assert entry["id"] == cited.id
    assert [(p["turn"], p["passage"], p["reason"]) for p in entry["problems"]] == [(1, 1, "stale")]
