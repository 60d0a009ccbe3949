"""Migrations from an empty database, on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from assay.people.actors import acting_account
from assay.records import Evidence, Item, Turn
from assay.store import (  # their tables join the metadata
    candidates_schema,  # noqa: F401
    endpoint_schema,  # noqa: F401
    file_schema,  # noqa: F401
    invite_schema,  # noqa: F401
    jobs_schema,  # noqa: F401
    judging_schema,  # noqa: F401
    llm_schema,  # noqa: F401
    review_schema,  # noqa: F401
    suggestion_schema,  # noqa: F401
)
from assay.store.db import create_engine, migrate, utcnow
from assay.store.projects import create_project, list_projects
from assay.store.schema import events, metadata
from assay.store.settings import Settings
from assay.store.workspace import Workspace


def ours(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
    """Not procrastinate's tables (PostgreSQL): its own schema, applied as it ships."""
    table = obj.name if type_ == "table" else getattr(getattr(obj, "table", None), "name", "")
    return not str(table).startswith("procrastinate_")


def assert_schema_matches(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"include_object": ours})
        diff = compare_metadata(context, metadata)
    assert diff == [], f"migrations and schema.py disagree: {diff}"


@pytest.mark.sqlite_only("migrates a SQLite file (WAL, foreign keys); the PostgreSQL twin is below")
def test_sqlite_migrates_from_empty_and_matches_schema(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'a.db'}")
    migrate(engine)
    assert_schema_matches(engine)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        revision = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
    assert revision is not None
    migrate(engine)  # second run is a no-op
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM alembic_version").scalar() == 1


def test_workspace_reopens_with_data(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "ws")
    with Workspace.open(settings) as ws:
        create_project(ws, "kept", "de")
    with Workspace.open(settings) as ws:
        assert [(p.name, p.language) for p in list_projects(ws)] == [("kept", "de")]
    on_sqlite = settings.resolved_database_url().startswith("sqlite")
    assert (tmp_path / "ws" / "assay.db").exists() == on_sqlite


@pytest.mark.postgres
def test_postgres_migrates_from_empty_and_matches_schema(postgres_url: str) -> None:
    admin = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    name = f"assay_test_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = sa.make_url(postgres_url).set(database=name)
    engine = create_engine(url.render_as_string(hide_password=False))
    try:
        migrate(engine)
        assert_schema_matches(engine)
        with engine.connect() as conn:
            tables = set(sa.inspect(conn).get_table_names())
        assert {"projects", "documents", "chunkings", "chunks", "alembic_version"} <= tables
        assert {"jobs", "procrastinate_jobs", "procrastinate_workers"} <= tables
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE "{name}"')
        admin.dispose()


@pytest.mark.postgres
def test_postgres_keeps_the_item_copies_of_events_uncompressed(pg_ws: Workspace) -> None:
    """An event's copy of an item (2-5 kB) stays in its row as written: compressing each one
    cost an import more of the server's time than inserting it (migration 0020)."""
    project = create_project(pg_ws, "copies")
    passage = "A passage of some length, written out in full, sentence by sentence. " * 40
    item = Item(turns=[Turn(query="Where?", answer="Here.", evidence=[Evidence(text=passage)])])
    with pg_ws.engine.begin() as conn:
        actor = acting_account(pg_ws, conn=conn)
        conn.execute(
            events.insert(),
            {
                "project_id": project.id,
                "actor_id": actor,
                "action": "create",
                "after": item,
                "at": utcnow(),
            },
        )
    with pg_ws.engine.connect() as conn:
        options = conn.exec_driver_sql(
            "SELECT reloptions FROM pg_class WHERE relname = 'events'"
        ).scalar()
        size, compression = conn.exec_driver_sql(
            "SELECT octet_length(after::text), pg_column_compression(after) FROM events"
        ).one()
    assert "toast_tuple_target=8160" in options
    assert size > 2500 and compression is None
