"""Dashboard and agreement figures cached per change: ``figure_cache`` holds each figure set
as last computed, with the project's change mark at that moment (see
assay.review.figure_cache); every server process and worker reads the same rows.

Revision ID: 0025
Revises: 0024
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "figure_cache",
        sa.Column(
            "project_id",
            sa.Integer,
            sa.ForeignKey("projects.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("mark", sa.String(400), nullable=False),
        sa.Column("value", sa.JSON, nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("project_id", "name"),
    )


def downgrade() -> None:
    op.drop_table("figure_cache")
