"""One experiment run over several workers, its budget, and which processes run jobs.

``experiment_shards``: a run splits the experiment's tasks into ranges of task ordinals;
any process running jobs claims one (``worker``, ``heartbeat_at``), runs its missing units
and marks it done. A shard whose worker stopped beating is taken over by another. Each
shard carries what its worker spent (requests, cached ones, tokens, cost) and the units
in flight, so a page sums them for live progress and the budget cap.

``experiments.budget``: the cap of the current run (``{"max_cost_usd", "max_requests"}``),
NULL when none.

``job_workers``: one row per process that runs jobs (a server with jobs on, ``assay
worker``), with a heartbeat, so a queued run can say that no worker is running.

Revision ID: 0026
Revises: 0025
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None

Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "experiment_shards",
        sa.Column(
            "experiment_id",
            sa.Integer,
            sa.ForeignKey("experiments.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("shard", sa.Integer, primary_key=True),
        sa.Column("first_task", sa.Integer, nullable=False),
        sa.Column("end_task", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("worker", sa.String(300), nullable=True),
        sa.Column("heartbeat_at", Timestamp, nullable=True),
        sa.Column("in_flight", sa.Integer, nullable=False),
        sa.Column("units", sa.Integer, nullable=False),
        sa.Column("requests", sa.Integer, nullable=False),
        sa.Column("cached_requests", sa.Integer, nullable=False),
        sa.Column("input_tokens", sa.BigInteger, nullable=False),
        sa.Column("output_tokens", sa.BigInteger, nullable=False),
        sa.Column("cost_usd", sa.Float, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
    )
    with op.batch_alter_table("experiments") as batch:
        batch.add_column(sa.Column("budget", sa.JSON, nullable=True))
    op.create_table(
        "job_workers",
        sa.Column("name", sa.String(300), primary_key=True),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("started_at", Timestamp, nullable=False),
        sa.Column("heartbeat_at", Timestamp, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("job_workers")
    with op.batch_alter_table("experiments") as batch:
        batch.drop_column("budget")
    op.drop_table("experiment_shards")
