"""Shared fixtures: a real workspace per test, the system Chromium, a live server, PostgreSQL.

Two passes of the suite (scripts/run-tests, the README's ``make test``, runs both):

- SQLite (the default): each workspace is an ``assay.db`` file in its home folder; the
  ``any_ws`` tests and the ``postgres``-marked ones run on PostgreSQL as well.
- PostgreSQL (``ASSAY_TEST_DATABASE=postgres``): every test that has a ``tmp_path`` gets a
  database in the state of a fresh copy of ``migrated_template`` on the server named by
  ASSAY_TEST_POSTGRES_URL, through ASSAY_DATABASE_URL, so every workspace it makes (the ``ws``
  fixture, ``Settings(home=...)``, CLI runs and subprocesses, live servers) lives there; it is
  put back in the template's state after the test and lent to the worker's next one
  (tests/pg_databases.py). What already ran on PostgreSQL in the first pass (``any_ws``,
  ``postgres``) is deselected, as is what opened no database there (no database fixture, or
  only a ``tmp_path`` in which the SQLite pass made no database file: see
  ``NO_DATABASE_RECORD``), and tests marked ``sqlite_only("why")`` (about SQLite itself) are
  skipped with their reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from assay.people import passwords
from assay.records import Project
from assay.store.db import create_engine, migrate
from assay.store.projects import create_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from tests.pg_databases import DatabasePool, fresh_postgres_database, join_job_threads

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
TEST_DATABASE = os.environ.get("ASSAY_TEST_DATABASE", "sqlite")
ON_POSTGRES = TEST_DATABASE == "postgres"
# A test reaches a database of the pass only through one of these (a workspace is made in its
# tmp_path; the others name theirs). A test with none of them opens no workspace (the PostgreSQL
# pass gives it the URL of a database that does not exist), so it ran in full in the SQLite pass
# and is not repeated in the PostgreSQL one.
DATABASE_FIXTURES = frozenset(
    {
        "tmp_path",
        "new_database",
        "pg_ws",
        "any_ws",
        "postgres_url",
        "migrated_template",
        "postgres_databases",
        "showcase",
    }
)
NO_DATABASE_RECORD = os.environ.get("ASSAY_TEST_NO_DATABASE_RECORD", "")
"""A file of test ids (scripts/run-tests names one): the SQLite pass adds every test that passed
whose only database fixture is ``tmp_path`` and that made no database (no ``*.db`` file under its
``tmp_path``, no workspace opened in the test's process); the PostgreSQL pass leaves those out,
as it leaves out the tests with no database fixture. A test the SQLite pass did not run, or that
failed there, is not in the file and runs in both."""
SERIAL_LEFT_RECORD = os.environ.get("ASSAY_TEST_SERIAL_LEFT_RECORD", "")
"""A file (scripts/run-tests names one per pass): the parallel part writes how many tests
marked serial it left out, after the pass's own selection (0: the serial part has none), then
the modules holding them, one per line; the serial part collects only those modules instead of
importing every test module to keep eight tests."""
PRODUCTION_HASHER = passwords._hasher
"""Assay's own Argon2 settings; the tests run with cheap ones (``_fast_password_hashing``)."""
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


WORKSPACES_OPENED = pytest.StashKey[list[int]]()
"""How many workspaces this test process has opened (``_sqlite_from_template`` counts)."""


@pytest.fixture(scope="session", autouse=True)
def _sqlite_from_template(
    sqlite_template_maker: Callable[[], Path], pytestconfig: pytest.Config
) -> Iterator[None]:
    """A workspace opened on a SQLite file that does not exist yet starts as a copy of one
    migrated template (made once per session and xdist worker) instead of being migrated by
    Alembic (about 0.3 s CPU each, the largest cost of the suite); the real migration then
    finds the newest revision stored and does nothing. Migrating from empty is tested where
    it is the subject (tests/test_db.py and the migration tests call ``migrate`` itself),
    and every subprocess (CLI, servers) opens its workspaces without this."""
    import assay.store.workspace as workspace_module

    real_migrate = workspace_module.migrate
    opened = pytestconfig.stash.setdefault(WORKSPACES_OPENED, [0])

    def migrate_from_template(engine: sa.Engine) -> None:
        opened[0] += 1
        file = engine.url.database if engine.url.get_backend_name() == "sqlite" else None
        if file and file != ":memory:" and not Path(file).exists():
            shutil.copyfile(sqlite_template_maker(), file)
        real_migrate(engine)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workspace_module, "migrate", migrate_from_template)
        yield


@pytest.fixture(scope="session")
def sqlite_template_maker(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Path]:
    """Builds the migrated SQLite template when a test first needs it (many tests make no
    workspace; live servers open workspaces from their own threads, hence the lock)."""
    lock = threading.Lock()
    made: list[Path] = []

    def make() -> Path:
        with lock:
            if not made:
                path = tmp_path_factory.mktemp("sqlite-template") / "assay.db"
                engine = create_engine(f"sqlite:///{path}")
                migrate(engine)
                engine.dispose()  # the last connection checkpoints the WAL into the file
                made.append(path)
            return made[0]

    return make


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hashing() -> Iterator[None]:
    """Argon2 at the cheapest settings argon2-cffi allows: at production strength each hash
    and each check costs about 0.2 s CPU, and fixtures make accounts by the hundred. Hashes
    stay real Argon2 (verified, rehashed and refused as in production);
    ``production_passwords`` keeps the production settings for the tests about them."""
    from argon2 import PasswordHasher

    def cheap() -> PasswordHasher:
        return PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(passwords, "_hasher", cheap)
        yield


@pytest.fixture
def production_passwords(monkeypatch: pytest.MonkeyPatch) -> None:
    """Passwords hashed and checked with the production Argon2 settings in this test."""
    monkeypatch.setattr(passwords, "_hasher", PRODUCTION_HASHER)


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


@pytest.fixture(scope="session")
def postgres_url() -> str:
    url = os.environ.get("ASSAY_TEST_POSTGRES_URL", "")
    if not url:
        missing("no PostgreSQL server: set ASSAY_TEST_POSTGRES_URL (make test starts one)")
    return url


@pytest.fixture(scope="session")
def migrated_template(postgres_url: str) -> Iterator[str]:
    """The template of every PostgreSQL workspace the tests make: an empty database brought
    to the newest schema, once per session (per xdist worker: a template must have no other
    connection while it is copied). Migrating from empty is tested on its own
    (tests/test_db.py, the migration tests)."""
    with fresh_postgres_database(postgres_url) as url:
        engine = create_engine(url)
        migrate(engine)
        engine.dispose()
        yield str(sa.make_url(url).database)


@pytest.fixture(scope="session")
def postgres_databases(postgres_url: str, migrated_template: str) -> Iterator[DatabasePool]:
    """The databases this worker's tests are lent: copies of ``migrated_template``, put back
    in its state after each test (tests/pg_databases.py)."""
    pool = DatabasePool(postgres_url, migrated_template)
    yield pool
    pool.close()


@pytest.fixture
def new_database(request: pytest.FixtureRequest) -> Iterator[Callable[[], str]]:
    """``new_database()`` gives the ``database_url`` of one more workspace of this test, apart
    from the one in ASSAY_DATABASE_URL: ``""`` (the home's SQLite file) in the SQLite pass, a
    fresh PostgreSQL database (dropped after the test) in the PostgreSQL pass."""
    with contextlib.ExitStack() as stack:

        def make() -> str:
            if not ON_POSTGRES:
                return ""
            pool = request.getfixturevalue("postgres_databases")
            return stack.enter_context(pool.lend())

        yield make


@pytest.fixture(autouse=True)
def _test_database(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """In the PostgreSQL pass, ASSAY_DATABASE_URL names a fresh database (a copy of
    ``migrated_template``) for each test that has a ``tmp_path`` (where workspaces are made);
    any other test gets the URL of a database that does not exist, so a workspace it opened
    would fail loudly, never fall back to SQLite."""
    if not ON_POSTGRES:
        monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
        yield
        return
    server = os.environ["ASSAY_TEST_POSTGRES_URL"]
    if "tmp_path" not in request.fixturenames:
        nowhere = sa.make_url(server).set(database="assay_test_no_database_for_this_test")
        monkeypatch.setenv("ASSAY_DATABASE_URL", nowhere.render_as_string(hide_password=False))
        yield
        return
    with request.getfixturevalue("postgres_databases").lend() as url:
        monkeypatch.setenv("ASSAY_DATABASE_URL", url)
        yield


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--serial-tests",
        choices=("with", "without", "only"),
        default="with",
        help="the tests marked serial (they need the machine to themselves): run them with the "
        "others (the default), leave them out (the parallel part of scripts/run-tests), or run "
        "only them (its second part)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if TEST_DATABASE not in ("sqlite", "postgres"):
        raise pytest.UsageError(f"ASSAY_TEST_DATABASE={TEST_DATABASE!r}: give sqlite or postgres")
    if ON_POSTGRES and not os.environ.get("ASSAY_TEST_POSTGRES_URL"):
        raise pytest.UsageError(
            "ASSAY_TEST_DATABASE=postgres needs a server: set ASSAY_TEST_POSTGRES_URL "
            "(scripts/run-tests starts one)"
        )


def _long_modules_first(items: list[pytest.Item]) -> None:
    """pytest-xdist hands tests out in collection order, so a long test collected last keeps
    one worker busy while the others have finished: the modules holding a test marked ``slow``
    go first (longest job first), each module kept together for its module-scoped fixtures."""
    long_modules = {i.path for i in items if i.get_closest_marker("slow") is not None}
    items.sort(key=lambda i: i.path not in long_modules)  # stable: order kept within each


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In the PostgreSQL pass: drop what the SQLite pass already ran on PostgreSQL and what
    opens no database at all (``DATABASE_FIXTURES``, ``NO_DATABASE_RECORD``), and skip the
    tests about SQLite itself, with their reason. Then ``--serial-tests``: keep or drop the
    tests marked serial; when dropping them, write how many are left for the serial part to
    the file ``SERIAL_LEFT_RECORD`` names, with their modules (scripts/run-tests skips that
    part when none)."""
    for item in items:
        marker = item.get_closest_marker("sqlite_only")
        if marker is not None and not (marker.args and str(marker.args[0]).strip()):
            raise pytest.UsageError(f"{item.nodeid}: sqlite_only needs a reason")
    _long_modules_first(items)
    if ON_POSTGRES:
        _leave_out_what_the_sqlite_pass_covered(config, items)
    serial = config.getoption("serial_tests")
    if serial == "with":
        return
    keep = serial == "only"
    dropped = [i for i in items if (i.get_closest_marker("serial") is not None) != keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [i for i in items if (i.get_closest_marker("serial") is not None) == keep]
    if not keep and SERIAL_LEFT_RECORD:
        modules = sorted({str(i.path) for i in dropped})
        Path(SERIAL_LEFT_RECORD).write_text(
            "".join(f"{line}\n" for line in [str(len(dropped)), *modules]), encoding="utf-8"
        )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The serial part of a pass collects only the modules the parallel part named in
    ``SERIAL_LEFT_RECORD`` (when it wrote one): other test modules are not imported."""
    is_test_module = collection_path.name.startswith("test_") and collection_path.suffix == ".py"
    if not (is_test_module and SERIAL_LEFT_RECORD and config.getoption("serial_tests") == "only"):
        return None
    record = Path(SERIAL_LEFT_RECORD)
    lines = record.read_text(encoding="utf-8").splitlines() if record.is_file() else []
    if not lines:
        return None  # no parallel part wrote it: collect as usual
    return str(collection_path) not in lines[1:] or None


def _leave_out_what_the_sqlite_pass_covered(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    no_database = _no_database_in_sqlite_pass()
    done = [
        i
        for i in items
        if i.get_closest_marker("postgres")
        or "any_ws" in i.fixturenames
        or not DATABASE_FIXTURES.intersection(i.fixturenames)
        or i.nodeid in no_database
    ]
    if done:
        config.hook.pytest_deselected(items=done)
        left = set(map(id, done))
        items[:] = [i for i in items if id(i) not in left]
    for item in items:
        marker = item.get_closest_marker("sqlite_only")
        if marker is not None:
            item.add_marker(pytest.mark.skip(reason=f"SQLite only: {marker.args[0]}"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """The SQLite pass's record of tests that made no database (``NO_DATABASE_RECORD``)."""
    opened = item.config.stash.setdefault(WORKSPACES_OPENED, [0])
    before = opened[0]
    yield  # raises when the test failed: nothing is recorded then
    if ON_POSTGRES or not NO_DATABASE_RECORD:
        return
    tmp_path = getattr(item, "funcargs", {}).get("tmp_path")
    only_tmp_path = DATABASE_FIXTURES.intersection(item.fixturenames) == {"tmp_path"}
    if not only_tmp_path or not isinstance(tmp_path, Path) or opened[0] != before:
        return
    if next(tmp_path.rglob("*.db"), None) is None:
        with open(NO_DATABASE_RECORD, "a", encoding="utf-8") as record:
            record.write(item.nodeid + "\n")  # one short append: workers do not interleave


def _no_database_in_sqlite_pass() -> frozenset[str]:
    if not NO_DATABASE_RECORD or not Path(NO_DATABASE_RECORD).is_file():
        return frozenset()
    return frozenset(Path(NO_DATABASE_RECORD).read_text(encoding="utf-8").splitlines())


@pytest.fixture
def pg_ws(tmp_path: Path, postgres_databases: DatabasePool) -> Iterator[Workspace]:
    """A workspace on a database of the test PostgreSQL server in the state of
    ``migrated_template`` (put back in that state afterwards)."""
    with postgres_databases.lend() as url:
        workspace = Workspace.open(Settings(home=tmp_path / "ws", database_url=url))
        try:
            yield workspace
        finally:
            workspace.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_ws(request: pytest.FixtureRequest, tmp_path: Path) -> Workspace:
    """The same test on a SQLite file and on PostgreSQL: a feature is done on both."""
    if request.param == "sqlite":
        return request.getfixturevalue("ws")  # type: ignore[no-any-return]
    return request.getfixturevalue("pg_ws")  # type: ignore[no-any-return]


def chromium_path() -> str | None:
    """Chromium's headless build (Debian's ``chromium-headless-shell``, what Playwright itself
    runs headless: the same engine without the desktop browser around it, a third less CPU
    per test here), else the full ``chromium`` in headless mode."""
    for candidate in (
        "/usr/bin/chromium-headless-shell",
        shutil.which("chromium-headless-shell"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and Path(candidate).exists():
            return candidate
    return None


BROWSER_WAIT_MS = 180_000
"""How long a browser test waits for a condition (a text, an element, a response, a page
load) before it fails: only a bound against a hang. It is long because on a busy machine
(load 10-15 on 2 cores) one CPU-second of the server can take ten; a test never waits for a
time, only for a condition, so a long bound costs nothing when things go well."""


@pytest.fixture(scope="session", autouse=True)
def _patient_browser() -> Iterator[None]:
    """Every Playwright wait of the suite (``expect``, and the actions and loads of every page
    of every context, however the test opened it) is bounded by ``BROWSER_WAIT_MS``."""
    from playwright.sync_api import Browser, BrowserContext, Page, expect

    expect.set_options(timeout=BROWSER_WAIT_MS)
    new_context, new_page = Browser.new_context, Browser.new_page

    def patient_context(self: Browser, *args: Any, **kwargs: Any) -> BrowserContext:
        context = new_context(self, *args, **kwargs)
        context.set_default_timeout(BROWSER_WAIT_MS)
        return context

    def patient_page(self: Browser, *args: Any, **kwargs: Any) -> Page:
        page = new_page(self, *args, **kwargs)  # in a context of its own, closed with it
        page.context.set_default_timeout(BROWSER_WAIT_MS)
        return page

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Browser, "new_context", patient_context)
        patch.setattr(Browser, "new_page", patient_page)
        yield


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    path = chromium_path()
    if path is None:
        missing(
            "Chromium not found (Debian package chromium-headless-shell or chromium; "
            "make test installs it)"
        )
    return {**browser_type_launch_args, "executable_path": path, "args": CHROMIUM_ARGS}


def stop_process(process: subprocess.Popen[Any], timeout: float = 15) -> None:
    """Ask a server subprocess to stop (SIGTERM), and kill it if it has not within ``timeout``."""
    process.terminate()
    try:
        process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate(timeout=timeout)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SHUTDOWN_S = 120
"""How long a test server and its job thread may take to stop (a bound against a hang, long
enough for a machine at load 20)."""


class LiveServer:
    """Serves ``create_app(ws)`` with uvicorn in a thread on a loopback port the system picks
    when the server binds (two xdist workers never race for one port)."""

    def __init__(self, ws: Workspace) -> None:
        import uvicorn

        from assay.web import create_app

        config = uvicorn.Config(create_app(ws), host="127.0.0.1", port=0, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.port = 0
        self.url = ""

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start within 60 s")
            time.sleep(0.02)
        self.port = int(self.server.servers[0].sockets[0].getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=SHUTDOWN_S)
        # The app's job thread ends after the server on a busy machine; the test's database is
        # emptied or dropped next, so its last heartbeat must not find it so.
        join_job_threads(SHUTDOWN_S)


@pytest.fixture
def live_server(ws: Workspace) -> Iterator[LiveServer]:
    with LiveServer(ws) as server:
        yield server
