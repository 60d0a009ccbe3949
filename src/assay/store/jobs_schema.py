"""The table of the in-process job queue (a SQLite workspace's ``assay.jobs.sqlite_queue``).

On PostgreSQL it stays empty: procrastinate keeps its own tables (created by migration 0010).
"""

from __future__ import annotations

import sqlalchemy as sa

from assay.store.schema import Timestamp, metadata

jobs = sa.Table(
    "jobs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("kind", sa.String(40), nullable=False),
    # at most one job per key is queued or running (an experiment has one run at a time)
    sa.Column("key", sa.String(200), nullable=False),
    sa.Column("payload", sa.JSON, nullable=False),
    # todo, doing or failed; a finished or cancelled job's row is deleted
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("worker", sa.String(300), nullable=True),  # host:pid of the process running it
    sa.Column("heartbeat_at", Timestamp, nullable=True),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
    sa.Index(None, "status", "key"),
)
