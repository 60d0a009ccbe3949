"""Engines and migrations: the only place that knows which database is behind the URL."""

from __future__ import annotations

import contextlib
import dataclasses
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import resources
from typing import TYPE_CHECKING, Any, TypeVar, cast

import sqlalchemy as sa

from assay.errors import BackendUnavailable, DatabaseBusy, install_extra
from assay.store.json_columns import json_text

if TYPE_CHECKING:
    from alembic.config import Config

R = TypeVar("R")

BACKGROUND_CONNECTIONS = 8
"""Connections a process may open beyond one per request thread: background imports, exports
and experiment runs (threads of their own), and a request that holds two at once."""


def create_engine(url: str, threads: int = 16) -> sa.Engine:
    """An engine with the settings Assay relies on (SQLite: WAL, foreign keys, busy timeout).

    The pool keeps up to one connection per request thread (``threads``, ASSAY_THREADS) and
    opens up to :data:`BACKGROUND_CONNECTIONS` more, so a request never waits for a connection
    (SQLAlchemy's default, 5 + 10, let the 16th busy thread wait for another's).
    """
    pool: dict[str, Any] = {"pool_size": threads, "max_overflow": BACKGROUND_CONNECTIONS}
    pool["json_serializer"] = json_text  # JSON columns take records as they are
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": 30}, **pool)
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        sa.event.listen(engine, "handle_error", _sqlite_busy)
        return engine
    if url.startswith("postgresql"):
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise BackendUnavailable(
                f"PostgreSQL needs the psycopg driver: {install_extra('postgres')}"
            ) from exc
        engine = sa.create_engine(url, pool_recycle=RECYCLE_SECONDS, **pool)
        sa.event.listen(engine.pool, "checkin", _returned)
        sa.event.listen(engine.pool, "checkout", _ping_if_idle)
        return engine
    raise BackendUnavailable(f"unsupported database URL {url!r}: use sqlite:/// or postgresql://")


IDLE_PING_SECONDS = 10.0
"""A pooled PostgreSQL connection unused for this long is pinged before it is handed out."""
RECYCLE_SECONDS = 3600
"""A pooled PostgreSQL connection older than this is closed and opened anew when taken."""


def _returned(_dbapi_connection: Any, record: Any) -> None:
    record.info["returned_at"] = time.monotonic()


def _ping_if_idle(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
    """Ping a connection that sat in the pool for :data:`IDLE_PING_SECONDS` or more (a
    server restart or a firewall may have dropped it meanwhile); a dead one is replaced by
    the pool (``DisconnectionError``: SQLAlchemy's own recipe).

    Not every checkout, as ``pool_pre_ping`` does: under a team's load a connection is
    taken again within milliseconds and that ping was a round trip per request (often
    several). A connection dropped while in steady use is found by the statement that fails
    on it: SQLAlchemy then replaces every connection opened before the failure, and the
    access guard, every request's first use of the database, tries once more
    (:func:`retry_dropped`)."""
    returned = record.info.get("returned_at")
    if returned is None or time.monotonic() - returned < IDLE_PING_SECONDS:
        return
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("SELECT 1")
    except Exception as exc:  # the driver's error for a closed connection, whatever it is
        raise sa.exc.DisconnectionError(f"a pooled connection was dropped: {exc}") from exc
    finally:
        with contextlib.suppress(Exception):
            cursor.close()
    if not dbapi_connection.autocommit:
        dbapi_connection.rollback()  # the ping began a transaction: end it


def retry_dropped(work: Callable[[], R]) -> R:
    """Run ``work`` (reads or idempotent writes); if it failed because its database
    connection had been dropped (the server restarted), run it once more on a new one."""
    try:
        return work()
    except sa.exc.DBAPIError as exc:
        if not exc.connection_invalidated:
            raise
    return work()


@contextmanager
def autocommit(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A connection of its own whose every statement commits by itself, for reads and
    single-statement writes that need no transaction around them (the access guard, the
    editor's reads). On PostgreSQL this spares a BEGIN and a ROLLBACK round trip, and
    psycopg drops its prepared statements at every ROLLBACK; under READ COMMITTED each
    statement saw a snapshot of its own anyway. SQLite is left as it is (its driver begins
    a transaction only before a write)."""
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn.execution_options(isolation_level="AUTOCOMMIT")
        yield conn
        conn.commit()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_busy(context: sa.engine.ExceptionContext) -> None:
    """A write that waited the whole busy timeout for SQLite's one write lock is a clear
    "busy, try again" (503 on the web), not an internal error."""
    original = context.original_exception
    if "database is locked" in str(original) or "database is busy" in str(original):
        raise DatabaseBusy(
            "the database is busy with another write (a long import or indexing run?); "
            "nothing was changed: try again in a moment"
        ) from original


def _alembic_config(connection: sa.Connection) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(resources.files("assay.store") / "migrations"))
    config.attributes["connection"] = connection
    return config


def migrate(engine: sa.Engine) -> None:
    """Bring the schema to the newest revision (a no-op when it already is).

    Loading Alembic takes ~0.3 s, longer than a quick CLI command should take, so the
    stored revision is first compared with the newest file's (:func:`head_revision`);
    Alembic is loaded only when they differ.
    """
    head = head_revision()
    if head is not None and _stored_revision(engine) == head:
        return
    from alembic import command
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    with (
        engine.connect() as connection,
        _sqlite_foreign_keys_off(connection),
        connection.begin(),
    ):
        config = _alembic_config(connection)
        head = ScriptDirectory.from_config(config).get_current_head()
        if MigrationContext.configure(connection).get_current_revision() != head:
            command.upgrade(config, "head")
        if connection.dialect.name == "sqlite":
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").all()
            if broken:
                raise RuntimeError(f"the migration left broken references: {broken[:5]}")


@contextmanager
def _sqlite_foreign_keys_off(connection: sa.Connection) -> Iterator[None]:
    """SQLite changes a column by copying its table and dropping the old one; with foreign
    keys on, that drop would delete the rows referring to it (turns of items). SQLite's own
    recipe: keys off outside the transaction, then ``foreign_key_check`` before committing."""
    if connection.dialect.name != "sqlite":
        yield
        return
    connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
    connection.commit()
    try:
        yield
    finally:
        connection.exec_driver_sql("PRAGMA foreign_keys=ON")
        connection.commit()


def head_revision() -> str | None:
    """The newest revision in ``migrations/versions``: the one no other revision names as
    its ``down_revision``; None when that is not exactly one (then Alembic decides)."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for file in (resources.files("assay.store") / "migrations" / "versions").iterdir():
        if not file.name.endswith(".py"):
            continue
        text = file.read_text(encoding="utf-8")
        found = re.search(r'^revision\s*=\s*"([^"]+)"', text, re.M)
        if found:
            revisions.add(found.group(1))
        parents.update(re.findall(r'^down_revision\s*=\s*"([^"]+)"', text, re.M))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def _stored_revision(engine: sa.Engine) -> str | None:
    with engine.connect() as connection:
        if not sa.inspect(connection).has_table("alembic_version"):
            return None
        rows = connection.execute(sa.text("SELECT version_num FROM alembic_version")).all()
    return str(rows[0][0]) if len(rows) == 1 else None


@contextmanager
def transaction(engine: sa.Engine, conn: sa.Connection | None) -> Iterator[sa.Connection]:
    """Where a write function writes: the caller's ``conn`` when it passes one (an import, or
    a route making several writes, commits or rolls back them all as one), else a
    transaction of its own on ``engine`` that commits when the block ends."""
    if conn is not None:
        yield conn
        return
    with engine.begin() as own:
        yield own


@contextmanager
def reading(engine: sa.Engine, conn: sa.Connection | None) -> Iterator[sa.Connection]:
    """Where a read function reads: the caller's ``conn`` (so an import sees its own
    uncommitted rows), else a connection of its own."""
    if conn is not None:
        yield conn
        return
    with engine.connect() as own:
        yield own


@contextmanager
def read_only(engine: sa.Engine, conn: sa.Connection | None) -> Iterator[sa.Connection]:
    """:func:`reading` for functions that never write: a connection of their own is an
    :func:`autocommit` one (no transaction round trips on PostgreSQL)."""
    if conn is not None:
        yield conn
        return
    with autocommit(engine) as own:
        yield own


def driver_rows(conn: sa.Connection, statement: sa.Select[Any]) -> list[Any]:
    """Rows as the driver hands them over, without SQLAlchemy's per-row processing (bulk
    reads of 100k items): only for columns of plain strings and numbers, which every driver
    returns alike; JSON read through ``sa.cast(column, sa.Text)``."""
    compiled = statement.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.params
    args: Any = params
    if compiled.positional:
        args = tuple(params[name] for name in compiled.positiontup or ())
    cursor = conn.connection.cursor()
    try:
        cursor.execute(str(compiled), args)
        return list(cursor.fetchall())
    finally:
        cursor.close()


def record_from_row(record: type[R], row: Any, **given: Any) -> R:
    """A record (a dataclass) whose fields are the row's columns of the same names, except
    those ``given`` (converted values, or fields that are not columns)."""
    names = [f.name for f in dataclasses.fields(cast(Any, record)) if f.name not in given]
    return record(**{name: getattr(row, name) for name in names}, **given)


def count_rows(conn: sa.Connection, table: sa.Table, *where: Any) -> int:
    """How many rows of ``table`` match every condition of ``where``."""
    return int(conn.scalar(sa.select(sa.func.count()).select_from(table).where(*where)) or 0)


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; everything Assay stores is UTC."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)
