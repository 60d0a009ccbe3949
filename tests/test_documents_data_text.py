"""CSV, JSON and JSON Lines documents are ingested as text (they were refused as "no text could
be extracted"): through `assay ingest`, the web upload and the parser, their text as written, a
broken JSON file kept with a warning naming where it breaks. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from assay.cli import make_app
from assay.corpus.documents import get_document, list_documents
from assay.parsing import guess_media_type, parse
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from assay.web import create_app

TABLE = 'city,ferry\r\nKiel,22:40\r\n"Oslo, Norway",07:15\r\n'
RECORD = '{"city": "Kiel", "ferry": "22:40", "note": "Grüße aus Kiel"}\n'
LINES = '{"city": "Kiel"}\n\n{"city": "Oslo"}\n'
BROKEN_LINES = '{"city": "Kiel"}\n{"city": \n'


def test_the_parsers_keep_the_text_as_written() -> None:
    table = parse("ferries.csv", TABLE.encode())
    assert (table.text, table.parser, table.warnings) == (TABLE.replace("\r\n", "\n"), "csv", ())
    record = parse("ferry.json", RECORD.encode())
    assert (record.text, record.parser, record.warnings) == (RECORD, "json", ())
    lines = parse("ferries.jsonl", LINES.encode())
    assert (lines.text, lines.parser, lines.warnings) == (LINES, "jsonl", ())
    assert guess_media_type("x.ndjson", b"{}") == "application/jsonl"
    broken = parse("broken.json", b'{"city": "Kiel",}')
    assert broken.text == '{"city": "Kiel",}'
    assert broken.warnings == (
        "not valid JSON (Expecting property name enclosed in double quotes at line 1 column "
        "17): kept as text",
    )
    half = parse("half.jsonl", BROKEN_LINES.encode())
    assert half.text == BROKEN_LINES
    assert half.warnings[0].startswith("line 2 is not valid JSON (Expecting value")


def test_assay_ingest_takes_csv_json_and_json_lines(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "ferries.csv").write_bytes(TABLE.encode())
    (folder / "ferry.json").write_text(RECORD, encoding="utf-8")
    (folder / "ferries.jsonl").write_text(LINES, encoding="utf-8")
    (folder / "half.jsonl").write_text(BROKEN_LINES, encoding="utf-8")
    home = ["--home", str(tmp_path / "ws")]
    runner = CliRunner()
    assert runner.invoke(make_app(), [*home, "init"]).exit_code == 0
    done = runner.invoke(make_app(), [*home, "ingest", "-p", "docs", "--json", str(folder)])
    assert done.exit_code == 0, done.output
    outcomes = {o["source"]: o["status"] for o in json.loads(done.stdout)}
    assert outcomes == dict.fromkeys(
        ["ferries.csv", "ferries.jsonl", "ferry.json", "half.jsonl"], "added"
    )
    hits = runner.invoke(make_app(), [*home, "search", "Oslo Norway", "-p", "docs", "--json"])
    assert hits.exit_code == 0, hits.output
    assert json.loads(hits.stdout)[0]["text"].startswith("city,ferry")


def test_the_web_upload_takes_them_as_text(any_ws: Workspace) -> None:
    project = create_project(any_ws, "docs")
    client = TestClient(create_app(any_ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    sent = {"ferries.csv": TABLE, "ferry.json": RECORD, "half.jsonl": BROKEN_LINES}
    for name, text in sent.items():
        response = client.post(
            "/api/projects/docs/documents", files={"file": (name, text.encode())}
        )
        assert response.status_code == 201, response.text
    stored = {d.name: d for d in list_documents(any_ws, get_project(any_ws, "docs"))}
    assert {n: d.media_type for n, d in stored.items()} == {
        "ferries.csv": "text/csv",
        "ferry.json": "application/json",
        "half.jsonl": "application/jsonl",
    }
    for name, text in sent.items():
        document = get_document(any_ws, project, stored[name].id)
        assert document.text == text.replace("\r\n", "\n")
    half = get_document(any_ws, project, stored["half.jsonl"].id)
    assert "line 2 is not valid JSON" in half.parse_info.warnings[0]
    page = client.get(f"/projects/docs/documents/{stored['ferry.json'].id}").text
    assert "Grüße aus Kiel" in page
