"""The tables of background jobs: the in-process queue of a SQLite workspace
(``assay.jobs.sqlite_queue``), and the state of import and export jobs on either database.

On PostgreSQL ``jobs`` stays empty: procrastinate keeps its own tables (created by migration
0010). ``transfer_jobs`` (migration 0015) is what every server process reads to show an import
or export: its state, progress and result.
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

job_workers = sa.Table(
    "job_workers",
    metadata,
    # host:pid of a process that runs jobs (a server with jobs on, or `assay worker`)
    sa.Column("name", sa.String(300), primary_key=True),
    sa.Column("role", sa.String(20), nullable=False),  # server or worker
    sa.Column("started_at", Timestamp, nullable=False),
    sa.Column("heartbeat_at", Timestamp, nullable=False),
)

transfer_jobs = sa.Table(
    "transfer_jobs",
    metadata,
    # a random hex id: it is in URLs of the web API (``/transfer/jobs/<id>``)
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("kind", sa.String(20), nullable=False),  # import or export
    # the project of the URL that started it, by name (a replacing import swaps the row)
    sa.Column("project", sa.String(200), nullable=False),
    sa.Column("format", sa.String(40), nullable=False),
    # running (queued while the stage is "queued"), done, failed or cancelled
    sa.Column("state", sa.String(20), nullable=False),
    sa.Column("stage", sa.String(40), nullable=False),
    sa.Column("done", sa.Integer, nullable=False),
    sa.Column("total", sa.Integer, nullable=True),
    sa.Column("message", sa.Text, nullable=False),
    # relative to the workspace folder: an import's upload, an export's output once written
    sa.Column("file", sa.String(500), nullable=True),
    sa.Column("filename", sa.String(300), nullable=True),  # the name the user knows it by
    # an import's report (written in its last batch) or an export's summary
    sa.Column("result", sa.JSON, nullable=True),
    sa.Column("cancel_requested", sa.Boolean, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),  # grows on every change
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
    sa.Index(None, "project", "created_at"),
)
