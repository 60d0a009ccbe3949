"""Experiments: their task snapshots and per-task results.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "experiments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("mode", sa.String(length=20), nullable=False),
        sa.Column("selection", sa.JSON(), nullable=False),
        sa.Column("pipelines", sa.JSON(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("stop_requested", sa.Boolean(), nullable=False),
        sa.Column("task_count", sa.Integer(), nullable=False),
        sa.Column("done_count", sa.Integer(), nullable=False),
        sa.Column("error_count", sa.Integer(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_experiments_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_experiments")),
        sa.UniqueConstraint("project_id", "name", name=op.f("uq_experiments_project_id_name")),
    )
    op.create_table(
        "experiment_tasks",
        sa.Column("experiment_id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.String(length=300), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(length=36), nullable=False),
        sa.Column("query_type", sa.String(length=100), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["experiment_id"],
            ["experiments.id"],
            name=op.f("fk_experiment_tasks_experiment_id_experiments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("experiment_id", "task_id", name=op.f("pk_experiment_tasks")),
    )
    op.create_index(
        op.f("ix_experiment_tasks_experiment_id_ordinal"),
        "experiment_tasks",
        ["experiment_id", "ordinal"],
        unique=False,
    )
    op.create_table(
        "experiment_results",
        sa.Column("experiment_id", sa.Integer(), nullable=False),
        sa.Column("pipeline", sa.String(length=200), nullable=False),
        sa.Column("task_id", sa.String(length=300), nullable=False),
        sa.Column("retrieved", sa.JSON(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("contexts", sa.JSON(), nullable=False),
        sa.Column("timings", sa.JSON(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["experiment_id"],
            ["experiments.id"],
            name=op.f("fk_experiment_results_experiment_id_experiments"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "experiment_id", "pipeline", "task_id", name=op.f("pk_experiment_results")
        ),
    )


def downgrade() -> None:
    op.drop_table("experiment_results")
    op.drop_index(op.f("ix_experiment_tasks_experiment_id_ordinal"), table_name="experiment_tasks")
    op.drop_table("experiment_tasks")
    op.drop_table("experiments")
