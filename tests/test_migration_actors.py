"""Migration 0009: a workspace at revision 0008, whose items, evidence, documents,
experiments and events name their authors in free text, ends with every row pointing at an
account (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command

from assay.people.accounts import USERNAME
from assay.store.db import _alembic_config, create_engine, migrate
from tests.pg_databases import fresh_postgres_database

LONG = "Dr. " + "Ä" * 70 + " Müller-Lüdenscheidt"  # over 64 characters, not ASCII
NOW = datetime(2025, 1, 2, tzinfo=UTC)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def old_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    """An engine on a database migrated to revision 0008 only."""
    if request.param == "sqlite":
        engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
        yield from _at_0008(engine)
        return
    with fresh_postgres_database(request.getfixturevalue("postgres_url")) as url:
        yield from _at_0008(create_engine(url))


def _at_0008(engine: sa.Engine) -> Iterator[sa.Engine]:
    with engine.begin() as conn:
        command.upgrade(_alembic_config(conn), "0008")
    try:
        yield engine
    finally:
        engine.dispose()


def _fill(conn: sa.Connection) -> None:
    """Rows as 0008 stored them: authors by name."""
    sql = conn.execute
    sql(
        sa.text(
            "INSERT INTO accounts (username, display_name, password_hash, is_admin, disabled,"
            " origin, failed_logins, created_at, updated_at) VALUES ('alice', 'Alice A.',"
            " 'x', false, false, 'created', 0, :t, :t)"
        ),
        {"t": NOW},
    )
    sql(
        sa.text(
            "INSERT INTO projects (name, language, settings, created_at, updated_at,"
            " corpus_version) VALUES ('p', 'en', '{}', :t, :t, 0)"
        ),
        {"t": NOW},
    )
    sql(
        sa.text(
            "INSERT INTO documents (id, project_id, name, media_type, size, sha256, text,"
            " parse_info, notes, metadata, author, created_at, updated_at) VALUES ('d1', 1,"
            " 'a.txt', 'text/plain', 5, 'x', 'hello', '{}', '', '{}', '', :t, :t)"
        ),
        {"t": NOW},
    )
    for number, author in enumerate(["alice", "", "Zoë", LONG, "Zoë"], 1):
        sql(
            sa.text(
                "INSERT INTO items (id, project_id, kind, status, origin, query, query_type,"
                " turn_count, evidence_count, notes, extra, author, version, search_text,"
                " created_at, updated_at) VALUES (:id, 1, 'qa', 'draft', 'human', 'q',"
                " 'fact_single', 1, 1, '', '{}', :author, 1, '', :t, :t)"
            ),
            {"id": f"i{number}", "author": author, "t": NOW},
        )
        sql(
            sa.text(
                "INSERT INTO turns (id, item_id, ordinal, query, rewrite, query_type,"
                " enrichments, answer, alternatives, original_answer, generation, retrieved)"
                " VALUES (:n, :id, 0, 'q', '', 'fact_single', '{}', '', '[]', '', '{}', '[]')"
            ),
            {"n": number, "id": f"i{number}"},
        )
        sql(
            sa.text(
                'INSERT INTO evidence (turn_id, ordinal, doc_id, start, "end", text, label,'
                " group_no, origin, anchor, author, created_at) VALUES (:n, 0, 'd1', 0, 5,"
                " 'hello', 'relevant', 1, 'selected', 'ok', :author, :t)"
            ),
            {"n": number, "author": "Alice A." if number == 1 else "reviewer two", "t": NOW},
        )
        sql(
            sa.text(
                "INSERT INTO events (project_id, item_id, actor, action, at) VALUES"
                " (1, :id, :author, 'create', :t)"
            ),
            {"id": f"i{number}", "author": author, "t": NOW},
        )
    sql(
        sa.text(
            "INSERT INTO experiments (project_id, name, mode, selection, pipelines, metrics,"
            " status, stop_requested, task_count, done_count, error_count, message, author,"
            " created_at, updated_at) VALUES (1, 'e', 'retrieval', '{}', '[]', '[]', 'done',"
            " false, 0, 0, 0, '', 'assay-demo', :t, :t)"
        ),
        {"t": NOW},
    )


def _accounts(conn: sa.Connection) -> dict[int, sa.Row]:
    rows = conn.execute(sa.text("SELECT * FROM accounts")).all()
    return {row.id: row for row in rows}


def test_authors_become_accounts(old_engine: sa.Engine) -> None:
    with old_engine.begin() as conn:
        _fill(conn)
    migrate(old_engine)
    with old_engine.connect() as conn:
        accounts = _accounts(conn)
        by_name = {row.username: row for row in accounts.values()}
        items = dict(conn.execute(sa.text("SELECT id, author_id FROM items")).all())
        evidence = dict(conn.execute(sa.text("SELECT turn_id, author_id FROM evidence")).all())
        events = dict(conn.execute(sa.text("SELECT item_id, actor_id FROM events")).all())
        document = conn.execute(sa.text("SELECT author_id FROM documents")).scalar()
        experiment = conn.execute(sa.text("SELECT author_id FROM experiments")).scalar()
        columns = {c["name"] for c in sa.inspect(conn).get_columns("items")}
        turns = conn.execute(sa.text("SELECT count(*) FROM turns")).scalar()
    assert turns == 5  # copying the items table on SQLite deleted none of their turns
    alice, local = by_name["alice"].id, by_name["local"].id
    zoe = next(row for row in accounts.values() if row.display_name == "Zoë")
    long_one = next(row for row in accounts.values() if row.display_name == LONG)
    assert items == {"i1": alice, "i2": local, "i3": zoe.id, "i4": long_one.id, "i5": zoe.id}
    assert events == items
    assert document == local  # the old default (empty) name is the local owner
    assert evidence[1] == alice  # a display name finds its account
    assert accounts[experiment].display_name == "assay-demo"
    imported = [row for row in accounts.values() if row.origin == "imported"]
    assert sorted(row.display_name for row in imported) == sorted(
        ["Zoë", LONG, "reviewer two", "assay-demo"]
    )
    for row in imported:
        assert USERNAME.match(row.username), row.username
        assert row.password_hash is None  # cannot sign in
    assert zoe.username == "zoe"
    assert "author" not in columns and "author_id" in columns


def test_an_empty_workspace_migrates(old_engine: sa.Engine) -> None:
    migrate(old_engine)
    with old_engine.connect() as conn:
        assert [row.origin for row in _accounts(conn).values()] == ["local"]
