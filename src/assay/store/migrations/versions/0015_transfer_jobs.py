"""Import and export jobs of the web app, kept in the database (``transfer_jobs``): they run
on the job queue, and every server process reads their state, progress and result here.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "transfer_jobs",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("project", sa.String(200), nullable=False),
        sa.Column("format", sa.String(40), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("stage", sa.String(40), nullable=False),
        sa.Column("done", sa.Integer, nullable=False),
        sa.Column("total", sa.Integer, nullable=True),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("file", sa.String(500), nullable=True),
        sa.Column("filename", sa.String(300), nullable=True),
        sa.Column("result", sa.JSON, nullable=True),
        sa.Column("cancel_requested", sa.Boolean, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_transfer_jobs")),
    )
    op.create_index(
        op.f("ix_transfer_jobs_project_created_at"), "transfer_jobs", ["project", "created_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_transfer_jobs_project_created_at", table_name="transfer_jobs")
    op.drop_table("transfer_jobs")
