"""Files without extractable text are refused (or kept with a warning when the project says
so) by the JSON API, the CLI and the Python ingest; the documents list counts chunks and the
items citing each document, and names those items before a delete. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from assay.cli import make_app
from assay.corpus.documents import count_documents, get_document, list_documents
from assay.corpus.ingest import KEEP_TEXTLESS, ingest_bytes, ingest_paths
from assay.errors import InvalidInput
from assay.gold.items import create_item
from assay.gold.project_config import update_settings
from assay.records import Evidence, Item, Turn
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from assay.web import create_app

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


def client_for(ws: Workspace) -> TestClient:
    client = TestClient(create_app(ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def test_upload_without_text_is_refused_then_kept_when_the_project_allows(
    any_ws: Workspace,
) -> None:
    create_project(any_ws, "docs")
    client = client_for(any_ws)
    refused = client.post("/api/projects/docs/documents", files={"file": ("photo.png", PNG)})
    assert refused.status_code == 422
    body = refused.json()
    assert body["reason"] == "no_text"
    assert body["detail"].startswith("photo.png: no text could be extracted")
    assert "not added" in body["detail"]
    assert count_documents(any_ws, get_project(any_ws, "docs")) == 0
    # an ordinary file next to it is still added
    fine = client.post("/api/projects/docs/documents", files={"file": ("a.txt", b"Some words.")})
    assert fine.status_code == 201
    assert fine.json()["document"]["without_text"] is False

    settings = client.put("/api/projects/docs/settings", json={KEEP_TEXTLESS: True})
    assert settings.status_code == 200, settings.text
    assert get_project(any_ws, "docs").settings[KEEP_TEXTLESS] is True
    kept = client.post("/api/projects/docs/documents", files={"file": ("photo.png", PNG)})
    assert kept.status_code == 201
    document = kept.json()["document"]
    assert document["without_text"] is True and document["chars"] == 0
    assert any("no text extracted" in w for w in document["warnings"])
    assert count_documents(any_ws, get_project(any_ws, "docs")) == 2


def test_replacing_with_a_file_without_text_is_refused(any_ws: Workspace) -> None:
    project = create_project(any_ws, "docs")
    doc = ingest_bytes(any_ws, project, "a.txt", b"The ferry leaves at ten.")
    client = client_for(any_ws)
    response = client.post(
        f"/api/projects/docs/documents/{doc.id}/replace", files={"file": ("scan.png", PNG)}
    )
    assert response.status_code == 422
    assert "scan.png: no text could be extracted" in response.json()["detail"]
    assert get_document(any_ws, project, doc.id).text == "The ferry leaves at ten."


def test_setting_is_checked(any_ws: Workspace) -> None:
    project = create_project(any_ws, "docs")
    client = client_for(any_ws)
    bad = client.put("/api/projects/docs/settings", json={KEEP_TEXTLESS: "yes"})
    assert bad.status_code == 422
    with pytest.raises(InvalidInput, match=KEEP_TEXTLESS):
        update_settings(any_ws, project, {KEEP_TEXTLESS: "yes"})


def test_python_ingest_follows_the_setting_and_imports_keep_everything(
    any_ws: Workspace, tmp_path: Path
) -> None:
    project = create_project(any_ws, "docs")
    (tmp_path / "photo.png").write_bytes(PNG)
    report = ingest_paths(any_ws, project, [tmp_path / "photo.png"])
    assert [o.status for o in report.outcomes] == ["error"]
    assert report.outcomes[0].reason == "no_text"
    # ingest_bytes (imports, scripts) keeps the file, flagged by its warning
    kept = ingest_bytes(any_ws, project, "photo.png", PNG)
    assert kept.text == "" and kept.parse_info.warnings


def test_documents_list_counts_chunks_and_citing_items(any_ws: Workspace) -> None:
    project = create_project(any_ws, "docs")
    text = " ".join(f"Sentence {n} is about ferry {n}." for n in range(300))
    long = ingest_bytes(any_ws, project, "long.txt", text.encode())
    short = ingest_bytes(any_ws, project, "short.txt", b"The museum opens at nine.")
    unused = ingest_bytes(any_ws, project, "unused.txt", b"Nobody cites this.")
    passage = Evidence(doc_id=long.id, start=0, end=8)
    create_item(any_ws, project, Item(turns=[Turn(query="q1", evidence=[passage, passage])]))
    both = [Evidence(doc_id=long.id, start=9, end=20), Evidence(doc_id=short.id, start=0, end=10)]
    create_item(any_ws, project, Item(turns=[Turn(query="q2", evidence=both)]))
    conversation = Item(
        kind="conversation",
        turns=[
            Turn(query="first", evidence=[Evidence(doc_id=short.id, start=4, end=10)]),
            Turn(query="second", evidence=[Evidence(doc_id=short.id, start=11, end=16)]),
        ],
    )
    create_item(any_ws, project, conversation)

    summaries = {d.name: d for d in list_documents(any_ws, project)}
    assert summaries["long.txt"].used_by == 2  # one item citing it twice counts once
    assert summaries["short.txt"].used_by == 2  # the conversation counts once
    assert summaries["unused.txt"].used_by == 0
    assert summaries["long.txt"].chunks > 1
    assert summaries["short.txt"].chunks == 1

    client = client_for(any_ws)
    listed = client.get("/api/projects/docs/documents").json()["documents"]
    assert {d["name"]: d["used_by"] for d in listed} == {
        "long.txt": 2,
        "short.txt": 2,
        "unused.txt": 0,
    }
    assert {d["name"]: d["chunks"] for d in listed}["long.txt"] == summaries["long.txt"].chunks
    page = client.get("/projects/docs/documents")
    assert page.status_code == 200
    assert f'data-doc-id="{short.id}"' in page.text and 'data-used-by="2"' in page.text

    cited = client.get(f"/api/projects/docs/documents/{short.id}/items").json()["items"]
    assert [(c["query"], c["kind"]) for c in cited] == [("q2", "qa"), ("first", "conversation")]
    assert cited[1]["url"].startswith("/projects/docs/conversations/")
    assert client.get(f"/api/projects/docs/documents/{unused.id}/items").json()["items"] == []
    refused = client.delete(f"/api/projects/docs/documents/{short.id}")
    assert refused.status_code == 409 and "q2" in refused.json()["detail"]


def test_document_view_renders_markdown_with_offsets(any_ws: Workspace) -> None:
    project = create_project(any_ws, "docs")
    source = "# Ferries\n\nThe **night** ferry <b>leaves</b> at 22:40.\n\n- Bikes ride free\n"
    doc = ingest_bytes(any_ws, project, "ferries.md", source.encode())
    page = client_for(any_ws).get(f"/projects/docs/documents/{doc.id}").text
    assert "<h2>" in page and "<strong>" in page and "<li>" in page
    assert "<b>leaves</b>" not in page and "&lt;b&gt;leaves&lt;/b&gt;" in page
    start = source.index("night")
    assert f'<span data-start="{start}">night</span>' in page
    plain = client_for(any_ws).get(f"/projects/docs/documents/{doc.id}?view=text").text
    assert 'class="doctext"' in plain


def test_cli_ingest_refuses_a_file_without_text(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "photo.png").write_bytes(PNG)
    (tmp_path / "notes.txt").write_text("Harbour notes.")
    runner = CliRunner()
    assert runner.invoke(make_app(), ["--home", str(home), "init"]).exit_code == 0
    args = ["--home", str(home), "ingest", "-p", "docs"]
    result = runner.invoke(make_app(), [*args, str(tmp_path / "photo.png")])
    assert result.exit_code == 1, result.output
    shown = " ".join(result.output.split())  # the console wraps long lines
    assert "photo.png: no text could be extracted" in shown
    assert "0 added" in shown
    mixed = runner.invoke(make_app(), [*args, "--json", str(tmp_path)])
    assert mixed.exit_code == 2, mixed.output
    outcomes = {o["source"]: o for o in json.loads(mixed.output)}
    assert outcomes["photo.png"]["status"] == "error"
    assert outcomes["photo.png"]["reason"] == "no_text"
    assert outcomes["notes.txt"]["status"] == "added"
    keep = runner.invoke(
        make_app(), ["--home", str(home), "projects", "settings", "-p", "docs", "--keep-textless"]
    )
    assert keep.exit_code == 0, keep.output
    assert "files without text: kept with a warning" in " ".join(keep.output.split())
    kept = runner.invoke(make_app(), [*args, str(tmp_path / "photo.png")])
    assert kept.exit_code == 0, kept.output
    assert "added" in kept.output and "no text extracted" in " ".join(kept.output.split())
