"""Team mode on several machines without a shared disk: every server and worker has a workspace
folder of its own and one PostgreSQL database; files processes share are kept in the database
(``stored_files``) and fetched into a folder that misses them. On SQLite the folder is the
store and nothing is copied.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from assay.corpus.ingest import ingest_bytes
from assay.experiments.runfiles import file_store
from assay.gold.items import create_item, set_status
from assay.records import Evidence, Item, Turn
from assay.review.versions import create_version, read_snapshot
from assay.store.blobs import BlobStore
from assay.store.file_schema import stored_files
from assay.store.projects import create_project, delete_project, delete_unused_blobs
from assay.store.settings import Settings
from assay.store.shared_files import PART
from assay.store.workspace import Workspace
from tests.conftest import free_port, stop_process
from tests.test_serve_processes import SRC, _wait_until_up, eventually, keyword_hits, upload


def stored_names(ws: Workspace) -> set[str]:
    with ws.engine.connect() as conn:
        return set(conn.scalars(sa.select(stored_files.c.name).distinct()))


def parts_of(ws: Workspace, name: str) -> int:
    with ws.engine.connect() as conn:
        count = conn.scalar(
            sa.select(sa.func.count()).select_from(stored_files).where(stored_files.c.name == name)
        )
        return int(count or 0)


@contextlib.contextmanager
def elsewhere(ws: Workspace, home: Path) -> Iterator[Workspace]:
    """The workspace of ``ws``'s database seen from another machine: an empty folder of its own."""
    with Workspace.open(Settings(home=home, database_url=ws.settings.database_url)) as other:
        yield other


@pytest.mark.postgres
def test_an_original_put_on_one_machine_is_read_on_another_from_the_database(
    pg_ws: Workspace, tmp_path: Path
) -> None:
    data = os.urandom(2 * PART + 100)  # three parts: a big file is streamed, never one row
    sha256 = pg_ws.blobs.put(data)
    assert parts_of(pg_ws, f"blobs/{sha256}") == 3
    with elsewhere(pg_ws, tmp_path / "second") as second:
        assert not second.blobs.path(sha256).exists()
        assert second.blobs.get(sha256) == data
        assert second.blobs.path(sha256).read_bytes() == data  # kept: the folder is a cache
        assert second.blobs.file_hash(sha256) == sha256
        assert delete_unused_blobs(second) == 1  # no document uses it: gone from the database too
    assert parts_of(pg_ws, f"blobs/{sha256}") == 0
    with elsewhere(pg_ws, tmp_path / "third") as third:
        with pytest.raises(Exception, match="missing"):
            third.blobs.get(sha256)
        assert not third.blobs.path(sha256).exists()  # no empty file left behind


@pytest.mark.postgres
def test_run_files_and_empty_files_travel_through_the_database(
    pg_ws: Workspace, tmp_path: Path
) -> None:
    run = b"q1 Q0 d1 1 1.0 bm25\n"
    sha_run = file_store(pg_ws).put(run)
    sha_empty = pg_ws.blobs.put(b"")
    pg_ws.blobs.put(b"")  # a second put of the same bytes stores nothing more
    assert parts_of(pg_ws, f"blobs/{sha_empty}") == 1
    with elsewhere(pg_ws, tmp_path / "second") as second:
        assert file_store(second).get(sha_run) == run
        assert second.blobs.get(sha_empty) == b""
    assert f"run-files/{sha_run}" in stored_names(pg_ws)


@pytest.mark.postgres
def test_a_folder_from_before_the_database_copy_is_copied_into_it_once(
    pg_ws: Workspace, tmp_path: Path
) -> None:
    sha256 = BlobStore(pg_ws.blobs.root).put(b"kept only in the folder")  # as before 0028
    assert stored_names(pg_ws) == set()
    assert pg_ws.blobs.share_folder() == 1
    assert pg_ws.blobs.share_folder() == 0  # nothing left to copy
    with elsewhere(pg_ws, tmp_path / "second") as second:
        assert second.blobs.get(sha256) == b"kept only in the folder"


def test_deleting_a_project_keeps_another_projects_version_zip(any_ws: Workspace) -> None:
    """Version zips share the blob store with originals: cleaning up unused originals after
    a project's delete must leave them (before, every version's zip went)."""
    project = create_project(any_ws, "kept")
    document = ingest_bytes(any_ws, project, "train.txt", b"The night train leaves at 22:40.")
    passage = Evidence(doc_id=document.id, start=0, end=15, text="The night train")
    item = create_item(any_ws, project, Item(turns=[Turn(query="When?", evidence=[passage])]))
    set_status(any_ws, project, item.id, "accepted", item.version)
    version = create_version(any_ws, project, "v1")
    delete_project(any_ws, create_project(any_ws, "gone"))
    assert [i.id for i in read_snapshot(any_ws, version).items] == [item.id]


@pytest.mark.sqlite_only("on SQLite the folder is the one store: nothing goes to the database")
def test_on_sqlite_the_folder_is_the_store(ws: Workspace) -> None:
    assert ws.files is None
    sha256 = ws.blobs.put(b"plain text")
    assert ws.blobs.path(sha256).read_bytes() == b"plain text"
    assert stored_names(ws) == set()


# ---------------------------------------------------------------- processes


@contextlib.contextmanager
def process_on(ws: Workspace, home: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    """``assay ARGS`` on ``ws``'s database with the folder ``home`` (made empty) as its own;
    servers leave jobs to the worker."""
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update(
        ASSAY_HOME=str(home),
        ASSAY_DATABASE_URL=ws.settings.database_url,
        ASSAY_SERVER_RUNS_JOBS="false",
        PYTHONPATH=os.pathsep.join([SRC, env.get("PYTHONPATH", "")]),
    )
    log = (home.parent / f"{home.name}.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", *args],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield process
    finally:
        stop_process(process)
        log.close()


@contextlib.contextmanager
def server_on(ws: Workspace, home: Path) -> Iterator[httpx.Client]:
    port = free_port()
    with (
        process_on(ws, home, "serve", "--port", str(port)) as process,
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client,
    ):
        _wait_until_up(client, process)
        client.headers["x-csrf-token"] = client.cookies["assay_csrf"]
        yield client


def finished(client: httpx.Client, job_url: str) -> bool:
    answer = client.get(job_url)
    assert answer.status_code == 200, answer.text
    assert answer.json()["state"] not in ("failed", "cancelled"), answer.text
    return bool(answer.json()["state"] == "done")


@pytest.mark.postgres
def test_two_servers_and_a_worker_each_with_its_own_folder_share_one_database(
    pg_ws: Workspace, tmp_path: Path
) -> None:
    handbook = create_project(pg_ws, "handbook", "en")
    leave = ingest_bytes(pg_ws, handbook, "leave.txt", b"Staff get 30 days of leave.")
    passage = Evidence(doc_id=leave.id, start=0, end=27, text="Staff get 30 days of leave.")
    item = create_item(pg_ws, handbook, Item(turns=[Turn(query="Leave?", evidence=[passage])]))
    set_status(pg_ws, handbook, item.id, "accepted", item.version)
    pg_ws.engine.dispose()
    a_home, b_home, w_home = tmp_path / "a", tmp_path / "b", tmp_path / "w"
    with (
        server_on(pg_ws, a_home) as first,
        server_on(pg_ws, b_home) as second,
        process_on(pg_ws, w_home, "worker") as worker,
    ):
        doc_id = upload(first, "handbook", "airships.txt", "The zeppelin leaves at noon.")
        assert not (b_home / "blobs").exists()
        original = second.get(f"/projects/handbook/documents/{doc_id}/original")
        assert original.status_code == 200, original.text
        assert original.content == b"The zeppelin leaves at noon."
        [cached] = (b_home / "blobs").glob("*/*")  # fetched into B's own folder
        assert keyword_hits(second, "handbook", "zeppelin") == {doc_id}  # B's index, from the db

        started = second.post(
            "/api/projects/handbook/transfer/exports",
            json={"format": "native", "allow_empty": True},
        )
        assert started.status_code == 202, started.text
        job_url = f"/api/projects/handbook/transfer/jobs/{started.json()['id']}"
        assert eventually(lambda: finished(first, job_url), within=120)  # a bound on a hung job
        assert list((w_home / "exports").glob("*/*/*"))  # the worker wrote it in its folder
        assert not (b_home / "exports").exists() and not (a_home / "exports").exists()
        download = first.get(first.get(job_url).json()["download"])
        assert download.status_code == 200, download.text
        with zipfile.ZipFile(io.BytesIO(download.content)) as bundle:
            # the worker read the original from the database into its own folder to export it
            assert bundle.read(f"files/{cached.name}") == b"The zeppelin leaves at noon."
        assert (w_home / "blobs" / cached.parent.name / cached.name).is_file()

        imported = first.post(
            "/api/projects/handbook/transfer/imports",
            files={"file": ("handbook.zip", download.content)},
            data={"format": "native", "project": "copy"},
        )
        assert imported.status_code == 202, imported.text
        job_url = f"/api/projects/handbook/transfer/jobs/{imported.json()['id']}"
        assert eventually(lambda: finished(second, job_url), within=120)
        assert second.get(job_url).json()["result"]["project"] == "copy"
        assert keyword_hits(second, "copy", "zeppelin")  # the worker's import, searched on B

        # an experiment: its run file uploaded through A, run by the worker (its keyword
        # pipeline searching an index the worker builds in its own folder), read through B
        run = f"{item.id} Q0 {leave.id} 1 2.0 system-a\n".encode()
        ref = first.post(
            "/api/projects/handbook/experiment-files",
            data={"kind": "run"},
            files={"file": ("system-a.run", run)},
        )
        assert ref.status_code == 201, ref.text
        pipeline = {"name": "system-a", "kind": "file", "run_file": {
            "sha256": ref.json()["sha256"], "name": "system-a.run"}}  # fmt: skip
        body = {"name": "elsewhere", "pipelines": [pipeline, "keyword"]}
        created = first.post("/api/projects/handbook/experiments", json=body)
        assert created.status_code == 201, created.text

        def experiment_done() -> bool:
            shown = second.get("/api/projects/handbook/experiments/elsewhere").json()["experiment"]
            assert shown["status"] not in ("failed", "cancelled"), shown["message"]
            return bool(shown["status"] == "done")

        assert eventually(experiment_done, within=120)
        shown = second.get("/api/projects/handbook/experiments/elsewhere").json()["experiment"]
        assert shown["aggregates"]["system-a"]["errors"] == 0, shown["aggregates"]
        assert list((w_home / "run-files").glob("*/*"))  # fetched into the worker's folder
        assert worker.poll() is None
    assert not any(name.startswith("imports/") for name in stored_names(pg_ws))  # upload gone
