"""LLM suggestions: relevance labels and standalone rewrites waiting for a person's decision.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "suggestions",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("project_id", sa.Integer, nullable=False),
        sa.Column("item_id", sa.String(36), nullable=False),
        sa.Column("turn_ordinal", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("doc_id", sa.String(36), nullable=True),
        sa.Column("start", sa.Integer, nullable=True),
        sa.Column("end", sa.Integer, nullable=True),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("label", sa.String(20), nullable=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("prompt_hash", sa.String(64), nullable=False),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("final_text", sa.Text, nullable=True),
        sa.Column("created_by", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_by", sa.Integer, nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_suggestions")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_suggestions_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["items.id"],
            name=op.f("fk_suggestions_item_id_items"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["created_by"], ["accounts.id"], name=op.f("fk_suggestions_created_by_accounts")
        ),
        sa.ForeignKeyConstraint(
            ["decided_by"], ["accounts.id"], name=op.f("fk_suggestions_decided_by_accounts")
        ),
    )
    op.create_index(
        op.f("ix_suggestions_item_id_turn_ordinal"), "suggestions", ["item_id", "turn_ordinal"]
    )
    op.create_index(
        op.f("ix_suggestions_project_id_kind_state"),
        "suggestions",
        ["project_id", "kind", "state"],
    )


def downgrade() -> None:
    op.drop_table("suggestions")
