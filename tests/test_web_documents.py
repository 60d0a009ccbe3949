"""Documents, project settings and the guide through the web API (TestClient, real workspace)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.corpus.documents import count_documents, get_document, list_documents
from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item
from assay.gold.taxonomy import DEFAULT_QUERY_TYPES
from assay.records import Evidence, Item, Project, Turn
from assay.store.projects import get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.web import create_app
from assay.web.routes.guide import render_markdown

PAYLOAD = "<img src=x onerror=window.__xss=1>"
DATA = Path(__file__).parent / "data" / "parsing"


def client_for(ws: Workspace) -> TestClient:
    client = TestClient(create_app(ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def upload(client: TestClient, name: str, data: bytes, project: str = "test") -> Any:
    return client.post(f"/api/projects/{project}/documents", files={"file": (name, data)})


@pytest.fixture
def client(ws: Workspace, project: Project) -> TestClient:
    return client_for(ws)


def test_upload_adds_a_document_and_search_sees_it(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    response = client.post(
        "/api/projects/test/documents",
        files={"file": ("ferries.md", b"# Ferries\n\nThe night ferry leaves at 22:40.\n")},
        data={"last_modified": "2026-01-02T03:04:05Z"},
    )
    assert response.status_code == 201
    document = response.json()["document"]
    assert document["name"] == "ferries.md" and document["media_type"] == "text/markdown"
    stored = get_document(ws, project, document["id"])
    assert stored.metadata["last_modified"] == "2026-01-02T03:04:05Z"
    hits = client.get("/api/projects/test/search", params={"q": "night ferry"}).json()
    assert hits[0]["doc_id"] == document["id"]

    pdf = upload(client, "sample.pdf", (DATA / "sample.pdf").read_bytes())
    assert pdf.status_code == 201
    assert pdf.json()["document"]["media_type"] == "application/pdf"


def test_upload_records_the_author_from_the_cookie(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    client.cookies["assay_author"] = "J%C3%BCrgen%20M."
    response = client.post("/api/projects/test/documents", files={"file": ("a.txt", b"alpha")})
    assert response.json()["document"]["author"] == "Jürgen M."


def test_duplicate_upload_names_the_existing_document(client: TestClient, ws: Workspace) -> None:
    first = upload(client, "a.txt", b"same bytes")
    second = upload(client, "b.txt", b"same bytes")
    assert first.status_code == 201
    assert second.status_code == 200
    body = second.json()
    assert body["duplicate_of"]["name"] == "a.txt"
    assert "b.txt" in body["detail"] and "a.txt" in body["detail"]


def test_too_large_upload_is_refused_while_reading_and_nothing_is_stored(tmp_path: Path) -> None:
    with Workspace.open(Settings(home=tmp_path / "ws", max_file_mb=0.01)) as ws:
        from assay.store.projects import create_project

        project = create_project(ws, "test")
        client = client_for(ws)
        big = b"a" * 20_000  # 10,485 bytes is the limit
        response = upload(client, "big.txt", big)
        assert response.status_code == 413
        detail = response.json()["detail"]
        assert "big.txt" in detail and "0.01 MB" in detail
        assert count_documents(ws, project) == 0
        assert not any((tmp_path / "ws" / "blobs").rglob("*.*"))
        # A lying Content-Length does not help: the bytes received count.
        body = (
            b'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="liar.txt"\r\n'
            b"Content-Type: text/plain\r\n\r\n" + big + b"\r\n--XyZ--\r\n"
        )
        lying = client.post(
            "/api/projects/test/documents",
            content=body,
            headers={"Content-Type": "multipart/form-data; boundary=XyZ", "Content-Length": "10"},
        )
        assert lying.status_code == 413 and "liar.txt" in lying.json()["detail"]
        streamed = client.post(  # chunked transfer: no Content-Length at all
            "/api/projects/test/documents",
            content=iter([body[:5000], body[5000:]]),
            headers={"Content-Type": "multipart/form-data; boundary=XyZ"},
        )
        assert streamed.request.headers.get("content-length") is None
        assert streamed.status_code == 413
        assert count_documents(ws, project) == 0
        just_fits = upload(client, "fits.txt", b"b" * ws.settings.max_file_bytes)
        assert just_fits.status_code == 201


def test_invalid_files_get_422_naming_the_file(client: TestClient, project: Project) -> None:
    bad_text = upload(client, "latin.txt", "Grüße aus Köln".encode("cp1252"))
    assert bad_text.status_code == 422
    assert "latin.txt" in bad_text.json()["detail"]
    bad_pdf = upload(client, "broken.pdf", b"%PDF-1.4 this is not really a pdf")
    assert bad_pdf.status_code == 422
    assert "broken.pdf" in bad_pdf.json()["detail"]
    nothing = client.post("/api/projects/test/documents", data={"other": "x"})
    assert nothing.status_code == 422 and "file" in nothing.json()["detail"]
    two = client.post(
        "/api/projects/test/documents",
        files=[("file", ("a.txt", b"one")), ("file", ("b.txt", b"two"))],
    )
    assert two.status_code == 422 and "one file" in two.json()["detail"]


def test_upload_without_the_csrf_token_is_refused(ws: Workspace, project: Project) -> None:
    client = TestClient(create_app(ws))
    client.get("/")
    refused = client.post("/api/projects/test/documents", files={"file": ("a.txt", b"alpha")})
    assert refused.status_code == 403
    assert count_documents(ws, project) == 0


def test_rename_notes_and_their_errors(client: TestClient, ws: Workspace, project: Project) -> None:
    a = ingest_bytes(ws, project, "a.txt", b"alpha")
    ingest_bytes(ws, project, "b.txt", b"beta")
    renamed = client.patch(
        f"/api/projects/test/documents/{a.id}", json={"name": f"{PAYLOAD}.txt", "notes": PAYLOAD}
    )
    assert renamed.status_code == 200
    assert renamed.json()["name"] == f"{PAYLOAD}.txt" and renamed.json()["notes"] == PAYLOAD
    page = client.get(f"/projects/test/documents/{a.id}").text
    assert PAYLOAD not in page and "&lt;img src=x onerror=window.__xss=1&gt;" in page
    listing = client.get("/projects/test/documents").text
    assert PAYLOAD not in listing
    clash = client.patch(f"/api/projects/test/documents/{a.id}", json={"name": "b.txt"})
    assert clash.status_code == 409 and "b.txt" in clash.json()["detail"]
    empty = client.patch(f"/api/projects/test/documents/{a.id}", json={"name": "  "})
    assert empty.status_code == 422
    unknown = client.patch(f"/api/projects/test/documents/{a.id}", json={"title": "x"})
    assert unknown.status_code == 422


def test_replace_reports_stale_evidence_and_search_follows(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    text = "The ferry leaves at 22:40. Tickets cost 12 euros."
    doc = ingest_bytes(ws, project, "ferry.txt", text.encode())
    start = text.index("22:40")
    create_item(
        ws,
        project,
        Item(
            turns=[
                Turn(
                    query="When does the ferry leave?",
                    answer="At 22:40.",
                    evidence=[Evidence(doc_id=doc.id, start=start, end=start + 5)],
                )
            ]
        ),
    )
    response = client.post(
        f"/api/projects/test/documents/{doc.id}/replace",
        files={"file": ("ferry-v2.txt", b"The boat departs at 23:10. Tickets cost 12 euros.")},
    )
    assert response.status_code == 200
    body = response.json()
    assert body["stale_evidence"] == 1 and "1 evidence passage(s)" in body["detail"]
    assert body["document"]["name"] == "ferry.txt"  # the name stays
    assert "boat" in get_document(ws, project, doc.id).text
    hits = client.get("/api/projects/test/search", params={"q": "boat departs"}).json()
    assert hits and hits[0]["doc_id"] == doc.id


def test_delete_is_blocked_while_evidence_points_at_the_document(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    cited = ingest_bytes(ws, project, "cited.txt", b"The museum opens at nine.")
    free = ingest_bytes(ws, project, "free.txt", b"Nothing cites this text.")
    create_item(
        ws,
        project,
        Item(
            turns=[
                Turn(
                    query="When does the museum open?",
                    answer="At nine.",
                    evidence=[Evidence(doc_id=cited.id, start=0, end=10)],
                )
            ]
        ),
    )
    blocked = client.delete(f"/api/projects/test/documents/{cited.id}")
    assert blocked.status_code == 409
    assert "When does the museum open?" in blocked.json()["detail"]
    assert get_document(ws, project, cited.id)
    deleted = client.delete(f"/api/projects/test/documents/{free.id}")
    assert deleted.status_code == 204
    assert [d.name for d in list_documents(ws, project)] == ["cited.txt"]
    assert client.get("/api/projects/test/search", params={"q": "cites"}).json() == []
    assert client.delete(f"/api/projects/test/documents/{free.id}").status_code == 404


def test_chunks_api_and_the_document_view(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    text = ("Sentence number one is here. " * 60).strip()
    doc = ingest_bytes(ws, project, "long.txt", text.encode())
    chunks = client.get(f"/api/projects/test/documents/{doc.id}/chunks").json()
    assert chunks["chunking"] == "default" and len(chunks["chunks"]) > 1
    for chunk in chunks["chunks"]:
        assert chunk["text"] == text[chunk["start"] : chunk["end"]]
    named = client.get(f"/api/projects/test/documents/{doc.id}/chunks?chunking=default").json()
    assert named == chunks
    missing = client.get(f"/api/projects/test/documents/{doc.id}/chunks?chunking=nope")
    assert missing.status_code == 404 and "default" in missing.json()["detail"]

    page = client.get(f"/projects/test/documents/{doc.id}", params={"chunking": "default"}).text
    assert page.count('class="chunk ') == len(chunks["chunks"])
    first = chunks["chunks"][0]
    assert f'data-chunk-id="{first["chunk_id"]}"' in page and f'id="c{first["start"]}"' in page


def test_documents_list_is_paginated_and_filtered(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    for number in range(120):
        ingest_bytes(ws, project, f"doc-{number:03}.txt", f"text {number}".encode())
    first = client.get("/projects/test/documents").text
    assert "doc-000.txt" in first and "doc-049.txt" in first and "doc-050.txt" not in first
    assert "Page 1 of 3" in first
    last = client.get("/projects/test/documents", params={"page": 3}).text
    assert "doc-100.txt" in last and "doc-119.txt" in last and "doc-099.txt" not in last
    filtered = client.get("/projects/test/documents", params={"q": "doc-11"}).text
    assert filtered.count('class="doc-name"') == 10
    api = client.get("/api/projects/test/documents", params={"offset": 10, "q": "doc-1"}).json()
    assert api["total"] == 120 and api["matching"] == 20
    assert [d["name"] for d in api["documents"]][:2] == ["doc-110.txt", "doc-111.txt"]
    beyond = client.get("/projects/test/documents", params={"page": 99}).text
    assert "Page 3 of 3" in beyond


def test_query_type_settings_are_validated_and_saved(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    overview = client.get("/api/projects/test").json()
    assert [q["id"] for q in overview["query_types"]] == [q.id for q in DEFAULT_QUERY_TYPES]
    assert overview["custom_query_types"] is False
    url = "/api/projects/test/settings"
    duplicate = client.put(url, json={"query_types": [{"id": "a"}, {"id": "a"}]})
    assert duplicate.status_code == 422 and "unique" in duplicate.json()["detail"]
    empty = client.put(url, json={"query_types": []})
    assert empty.status_code == 422 and "at least one" in empty.json()["detail"]
    blank = client.put(url, json={"query_types": [{"id": "  "}]})
    assert blank.status_code == 422
    no_id = client.put(url, json={"query_types": [{"label": {"en": "x"}}]})
    assert no_id.status_code == 422 and "id" in no_id.json()["detail"]
    assert get_project(ws, "test").settings == {}  # nothing half-saved

    saved = client.put(
        url,
        json={
            "query_types": [
                {"id": " lookup ", "label": {"en": "Lookup", "de": "Nachschlagen"}, "help": {}},
                {"id": "compare", "label": {"en": "Compare", "de": ""}, "help": {"en": "Two"}},
            ]
        },
    )
    assert saved.status_code == 200
    types = saved.json()["query_types"]
    assert [q["id"] for q in types] == ["lookup", "compare"]
    assert types[1]["label"] == {"en": "Compare"}  # the blank German label is dropped
    assert saved.json()["custom_query_types"] is True
    home = client.get("/projects/test").text
    assert "Nachschlagen" in home
    reset = client.put(url, json={"query_types": None})
    assert reset.json()["custom_query_types"] is False
    assert "query_types" not in get_project(ws, "test").settings


def test_guide_in_both_languages_with_and_without_contact(tmp_path: Path) -> None:
    with Workspace.open(Settings(home=tmp_path / "a")) as ws:
        client = TestClient(create_app(ws))
        english = client.get("/guide", headers={"Accept-Language": "en"}).text
        assert '<html lang="en">' in english and "Guide for annotators" in english
        for query_type in DEFAULT_QUERY_TYPES:
            label, help_text = query_type.text("en")
            assert label in english and help_text in english
        assert "any one of them suffices" in english and "<code>Ctrl+Enter</code>" in english
        assert 'class="panel contact"' not in english
        german = client.get("/guide", headers={"Accept-Language": "de"}).text
        assert '<html lang="de">' in german and "Anleitung für Annotierende" in german
        assert "Einzelfakt" in german and "Tastenkürzel" in german
        assert client.get("/api/guide").json()["contact_info"] == ""
    contact = f"Questions to lead@example.org {PAYLOAD}"
    with Workspace.open(Settings(home=tmp_path / "b", contact_info=contact)) as ws:
        client = TestClient(create_app(ws))
        for language in ("en", "de"):
            page = client.get("/guide", headers={"Accept-Language": language}).text
            assert 'class="panel contact"' in page and "lead@example.org" in page
            assert PAYLOAD not in page
        assert client.get("/api/guide").json()["contact_info"] == contact


def test_markdown_renderer_escapes_everything() -> None:
    html = str(
        render_markdown(
            "# Title <b>\n\nSome **bold** and `<code>` and <script>x</script>.\n\n"
            "- one\n  continued\n- two **<i>**\n\n1. first\n2. second\n\nA `dangling tick"
        )
    )
    assert "<script>" not in html and "<b>" not in html and "<i>" not in html
    assert '<h2 id="title-b">Title &lt;b&gt;</h2>' in html
    assert "<strong>bold</strong>" in html and "<code>&lt;code&gt;</code>" in html
    assert "<li>one continued</li>" in html and "<strong>&lt;i&gt;</strong>" in html
    assert "<ol>\n<li>first</li>" in html and "A `dangling tick" in html


def test_projects_page_shows_counts_and_project_creation(client: TestClient, ws: Workspace) -> None:
    ingest_bytes(ws, get_project(ws, "test"), "a.txt", b"alpha")
    assert client.get("/api/projects").json() == [
        {"name": "test", "language": "en", "importing_since": None, "documents": 1, "items": 0}
    ]
    created = client.post("/api/projects", json={"name": PAYLOAD, "language": "de"})
    assert created.status_code == 201
    page = client.get("/").text
    assert PAYLOAD not in page and "1 documents · 0 items" in page
