"""Judging mode: topics assigned to judges, per mode.

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "judging_assignments",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("project_id", sa.Integer, nullable=False),
        sa.Column("topic_id", sa.String(200), nullable=False),
        sa.Column("mode", sa.String(20), nullable=False),
        sa.Column("judge_id", sa.Integer, nullable=False),
        sa.Column("assigned_by", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judging_assignments")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_judging_assignments_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["judge_id"],
            ["accounts.id"],
            name=op.f("fk_judging_assignments_judge_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["assigned_by"],
            ["accounts.id"],
            name=op.f("fk_judging_assignments_assigned_by_accounts"),
        ),
        sa.UniqueConstraint(
            "project_id",
            "topic_id",
            "mode",
            "judge_id",
            name=op.f("uq_judging_assignments_project_id_topic_id_mode_judge_id"),
        ),
    )


def downgrade() -> None:
    op.drop_table("judging_assignments")
