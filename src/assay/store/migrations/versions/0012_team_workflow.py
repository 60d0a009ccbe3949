"""The team workflow (issue 14): assignments, reviews, comments, frozen dataset versions; an
item's ``copy_of`` (an annotator's own copy under overlap) and the dataset version an
experiment ran on.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

Timestamp = sa.DateTime(timezone=True)


def _project_id() -> sa.Column[int]:
    return sa.Column("project_id", sa.Integer, nullable=False)


def _item_id() -> sa.Column[str]:
    return sa.Column("item_id", sa.String(36), nullable=False)


def _project_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["project_id"],
        ["projects.id"],
        name=op.f(f"fk_{table}_project_id_projects"),
        ondelete="CASCADE",
    )


def _item_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["item_id"], ["items.id"], name=op.f(f"fk_{table}_item_id_items"), ondelete="CASCADE"
    )


def _account_fk(table: str, column: str, ondelete: str | None = None) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column],
        ["accounts.id"],
        name=op.f(f"fk_{table}_{column}_accounts"),
        ondelete=ondelete,
    )


def upgrade() -> None:
    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        _project_id(),
        _item_id(),
        sa.Column("task", sa.String(20), nullable=False),
        sa.Column("account_id", sa.Integer, nullable=True),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("holder_id", sa.Integer, nullable=True),
        sa.Column("locked_until", Timestamp, nullable=True),
        sa.Column("assigned_by", sa.Integer, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("done_at", Timestamp, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_assignments")),
        _project_fk("assignments"),
        _item_fk("assignments"),
        _account_fk("assignments", "account_id", "CASCADE"),
        _account_fk("assignments", "holder_id", "SET NULL"),
        _account_fk("assignments", "assigned_by"),
    )
    op.create_index(
        op.f("ix_assignments_project_id_task_account_id_state_position"),
        "assignments",
        ["project_id", "task", "account_id", "state", "position"],
    )
    op.create_index(op.f("ix_assignments_item_id"), "assignments", ["item_id"])
    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        _project_id(),
        _item_id(),
        sa.Column("reviewer_id", sa.Integer, nullable=False),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("submitted_version", sa.Integer, nullable=False),
        sa.Column("changes", sa.JSON, nullable=False),
        sa.Column("at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reviews")),
        _project_fk("reviews"),
        _item_fk("reviews"),
        _account_fk("reviews", "reviewer_id"),
    )
    op.create_index(
        op.f("ix_reviews_project_id_item_id_at"), "reviews", ["project_id", "item_id", "at"]
    )
    op.create_table(
        "comments",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        _project_id(),
        _item_id(),
        sa.Column("parent_id", sa.Integer, nullable=True),
        sa.Column("author_id", sa.Integer, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("target", sa.String(20), nullable=False),
        sa.Column("turn", sa.Integer, nullable=True),
        sa.Column("evidence", sa.Integer, nullable=True),
        sa.Column("start", sa.Integer, nullable=True),
        sa.Column("end", sa.Integer, nullable=True),
        sa.Column("quote", sa.Text, nullable=False),
        sa.Column("resolved", sa.Boolean, nullable=False),
        sa.Column("resolved_by", sa.Integer, nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_comments")),
        _project_fk("comments"),
        _item_fk("comments"),
        sa.ForeignKeyConstraint(
            ["parent_id"],
            ["comments.id"],
            name=op.f("fk_comments_parent_id_comments"),
            ondelete="CASCADE",
        ),
        _account_fk("comments", "author_id"),
        _account_fk("comments", "resolved_by"),
    )
    op.create_index(op.f("ix_comments_item_id_created_at"), "comments", ["item_id", "created_at"])
    op.create_table(
        "dataset_versions",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        _project_id(),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("blob", sa.String(64), nullable=False),
        sa.Column("item_count", sa.Integer, nullable=False),
        sa.Column("evidence_count", sa.Integer, nullable=False),
        sa.Column("chunking", sa.String(200), nullable=True),
        sa.Column("summary", sa.JSON, nullable=False),
        sa.Column("author_id", sa.Integer, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dataset_versions")),
        _project_fk("dataset_versions"),
        _account_fk("dataset_versions", "author_id"),
        sa.UniqueConstraint("project_id", "name", name=op.f("uq_dataset_versions_project_id_name")),
    )
    with op.batch_alter_table("items") as batch:
        batch.add_column(sa.Column("copy_of", sa.String(36), nullable=True))
        batch.create_foreign_key(
            op.f("fk_items_copy_of_items"), "items", ["copy_of"], ["id"], ondelete="CASCADE"
        )
        batch.create_index(op.f("ix_items_copy_of"), ["copy_of"])
    with op.batch_alter_table("experiments") as batch:
        batch.add_column(sa.Column("dataset_version_id", sa.Integer, nullable=True))
        batch.create_foreign_key(
            op.f("fk_experiments_dataset_version_id_dataset_versions"),
            "dataset_versions",
            ["dataset_version_id"],
            ["id"],
        )


def downgrade() -> None:
    with op.batch_alter_table("experiments") as batch:
        batch.drop_constraint(
            "fk_experiments_dataset_version_id_dataset_versions", type_="foreignkey"
        )
        batch.drop_column("dataset_version_id")
    with op.batch_alter_table("items") as batch:
        batch.drop_index("ix_items_copy_of")
        batch.drop_constraint("fk_items_copy_of_items", type_="foreignkey")
        batch.drop_column("copy_of")
    for table in ("dataset_versions", "comments", "reviews", "assignments"):
        op.drop_table(table)
