"""Model traffic: a response cache shared by every machine of a workspace, and leases of
endpoint slots that bound the requests in flight to one endpoint over all worker processes.

Revision ID: 0024
Revises: 0023
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "llm_responses",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("project_id", sa.Integer, nullable=True),
        sa.Column("endpoint", sa.String(500), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("reply", sa.JSON, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_llm_responses")),
        sa.UniqueConstraint("key", name=op.f("uq_llm_responses_key")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_llm_responses_project_id_projects"),
            ondelete="CASCADE",
        ),
    )
    op.create_index(op.f("ix_llm_responses_project_id"), "llm_responses", ["project_id"])
    op.create_table(
        "endpoint_slots",
        sa.Column("endpoint", sa.String(500), nullable=False),
        sa.Column("slot", sa.Integer, nullable=False),
        sa.Column("token", sa.String(36), nullable=False),
        sa.Column("holder", sa.String(300), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("endpoint", "slot", name=op.f("pk_endpoint_slots")),
    )


def downgrade() -> None:
    op.drop_table("endpoint_slots")
    op.drop_index(op.f("ix_llm_responses_project_id"), table_name="llm_responses")
    op.drop_table("llm_responses")
