"""Background jobs: the ``jobs`` table (the in-process queue of a SQLite workspace) and, on
PostgreSQL, procrastinate's schema (its queue, workers and heartbeats).

procrastinate's schema comes from procrastinate itself, not from Assay's code: it belongs to
the installed procrastinate (pinned in pyproject.toml), which must find its own tables as its
version expects them, so it is the one thing here that is read at upgrade time, not copied.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

Timestamp = sa.DateTime(timezone=True)
# procrastinate's objects all start with this prefix (downgrade drops them)
DROP_PROCRASTINATE = """
DO $$
DECLARE thing record;
BEGIN
    FOR thing IN SELECT oid::regprocedure AS name FROM pg_proc
                 WHERE proname LIKE 'procrastinate%' LOOP
        EXECUTE 'DROP FUNCTION IF EXISTS ' || thing.name || ' CASCADE';
    END LOOP;
    FOR thing IN SELECT tablename FROM pg_tables WHERE tablename LIKE 'procrastinate%' LOOP
        EXECUTE 'DROP TABLE IF EXISTS ' || quote_ident(thing.tablename) || ' CASCADE';
    END LOOP;
    FOR thing IN SELECT typname FROM pg_type
                 WHERE typname LIKE 'procrastinate%' AND typtype IN ('e', 'c') LOOP
        EXECUTE 'DROP TYPE IF EXISTS ' || quote_ident(thing.typname) || ' CASCADE';
    END LOOP;
END $$;
"""


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("worker", sa.String(300), nullable=True),
        sa.Column("heartbeat_at", Timestamp, nullable=True),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    op.create_index(op.f("ix_jobs_status_key"), "jobs", ["status", "key"])
    if op.get_bind().dialect.name == "postgresql":
        _run_script(_procrastinate_schema())


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _run_script(DROP_PROCRASTINATE)
    op.drop_index("ix_jobs_status_key", table_name="jobs")
    op.drop_table("jobs")


def _procrastinate_schema() -> str:
    try:
        from procrastinate.schema import SchemaManager
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "a PostgreSQL workspace needs procrastinate for its job queue: install Assay's "
            "'postgres' extra (pip install -e '.[postgres]' in the Assay folder)"
        ) from exc
    return str(SchemaManager.get_schema())


def _run_script(sql: str) -> None:
    """Run a script of many statements as it is (through SQLAlchemy, psycopg would read its
    ``%`` as placeholders)."""
    cursor = op.get_bind().connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(sql)
    finally:
        cursor.close()
