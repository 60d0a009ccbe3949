"""The tests' PostgreSQL databases (tests/pg_databases.py): a database a test gave back is lent
again only in the template's state, and one whose schema a test changed is dropped."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from assay.people.accounts import create_account
from assay.store.db import create_engine, migrate
from assay.store.projects import create_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from tests.pg_databases import DatabasePool, fresh_postgres_database

pytestmark = pytest.mark.postgres


@pytest.fixture
def pool(postgres_url: str, migrated_template: str) -> Iterator[DatabasePool]:
    pool = DatabasePool(postgres_url, migrated_template)
    yield pool
    pool.close()


def state(url: str) -> dict[str, object]:
    """Every row of every table, and the last value each sequence gave (None before the
    first: asking ``nextval`` would advance it, whatever the transaction)."""
    engine = sa.create_engine(url, poolclass=sa.NullPool)
    try:
        with engine.connect() as conn:
            tables = conn.exec_driver_sql(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
            ).scalars()
            found: dict[str, object] = {
                table: sorted(
                    conn.exec_driver_sql(f'SELECT row_to_json(t)::text FROM "{table}" t').scalars()
                )
                for table in list(tables)
            }
            sequences = conn.exec_driver_sql(
                "SELECT sequencename, last_value FROM pg_sequences"
                " WHERE schemaname = 'public' ORDER BY 1"
            ).all()
            found.update({name: last_value for name, last_value in sequences})
    finally:
        engine.dispose()
    return found


def test_a_used_database_comes_back_in_the_template_state(
    pool: DatabasePool, tmp_path: Path
) -> None:
    with pool.lend() as url:
        fresh = state(url)
        workspace = Workspace.open(Settings(home=tmp_path / "a", database_url=url))
        create_project(workspace, "ferries", "en")
        create_account(workspace, "ana", "a long password 123")
        workspace.close()
        assert state(url) != fresh  # rows written, sequences advanced
    with pool.lend() as again:
        assert again == url  # the same database, lent again
        assert state(again) == fresh
        workspace = Workspace.open(Settings(home=tmp_path / "b", database_url=again))
        assert create_project(workspace, "ferries", "en").id == 1
        workspace.close()


def test_a_database_whose_schema_changed_is_dropped(pool: DatabasePool, postgres_url: str) -> None:
    with pool.lend() as url:
        engine = sa.create_engine(url, poolclass=sa.NullPool)
        with engine.begin() as conn:
            conn.exec_driver_sql("ALTER TABLE projects ADD COLUMN extra text")
        engine.dispose()
    with pool.lend() as other:
        assert other != url
    name = sa.make_url(url).database
    admin = sa.create_engine(postgres_url, poolclass=sa.NullPool)
    with admin.connect() as conn:
        left = conn.execute(
            sa.text("SELECT count(*) FROM pg_database WHERE datname = :n"), {"n": name}
        )
        assert left.scalar() == 0
    admin.dispose()


def test_connections_left_open_do_not_keep_a_database_from_coming_back(
    pool: DatabasePool, tmp_path: Path
) -> None:
    with pool.lend() as url:
        workspace = Workspace.open(Settings(home=tmp_path, database_url=url))
        create_project(workspace, "left open", "en")
        idle = workspace.engine.connect()  # never closed by the test
        idle.exec_driver_sql("SELECT 1")
    with pool.lend() as again:
        assert again == url
        assert state(again)["projects"] == []
    workspace.engine.dispose()


def test_a_user_who_is_not_a_superuser_gets_a_new_copy_each_time(postgres_url: str) -> None:
    """Emptying needs ``session_replication_role``, a superuser's setting: for another user
    the pool drops each database given back and copies the template anew (slower, as clean)."""
    role = f"assay_plain_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT", poolclass=sa.NullPool)
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE ROLE {role} LOGIN CREATEDB")
    plain = sa.make_url(postgres_url).set(username=role).render_as_string(hide_password=False)
    try:
        with fresh_postgres_database(plain) as template_url:  # the plain user owns it
            engine = create_engine(template_url)
            migrate(engine)
            engine.dispose()
            pool = DatabasePool(plain, str(sa.make_url(template_url).database))
            with pool.lend() as first:
                pass
            with pool.lend() as second:
                assert second != first
                assert pool.made == [sa.make_url(second).database]  # the first was dropped
            assert pool.made == [] and pool.idle == []
            pool.close()
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP ROLE {role}")
        admin.dispose()
