"""Several server processes over one workspace (``assay serve`` twice, ``--workers``): a write
through one process is found by a search through another; on SQLite and on PostgreSQL.

The servers are real ``assay serve`` subprocesses on free loopback ports. Every search compares
its index with the project's corpus version, so another process's write is asserted to be found
at once, not within some time (how long the catching up takes is measured in
benchmarks/search_processes.py); only jobs run by another process are waited for.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio.to_thread
import httpx
import pytest

import assay
from assay.corpus.chunkings import get_chunking
from assay.corpus.ingest import ingest_bytes, replace_document
from assay.records import Project
from assay.search.indexes import search, sync_index
from assay.search.retriever import RetrieverSettings
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.conftest import free_port, stop_process

SRC = str(Path(assay.__file__).resolve().parents[1])
"""This checkout's sources, for the subprocesses."""
HANG_BOUND = 120.0
"""Seconds a test waits for a job another process runs: only a bound against a hang (a
search or a list sees another process's write at once, so those are asserted at once)."""


@contextlib.contextmanager
def serving(ws: Workspace, *args: str) -> Iterator[httpx.Client]:
    """``assay serve`` on a free port over ``ws``'s folder and database, and a client that
    sends the CSRF token (personal mode: nobody signs in)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update(ASSAY_HOME=str(ws.settings.home), ASSAY_DATABASE_URL=ws.settings.database_url)
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "assay", "serve", "--port", str(port), *args]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            _wait_until_up(client, process)
            client.headers["x-csrf-token"] = client.cookies["assay_csrf"]
            yield client
    finally:
        stop_process(process)


def _wait_until_up(client: httpx.Client, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _out, err = process.communicate()
            raise AssertionError(f"assay serve stopped with {process.returncode}: {err}")
        with contextlib.suppress(httpx.TransportError):
            if client.get("/api/projects").status_code == 200:
                return
        time.sleep(0.1)
    raise AssertionError("assay serve did not answer within 60 s")


def eventually(found: Callable[[], bool], within: float = HANG_BOUND) -> bool:
    """Whether ``found()`` becomes true within ``within`` seconds."""
    deadline = time.monotonic() + within
    while not found():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def upload(client: httpx.Client, project: str, name: str, text: str) -> str:
    answer = client.post(
        f"/api/projects/{project}/documents", files={"file": (name, text.encode(), "text/plain")}
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["document"]["id"])


def keyword_hits(client: httpx.Client, project: str, query: str) -> set[str]:
    answer = client.get(f"/api/projects/{project}/search", params={"q": query})
    assert answer.status_code == 200, answer.text
    return {hit["doc_id"] for hit in answer.json()}


def items_matching(client: httpx.Client, project: str, text: str) -> int:
    answer = client.get(f"/api/projects/{project}/items", params={"text": text})
    assert answer.status_code == 200, answer.text
    return int(answer.json()["total"])


@pytest.fixture
def handbook(any_ws: Workspace) -> Project:
    project = create_project(any_ws, "handbook", "en")
    any_ws.engine.dispose()  # the servers open their own connections
    return project


def test_a_document_added_through_one_process_is_found_through_another(
    any_ws: Workspace, handbook: Project
) -> None:
    with serving(any_ws) as first, serving(any_ws) as second:
        assert keyword_hits(second, "handbook", "zeppelin") == set()  # B's index exists now
        doc_id = upload(first, "handbook", "airships.txt", "The zeppelin leaves at noon.")
        # every search compares the index with the project's corpus version: no delay
        assert keyword_hits(second, "handbook", "zeppelin") == {doc_id}

        deleted = first.delete(f"/api/projects/handbook/documents/{doc_id}")
        assert deleted.status_code == 204, deleted.text
        assert keyword_hits(second, "handbook", "zeppelin") == set()


def test_dense_search_in_another_process_sees_an_upload(
    any_ws: Workspace, handbook: Project
) -> None:
    dense = RetrieverSettings(kind="dense")
    assert search(any_ws, handbook, "airship departure", retriever=dense) == []
    with serving(any_ws) as server:
        doc_id = upload(server, "handbook", "airships.txt", "The zeppelin leaves at noon.")
    found = search(any_ws, handbook, "airship departure", retriever=dense)  # this process
    assert [hit.doc_id for hit in found] == [doc_id]


def test_an_item_edited_through_one_process_is_found_through_another(
    any_ws: Workspace, handbook: Project
) -> None:
    with serving(any_ws) as first, serving(any_ws) as second:
        created = first.post(
            "/api/projects/handbook/items", json={"turns": [{"query": "When does it leave?"}]}
        )
        assert created.status_code == 201, created.text
        item = created.json()["item"]
        assert items_matching(second, "handbook", "leave") == 1

        edit = {"turns": [{"query": "When does the zeppelin depart?"}]}
        saved = first.put(
            f"/api/projects/handbook/items/{item['id']}", json={"version": 1, "item": edit}
        )
        assert saved.status_code == 200, saved.text
        assert items_matching(second, "handbook", "zeppelin") == 1
        assert items_matching(second, "handbook", "leave") == 0


def test_workers_serve_from_several_processes_over_one_database(
    any_ws: Workspace, handbook: Project
) -> None:
    with serving(any_ws, "--workers", "2") as server:
        doc_id = upload(server, "handbook", "airships.txt", "The zeppelin leaves at noon.")
        # new connections are spread over both workers by the kernel
        assert all(keyword_hits(server, "handbook", "zeppelin") == {doc_id} for _ in range(8))


def test_the_workers_are_processes_of_the_server(any_ws: Workspace) -> None:
    with serving(any_ws, "--workers", "3") as server:
        assert server.get("/api/projects").status_code == 200
        supervisor = _serve_process_of(server)
        assert len(_workers_of(supervisor)) == 3


def _serve_process_of(client: httpx.Client) -> int:
    """The pid of the ``assay serve`` listening on the client's port."""
    port = str(client.base_url.port)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if b"serve" in argv and port.encode() in argv:
                    return int(entry.name)
    raise AssertionError(f"no assay serve process on port {port}")


def _workers_of(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [
        int(child)
        for child in children
        if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()
    ]


def test_concurrent_syncs_of_one_index_leave_the_newest_text(any_ws: Workspace) -> None:
    """Threads of this process take the sync lock as other processes do: syncs racing with
    replacements of a document end with the index holding the database's newest text."""
    project = create_project(any_ws, "race", "en")
    chunking = get_chunking(any_ws, project, None)
    document = ingest_bytes(any_ws, project, "note.txt", b"version0 of the note")
    errors: list[BaseException] = []

    def sync_repeatedly() -> None:
        try:
            for _ in range(10):
                sync_index(any_ws, project, chunking)
        except BaseException as error:  # reported by the assert below
            errors.append(error)

    syncers = [threading.Thread(target=sync_repeatedly) for _ in range(3)]
    for thread in syncers:
        thread.start()
    for version in range(1, 6):
        replace_document(any_ws, project, document, "note.txt", f"version{version} of it".encode())
    for thread in syncers:
        thread.join()
    assert errors == []
    assert [hit.doc_id for hit in search(any_ws, project, "version5")] == [document.id]
    assert search(any_ws, project, "version4") == []


def test_the_thread_pool_and_the_connection_pool_follow_assay_threads(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from assay.store.db import BACKGROUND_CONNECTIONS
    from assay.store.settings import Settings
    from assay.web import create_app

    async def thread_tokens() -> float:
        return anyio.to_thread.current_default_thread_limiter().total_tokens

    with Workspace.open(Settings(home=tmp_path / "ws", threads=3)) as ws:
        assert ws.engine.pool.size() == 3  # type: ignore[attr-defined]
        assert ws.engine.pool._max_overflow == BACKGROUND_CONNECTIONS  # type: ignore[attr-defined]
        with TestClient(create_app(ws)) as client:
            assert client.portal is not None
            assert client.portal.call(thread_tokens) == 3


def test_an_export_and_an_import_started_through_one_process_are_followed_through_another(
    any_ws: Workspace, handbook: Project
) -> None:
    with serving(any_ws) as first, serving(any_ws) as second:
        upload(first, "handbook", "airships.txt", "The zeppelin leaves at noon.")
        started = first.post(
            "/api/projects/handbook/transfer/exports",
            json={"format": "native", "allow_empty": True},
        )
        assert started.status_code == 202, started.text
        job_url = f"/api/projects/handbook/transfer/jobs/{started.json()['id']}"

        def done_in_second() -> bool:
            answer = second.get(job_url)
            assert answer.status_code == 200, answer.text
            assert answer.json()["state"] != "failed", answer.text
            return bool(answer.json()["state"] == "done")

        assert eventually(done_in_second)
        listed = second.get("/api/projects/handbook/transfer/jobs").json()
        assert [job["id"] for job in listed] == [started.json()["id"]]
        download = second.get(second.get(job_url).json()["download"])
        assert download.status_code == 200
        assert download.content.startswith(b"PK")  # the native format is a zip

        imported = first.post(
            "/api/projects/handbook/transfer/imports",
            files={"file": ("handbook.zip", download.content)},
            data={"format": "native", "project": "copy"},
        )
        assert imported.status_code == 202, imported.text
        job_url = f"/api/projects/handbook/transfer/jobs/{imported.json()['id']}"
        assert eventually(done_in_second)
        assert second.get(job_url).json()["result"]["project"] == "copy"
        assert second.get("/api/projects/copy/documents").json()["total"] == 1
