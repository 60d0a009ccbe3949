"""Indexes that cover the items list's ORDER BY (column, id), so deep pages stay fast.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index(op.f("ix_items_project_id_updated_at"), table_name="items")
    op.drop_index(op.f("ix_items_project_id_status"), table_name="items")
    op.create_index(
        op.f("ix_items_project_id_updated_at_id"), "items", ["project_id", "updated_at", "id"]
    )
    op.create_index(
        op.f("ix_items_project_id_created_at_id"), "items", ["project_id", "created_at", "id"]
    )
    op.create_index(
        op.f("ix_items_project_id_status_updated_at_id"),
        "items",
        ["project_id", "status", "updated_at", "id"],
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_items_project_id_status_updated_at_id"), table_name="items")
    op.drop_index(op.f("ix_items_project_id_created_at_id"), table_name="items")
    op.drop_index(op.f("ix_items_project_id_updated_at_id"), table_name="items")
    op.create_index(op.f("ix_items_project_id_status"), "items", ["project_id", "status"])
    op.create_index(op.f("ix_items_project_id_updated_at"), "items", ["project_id", "updated_at"])
