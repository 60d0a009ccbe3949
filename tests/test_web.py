"""The minimal web pages and their JSON twins (the workbench grows in later issues)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from assay.corpus.ingest import ingest_bytes
from assay.records import Project
from assay.store.workspace import Workspace
from assay.web import create_app

PAYLOAD = "<img src=x onerror=alert(1)>"


def test_pages_and_json_twins(ws: Workspace, project: Project) -> None:
    doc = ingest_bytes(
        ws, project, f"{PAYLOAD}.txt", f"Ferry timetable {PAYLOAD} changes.".encode()
    )
    client = TestClient(create_app(ws))

    assert client.get("/api/projects").json() == [
        {"name": "test", "language": "en", "importing_since": None, "documents": 1, "items": 0}
    ]
    home = client.get("/")
    assert home.status_code == 200 and "/projects/test" in home.text

    page = client.get("/projects/test/documents", params={"search": "ferry"})
    assert page.status_code == 200
    assert PAYLOAD not in page.text  # escaped everywhere
    assert "&lt;img src=x onerror=alert(1)&gt;" in page.text
    assert "<mark>Ferry</mark>" in page.text

    hits = client.get("/api/projects/test/search", params={"q": "ferry timetable"}).json()
    assert hits[0]["doc_id"] == doc.id and hits[0]["rank"] == 1

    listed = client.get("/api/projects/test/documents").json()
    assert listed["total"] == 1 and listed["documents"][0]["name"] == f"{PAYLOAD}.txt"

    view = client.get(f"/projects/test/documents/{doc.id}")
    assert view.status_code == 200 and PAYLOAD not in view.text
    original = client.get(f"/projects/test/documents/{doc.id}/original")
    assert original.content == f"Ferry timetable {PAYLOAD} changes.".encode()
    assert "attachment" in original.headers["content-disposition"]


def test_errors_are_pages_or_json(ws: Workspace) -> None:
    client = TestClient(create_app(ws))
    missing = client.get("/api/projects/nope/documents")
    assert missing.status_code == 404
    assert "no project named 'nope'" in missing.json()["detail"]
    page = client.get("/projects/nope")
    assert page.status_code == 404 and "no project named" in page.text
