"""Shared fixtures: a real workspace per test, the system Chromium, a live server, PostgreSQL."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from assay.records import Project
from assay.store.projects import create_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]


def missing(what: str) -> None:
    """Skip locally, fail in CI: CI must exercise every real component."""
    if IN_CI:
        pytest.fail(f"{what} (CI=true: a missing component is a failure)")
    pytest.skip(what)


@pytest.fixture(autouse=True)
def _testclient_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starlette's TestClient sends ``Host: testserver``: allowed here as a configured host
    would be (the web app refuses unknown Host headers, see tests/test_web_security.py)."""
    monkeypatch.setenv("ASSAY_ALLOWED_HOSTS", "testserver")


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = Workspace.open(Settings(home=tmp_path / "ws"))
    yield workspace
    workspace.close()


@pytest.fixture
def project(ws: Workspace) -> Project:
    return create_project(ws, "test", "en")


@pytest.fixture
def shared_fixtures() -> Path:
    folder = SHARED / "fixtures"
    if not folder.is_dir():
        missing(f"conformance fixtures not found at {folder} (a plain clone has no ../shared)")
    return folder


@pytest.fixture
def postgres_url() -> str:
    url = os.environ.get("ASSAY_TEST_POSTGRES_URL", "")
    if not url:
        missing("no PostgreSQL server: set ASSAY_TEST_POSTGRES_URL (make test starts one)")
    return url


@pytest.fixture
def pg_ws(tmp_path: Path, postgres_url: str) -> Iterator[Workspace]:
    """A workspace on a fresh database of the test PostgreSQL server (dropped afterwards)."""
    admin = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    name = f"assay_test_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = sa.make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    workspace = Workspace.open(Settings(home=tmp_path / "ws", database_url=url))
    try:
        yield workspace
    finally:
        workspace.close()
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_ws(request: pytest.FixtureRequest, tmp_path: Path) -> Workspace:
    """The same test on a SQLite file and on PostgreSQL: a feature is done on both."""
    if request.param == "sqlite":
        return request.getfixturevalue("ws")  # type: ignore[no-any-return]
    return request.getfixturevalue("pg_ws")  # type: ignore[no-any-return]


def chromium_path() -> str | None:
    for candidate in (
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and Path(candidate).exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    path = chromium_path()
    if path is None:
        missing("Chromium not found (Debian package chromium; make test installs it)")
    return {**browser_type_launch_args, "executable_path": path, "args": CHROMIUM_ARGS}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """Serves ``create_app(ws)`` with uvicorn in a thread on a free loopback port."""

    def __init__(self, ws: Workspace) -> None:
        import uvicorn

        from assay.web import create_app

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            create_app(ws), host="127.0.0.1", port=self.port, log_level="warning"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the test server did not start within 20 s")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def live_server(ws: Workspace) -> Iterator[LiveServer]:
    with LiveServer(ws) as server:
        yield server
