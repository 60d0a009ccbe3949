"""Import and export jobs through the web API (TestClient, real workspace, real files)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from assay.corpus.documents import count_documents
from assay.corpus.ingest import ingest_bytes
from assay.formats import get_format
from assay.gold.item_lists import list_items
from assay.gold.items import create_item
from assay.jobs.transfer_jobs import new_job
from assay.records import Evidence, Item, Project, Turn
from assay.store.import_lock import acquire, release
from assay.store.jobs_schema import transfer_jobs
from assay.store.projects import get_project, list_projects
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.transfer import export_bundle
from assay.web import create_app

POLICY = "Travel policy.\n\nHotels are refunded up to 140 euros per night.\nTaxis only at night.\n"


@contextlib.contextmanager
def serving(ws: Workspace) -> Iterator[TestClient]:
    """A client of the app while it serves: its job worker runs until the block ends, so no
    job thread outlives the test's database."""
    with TestClient(create_app(ws)) as client:
        client.get("/")
        client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
        yield client


def fill(ws: Workspace, project: Project) -> None:
    doc = ingest_bytes(ws, project, "policy.txt", POLICY.encode())
    create_item(
        ws,
        project,
        Item(
            turns=[
                Turn(
                    query="How much is a hotel night?",
                    answer="Up to 140 euros.",
                    evidence=[Evidence(doc_id=doc.id, text="refunded up to 140 euros")],
                )
            ]
        ),
        status="accepted",
    )


def wait(client: TestClient, job: dict[str, Any]) -> dict[str, Any]:
    """Poll the job until it ends (a generous bound only guards against a hung thread)."""
    url = job["events"].removesuffix("/events")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        data: dict[str, Any] = client.get(url).json()
        if data["state"] != "running":
            return data
        time.sleep(0.05)
    raise AssertionError(f"job {job['id']} did not end")


def events(client: TestClient, job: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    with client.stream("GET", job["events"]) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                found.append(json.loads(line[6:]))
    return found


@pytest.fixture
def client(ws: Workspace, project: Project) -> Iterator[TestClient]:
    fill(ws, project)
    with serving(ws) as client:
        yield client


def test_export_job_streams_progress_and_offers_a_readable_file(
    client: TestClient, ws: Workspace, tmp_path: Path
) -> None:
    formats = {f["name"]: f for f in client.get("/api/formats").json()}
    assert formats["autorag"]["folder"] and formats["autorag"]["chunking"]
    assert not formats["native"]["folder"]

    started = client.post("/api/projects/test/transfer/exports", json={"format": "native"})
    assert started.status_code == 202
    stream = events(client, started.json())
    assert stream[-1]["state"] == "done" and stream[-1]["result"]["items"] == 1
    download = client.get(stream[-1]["download"])
    assert download.status_code == 200
    assert "test-native.zip" in download.headers["content-disposition"]
    path = tmp_path / "out.zip"
    path.write_bytes(download.content)
    bundle = get_format("native").read(path)
    assert [i.turns[0].query for i in bundle.items] == ["How much is a hotel night?"]
    assert len(list((ws.settings.home / "exports" / started.json()["id"]).glob("*/*.zip"))) == 1

    folder = client.post("/api/projects/test/transfer/exports", json={"format": "autorag"})
    done = wait(client, folder.json())
    assert done["state"] == "done" and done["filename"] == "test-autorag.zip"
    archive = zipfile.ZipFile(io.BytesIO(client.get(done["download"]).content))
    archive.extractall(tmp_path / "unzipped")
    read = get_format("autorag").read(tmp_path / "unzipped" / "test-autorag")
    assert len(list(read.items)) == 1

    listed = client.get("/api/projects/test/transfer/jobs").json()
    assert {j["id"] for j in listed} == {started.json()["id"], folder.json()["id"]}
    page = client.get("/projects/test/transfer")
    assert page.status_code == 200 and "test-autorag.zip" in page.text


def test_export_refuses_unknown_names(client: TestClient) -> None:
    bad_format = client.post("/api/projects/test/transfer/exports", json={"format": "nope"})
    assert bad_format.status_code == 422 and "choose one of" in bad_format.json()["detail"]
    bad_chunking = client.post(
        "/api/projects/test/transfer/exports", json={"format": "beir", "chunking": "nope"}
    )
    assert bad_chunking.status_code == 404
    bad_status = client.post(
        "/api/projects/test/transfer/exports", json={"format": "csv", "statuses": ["odd"]}
    )
    assert bad_status.status_code == 422
    assert client.get("/api/projects/test/transfer/jobs/unknown").status_code == 404


def native_file(ws: Workspace, project: Project, tmp_path: Path) -> bytes:
    path = tmp_path / "export.zip"
    get_format("native").write(export_bundle(ws, project), path)
    return path.read_bytes()


def test_import_job_reports_what_it_did(
    client: TestClient, ws: Workspace, project: Project, tmp_path: Path
) -> None:
    data = native_file(ws, project, tmp_path)
    started = client.post(
        "/api/projects/test/transfer/imports",
        files={"file": ("export.zip", data)},
        data={"format": "native", "project": "copy"},
    )
    assert started.status_code == 202
    done = wait(client, started.json())
    assert done["state"] == "done", done["message"]
    assert done["result"]["project"] == "copy"
    items = done["result"]["summary"]["item"]
    assert items["imported"] + items["flagged"] == 1 and items["skipped"] == 0
    copy = get_project(ws, "copy")
    assert list_items(ws, copy)[0] == 1 and count_documents(ws, copy) == 1
    assert not any((ws.settings.home / "imports").iterdir())  # the upload is cleaned up

    again = client.post(
        "/api/projects/test/transfer/imports",
        files={"file": ("export.zip", data)},
        data={"format": "native", "project": "copy", "lenient": "true"},
    )
    report = wait(client, again.json())["result"]
    assert report["noted"] and report["noted_total"] >= 1
    assert {n["status"] for n in report["noted"]} <= {"skipped", "flagged"}


def test_import_can_give_every_item_a_review_status(
    client: TestClient, ws: Workspace, project: Project, tmp_path: Path
) -> None:
    data = native_file(ws, project, tmp_path)
    started = client.post(
        "/api/projects/test/transfer/imports",
        files={"file": ("export.zip", data)},
        data={"format": "native", "project": "gold", "status": "accepted"},
    )
    assert wait(client, started.json())["state"] == "done"
    _, rows = list_items(ws, get_project(ws, "gold"))
    assert [r.status for r in rows] == ["accepted"]
    refused = client.post(
        "/api/projects/test/transfer/imports",
        files={"file": ("export.zip", data)},
        data={"format": "native", "project": "other", "status": "golden"},
    )
    assert refused.status_code == 422
    assert "unknown status 'golden'" in refused.json()["detail"]


def test_bad_files_fail_clearly_and_change_nothing(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    before = (count_documents(ws, project), list_items(ws, project)[0], len(list_projects(ws)))
    broken = client.post(
        "/api/projects/test/transfer/imports",
        files={"file": ("broken.zip", b"not a zip at all")},
        data={"format": "native"},
    )
    failed = wait(client, broken.json())
    assert failed["state"] == "failed" and "not a readable zip" in failed["message"]

    parquet = client.post(
        "/api/projects/test/transfer/imports",
        files={"file": ("qa.parquet", b"PAR1 nonsense")},
        data={"format": "autorag"},
    )
    assert "upload a zip of the folder" in wait(client, parquet.json())["message"]

    unknown = client.post(
        "/api/projects/test/transfer/imports",
        files={"file": ("a.csv", b"x")},
        data={"format": "excel"},
    )
    assert unknown.status_code == 422
    after = (count_documents(ws, project), list_items(ws, project)[0], len(list_projects(ws)))
    assert after == before


def test_replace_needs_confirmation(
    client: TestClient, ws: Workspace, project: Project, tmp_path: Path
) -> None:
    data = native_file(ws, project, tmp_path)
    refused = client.post(
        "/api/projects/test/transfer/imports",
        files={"file": ("export.zip", data)},
        data={"format": "native", "replace": "true"},
    )
    assert refused.status_code == 422 and "confirm=replace" in refused.json()["detail"]
    confirmed = client.post(
        "/api/projects/test/transfer/imports",
        files={"file": ("export.zip", data)},
        data={"format": "native", "replace": "true", "confirm": "replace"},
    )
    assert wait(client, confirmed.json())["state"] == "done"
    assert list_items(ws, get_project(ws, "test"))[0] == 1


def test_zip_entries_outside_the_folder_are_refused(
    client: TestClient, ws: Workspace, tmp_path: Path
) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("data/qa.parquet", b"x")
        zf.writestr("../../escaped.parquet", b"x")
    started = client.post(
        "/api/projects/test/transfer/imports",
        files={"file": ("dataset.zip", buffer.getvalue())},
        data={"format": "autorag"},
    )
    failed = wait(client, started.json())
    assert failed["state"] == "failed" and "unsafe entry name" in failed["message"]
    assert not list(ws.settings.home.parent.rglob("escaped.parquet"))


def test_the_upload_limit_is_enforced(tmp_path: Path) -> None:
    ws = Workspace.open(Settings(home=tmp_path / "small", max_file_mb=0.001))
    try:
        from assay.store.projects import create_project

        create_project(ws, "p")
        with serving(ws) as client:
            response = client.post(
                "/api/projects/p/transfer/imports",
                files={"file": ("big.zip", b"x" * 30_000)},
                data={"format": "native"},
            )
        assert response.status_code == 413 and "import limit" in response.json()["detail"]
    finally:
        ws.close()


def test_export_takes_accepted_items_and_says_what_it_left_out(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    create_item(ws, project, Item(turns=[Turn(query="An unreviewed draft")]))
    page = client.get("/projects/test/transfer").text
    assert 'value="accepted" checked' in page and 'value="draft" >' in page
    default = wait(client, client.post(EXPORTS, json={"format": "csv"}).json())
    assert default["result"]["items"] == 1
    assert default["result"]["left_out"] == {"draft": 1}
    assert default["result"]["statuses"] == ["accepted"]
    every = wait(client, client.post(EXPORTS, json={"format": "csv", "statuses": ["all"]}).json())
    assert every["result"]["items"] == 2 and every["result"]["left_out"] == {}
    empty = client.post(EXPORTS, json={"format": "csv", "statuses": ["rejected"]})
    assert empty.status_code == 422
    assert "nothing to export" in empty.json()["detail"]
    assert "1 draft, 1 accepted" in empty.json()["detail"]
    allowed = client.post(
        EXPORTS, json={"format": "csv", "statuses": ["rejected"], "allow_empty": True}
    )
    assert wait(client, allowed.json())["result"]["items"] == 0
    none = client.post(EXPORTS, json={"format": "csv", "statuses": []})
    assert none.status_code == 422


EXPORTS = "/api/projects/test/transfer/exports"


def test_edits_during_an_import_are_refused_with_423(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    item = list_items(ws, project, limit=1)[1][0]
    with ws.engine.begin() as conn:
        acquire(conn, project.id, "running-import")  # held by this (live) process
    body = {"version": 1, "item": {"turns": [{"query": "edited"}]}}
    refused = client.put(f"/api/projects/test/items/{item.id}", json=body)
    assert refused.status_code == 423
    assert "locked by an import running since" in refused.json()["detail"]
    assert client.get("/api/projects/test").json()["importing_since"]
    assert "importing…" in client.get("/projects/test/items").text
    assert client.post(EXPORTS, json={"format": "csv"}).status_code == 423
    with ws.engine.begin() as conn:
        release(conn, "running-import")
    assert client.get("/api/projects/test").json()["importing_since"] is None
    assert client.put(f"/api/projects/test/items/{item.id}", json=body).status_code == 200


def _impatient(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.execute("PRAGMA busy_timeout = 50")


@pytest.mark.sqlite_only("holds SQLite's writer lock; PostgreSQL has no database-wide one")
def test_a_busy_database_answers_503_not_500(
    client: TestClient, ws: Workspace, project: Project
) -> None:
    item = list_items(ws, project, limit=1)[1][0]
    ws.engine.dispose()  # from here on every connection waits 50 ms for the lock, not 30 s
    sa.event.listen(ws.engine, "connect", _impatient)
    holder = sqlite3.connect(ws.settings.home / "assay.db", isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        body = {"version": 1, "item": {"turns": [{"query": "edited"}]}}
        busy = client.put(f"/api/projects/test/items/{item.id}", json=body)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert busy.status_code == 503
    assert "busy with another write" in busy.json()["detail"]


def test_upload_folders_no_running_import_needs_are_removed_on_start(ws: Workspace) -> None:
    imports = ws.settings.home / "imports"
    queued = new_job(ws, "import", "test", "csv", file="imports/x/upload.csv")
    ended = new_job(ws, "import", "test", "csv")
    with ws.engine.begin() as conn:
        conn.execute(transfer_jobs.update().where(transfer_jobs.c.id == ended).values(state="done"))
    older = imports / f"{os.getpid()}-def"  # a folder of an older version
    for name in (queued, ended, older.name):
        (imports / name / "data").mkdir(parents=True)
        (imports / name / "upload.zip").write_bytes(b"x")
    create_app(ws)
    assert (imports / queued).is_dir()  # a worker will read it
    assert not (imports / ended).exists() and not older.exists()


def test_every_export_path_writes_the_same(
    client: TestClient, ws: Workspace, project: Project, tmp_path: Path
) -> None:
    """``assay export``, the web's export job and ``assay items export-one`` take the same
    options through one path (``transfer.project_export``) and write the same files,
    unanswerable questions included when asked (only the local CLI could, before)."""
    import pandas as pd
    from typer.testing import CliRunner

    from assay.cli import make_app

    moon = create_item(
        ws,
        project,
        Item(turns=[Turn(query="Who pays for lunch on the moon?", query_type="unanswerable")]),
        status="accepted",
    )
    create_item(ws, project, Item(turns=[Turn(query="An unreviewed draft")]))
    runner = CliRunner()

    def cli(*args: str) -> dict[str, Any]:
        result = runner.invoke(make_app(), ["--home", str(ws.settings.home), *args, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)  # type: ignore[no-any-return]

    def web(name: str, **options: Any) -> tuple[Path, dict[str, Any]]:
        done = wait(client, client.post(EXPORTS, json={"format": "autorag", **options}).json())
        assert done["state"] == "done", done
        archive = zipfile.ZipFile(io.BytesIO(client.get(done["download"]).content))
        archive.extractall(tmp_path / name)
        return tmp_path / name / "test-autorag", done["result"]

    def qa(folder: Path) -> list[tuple[str, str]]:
        frame = pd.read_parquet(folder / "qa.parquet")
        return sorted(zip(frame["qid"], frame["query"], strict=True))

    for include in (False, True):
        flag = ["--include-unanswerable"] if include else []
        here = cli("export", "autorag", str(tmp_path / f"cli-{include}"), "--status", "all", *flag)
        there, result = web(f"web-{include}", statuses=["all"], include_unanswerable=include)
        assert qa(tmp_path / f"cli-{include}") == qa(there)
        assert len(qa(there)) == (3 if include else 1)  # the draft has no passage either
        assert here["notes"] == result["notes"] and here["items"] == result["items"] == 3
        assert here["statuses"] == result["statuses"] and here["left_out"] == result["left_out"]
        corpus = [
            pd.read_parquet(p / "corpus.parquet") for p in (tmp_path / f"cli-{include}", there)
        ]
        assert corpus[0].equals(corpus[1])
    one = cli(
        "items", "export-one", moon.id, "autorag", str(tmp_path / "one"), "--include-unanswerable"
    )
    assert one["notes"] == [] and qa(tmp_path / "one") == [
        (moon.id, "Who pays for lunch on the moon?")
    ]
    refused = client.post(EXPORTS, json={"format": "autorag", "statuses": ["rejected"]})
    assert refused.status_code == 422 and "'allow_empty'" in refused.json()["detail"]
    page = client.get("/projects/test/transfer").text  # the page offers the same option
    assert 'id="export-unanswerable" name="include_unanswerable"' in page
