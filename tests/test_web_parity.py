"""The JSON API offers what the CLI and the library do: chunkings (list, create), synthesis,
and the export of chosen items."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from assay.corpus.chunkings import list_chunkings
from assay.corpus.ingest import ingest_bytes
from assay.formats import get_format
from assay.gold.items import create_item
from assay.records import Item, Project, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.test_web_transfer import wait

TEXT = (
    b"# Ferry\n\nThe night ferry leaves at 22:40 from pier 3. Tickets are sold on board.\n\n"
    b"In winter the ferry runs only on weekends, and the last boat leaves at 21:15.\n"
)


@pytest.fixture
def client(any_ws: Workspace, project: Project) -> TestClient:
    ingest_bytes(any_ws, project, "ferry.md", TEXT)
    client = TestClient(create_app(any_ws))
    client.get("/")  # the CSRF cookie
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


@pytest.fixture
def project(any_ws: Workspace) -> Project:
    return create_project(any_ws, "test", "en")


@pytest.fixture
def draft(any_ws: Workspace, project: Project) -> Item:
    return create_item(any_ws, project, Item(turns=[Turn(query="When does it leave?")]))


def test_chunkings_are_listed_and_created(
    client: TestClient, any_ws: Workspace, project: Project
) -> None:
    listed = client.get("/api/projects/test/chunkings").json()
    assert [(c["name"], c["default"]) for c in listed] == [("default", True)]
    assert listed[0]["chunks"] >= 1

    made = client.post(
        "/api/projects/test/chunkings",
        json={"name": "sentences", "method": "sentences", "params": {}, "default": True},
    )
    assert made.status_code == 201, made.text
    assert made.json()["chunks"] >= 2 and made.json()["default"] is True
    assert {c.name: c.is_default for c in list_chunkings(any_ws, project)} == {
        "default": False,
        "sentences": True,
    }
    # the new chunking is searchable at once
    hits = client.get("/api/projects/test/search", params={"q": "winter", "chunking": "sentences"})
    assert hits.status_code == 200 and hits.json()


def test_a_bad_chunker_is_refused_and_nothing_is_made(client: TestClient) -> None:
    refused = client.post(
        "/api/projects/test/chunkings", json={"name": "x", "method": "paragraphs"}
    )
    assert refused.status_code == 422
    assert "paragraphs" in refused.json()["detail"]
    assert [c["name"] for c in client.get("/api/projects/test/chunkings").json()] == ["default"]


def test_synthesis_drafts_items_for_review(client: TestClient) -> None:
    report = client.post("/api/projects/test/synthesize", json={"n": 2, "types": ["fact_single"]})
    assert report.status_code == 200, report.text
    created = report.json()["created"]
    assert report.json()["per_type"]["fact_single"]["created"] == len(created) >= 1
    listed = client.get("/api/projects/test/items", params={"status": "draft"}).json()
    assert {row["id"] for row in listed["items"]} == set(created)
    assert {row["origin"] for row in listed["items"]} != {"human"}

    unknown = client.post("/api/projects/test/synthesize", json={"types": ["no_such_type"]})
    assert unknown.status_code == 422
    assert "no_such_type" in unknown.json()["detail"]


def test_export_of_chosen_items_holds_only_them(
    client: TestClient, draft: Item, tmp_path: Path
) -> None:
    started = client.post(
        "/api/projects/test/transfer/exports", json={"format": "native", "items": [draft.id]}
    )
    assert started.status_code == 202, started.text
    done = wait(client, started.json())
    assert done["state"] == "done" and done["result"]["items"] == 1
    path = tmp_path / "one.zip"
    path.write_bytes(client.get(done["download"]).content)
    items = list(get_format("native").read(path).items)
    assert [(i.id, i.status) for i in items] == [(draft.id, "draft")]


def test_export_of_an_unknown_item_is_refused(client: TestClient, draft: Item) -> None:
    refused = client.post(
        "/api/projects/test/transfer/exports",
        json={"format": "native", "items": [draft.id, "no-such-item"]},
    )
    assert refused.status_code == 404
    assert "no-such-item" in refused.json()["detail"]
