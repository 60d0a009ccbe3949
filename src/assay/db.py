"""Engines and migrations: the only place that knows which database is behind the URL."""

from __future__ import annotations

from datetime import UTC, datetime
from importlib import resources
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from assay.errors import BackendUnavailable


def create_engine(url: str) -> sa.Engine:
    """An engine with the settings Assay relies on (SQLite: WAL, foreign keys, busy timeout)."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": 30})
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if url.startswith("postgresql"):
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise BackendUnavailable(
                "PostgreSQL needs the psycopg driver: pip install 'assay[postgres]'"
            ) from exc
        return sa.create_engine(url, pool_pre_ping=True)
    raise BackendUnavailable(f"unsupported database URL {url!r}: use sqlite:/// or postgresql://")


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _alembic_config(connection: sa.Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(resources.files("assay") / "migrations"))
    config.attributes["connection"] = connection
    return config


def migrate(engine: sa.Engine) -> None:
    """Bring the schema to the newest revision (a no-op when it already is)."""
    with engine.begin() as connection:
        config = _alembic_config(connection)
        head = ScriptDirectory.from_config(config).get_current_head()
        if MigrationContext.configure(connection).get_current_revision() != head:
            command.upgrade(config, "head")


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; everything Assay stores is UTC."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)
