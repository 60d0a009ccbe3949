"""Gold items: items, turns, evidence anchored to documents, and the audit trail.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(length=36), nullable=True),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("action", sa.String(length=60), nullable=False),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_events_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
    )
    op.create_index(
        op.f("ix_events_project_id_item_id_at"),
        "events",
        ["project_id", "item_id", "at"],
        unique=False,
    )
    op.create_table(
        "items",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("origin", sa.String(length=40), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("query_type", sa.String(length=100), nullable=False),
        sa.Column("turn_count", sa.Integer(), nullable=False),
        sa.Column("evidence_count", sa.Integer(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("extra", sa.JSON(), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_items_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_items")),
    )
    op.create_index(
        op.f("ix_items_project_id_author"), "items", ["project_id", "author"], unique=False
    )
    op.create_index(
        op.f("ix_items_project_id_query_type"), "items", ["project_id", "query_type"], unique=False
    )
    op.create_index(
        op.f("ix_items_project_id_status"), "items", ["project_id", "status"], unique=False
    )
    op.create_index(
        op.f("ix_items_project_id_updated_at"), "items", ["project_id", "updated_at"], unique=False
    )
    op.create_table(
        "turns",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("item_id", sa.String(length=36), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("rewrite", sa.Text(), nullable=False),
        sa.Column("query_type", sa.String(length=100), nullable=False),
        sa.Column("enrichments", sa.JSON(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("alternatives", sa.JSON(), nullable=False),
        sa.Column("original_answer", sa.Text(), nullable=False),
        sa.Column("generation", sa.JSON(), nullable=False),
        sa.Column("retrieved", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"], ["items.id"], name=op.f("fk_turns_item_id_items"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_turns")),
        sa.UniqueConstraint("item_id", "ordinal", name=op.f("uq_turns_item_id_ordinal")),
    )
    op.create_table(
        "evidence",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("turn_id", sa.Integer(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("doc_id", sa.String(length=36), nullable=True),
        sa.Column("start", sa.Integer(), nullable=True),
        sa.Column("end", sa.Integer(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("label", sa.String(length=20), nullable=False),
        sa.Column("grade", sa.Integer(), nullable=True),
        sa.Column("group_no", sa.Integer(), nullable=False),
        sa.Column("origin", sa.String(length=40), nullable=False),
        sa.Column("anchor", sa.String(length=20), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["doc_id"], ["documents.id"], name=op.f("fk_evidence_doc_id_documents")
        ),
        sa.ForeignKeyConstraint(
            ["turn_id"], ["turns.id"], name=op.f("fk_evidence_turn_id_turns"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_evidence")),
    )
    op.create_index(op.f("ix_evidence_doc_id"), "evidence", ["doc_id"], unique=False)
    op.create_index(
        op.f("ix_evidence_turn_id_ordinal"), "evidence", ["turn_id", "ordinal"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_evidence_turn_id_ordinal"), table_name="evidence")
    op.drop_index(op.f("ix_evidence_doc_id"), table_name="evidence")
    op.drop_table("evidence")
    op.drop_table("turns")
    op.drop_index(op.f("ix_items_project_id_updated_at"), table_name="items")
    op.drop_index(op.f("ix_items_project_id_status"), table_name="items")
    op.drop_index(op.f("ix_items_project_id_query_type"), table_name="items")
    op.drop_index(op.f("ix_items_project_id_author"), table_name="items")
    op.drop_table("items")
    op.drop_index(op.f("ix_events_project_id_item_id_at"), table_name="events")
    op.drop_table("events")
