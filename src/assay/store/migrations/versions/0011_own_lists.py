"""Items: indexes for one author's list in list order (an annotator's own items).

Annotators' lists keep to their own items (``author_id``) sorted by the time changed or created;
with only (project_id, author_id) the database walked the project's whole time index and
dropped other authors' rows, hundreds of milliseconds on a deep page of a 100k-item project.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index(op.f("ix_items_project_id_author_id"), table_name="items")
    for column in ("updated_at", "created_at"):
        op.create_index(
            op.f(f"ix_items_project_id_author_id_{column}_id"),
            "items",
            ["project_id", "author_id", column, "id"],
        )


def downgrade() -> None:
    for column in ("updated_at", "created_at"):
        op.drop_index(op.f(f"ix_items_project_id_author_id_{column}_id"), table_name="items")
    op.create_index(op.f("ix_items_project_id_author_id"), "items", ["project_id", "author_id"])
