"""Production candidates: imported questions, their near-duplicate groups and topic clusters.

Revision ID: 0023
Revises: 0022
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

Timestamp = sa.DateTime(timezone=True)


def _project() -> sa.Column[int]:
    return sa.Column(
        "project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False
    )


def upgrade() -> None:
    op.create_table(
        "candidate_imports",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _project(),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("shape", sa.String(20), nullable=False),
        sa.Column("lines", sa.Integer, nullable=False),
        sa.Column("stored", sa.Integer, nullable=False),
        sa.Column("skipped", sa.Integer, nullable=False),
        sa.Column("report", sa.JSON, nullable=False),
        sa.Column("created_by", sa.Integer, sa.ForeignKey("accounts.id"), nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
    )
    op.create_table(
        "candidates",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _project(),
        sa.Column(
            "import_id",
            sa.Integer,
            sa.ForeignKey("candidate_imports.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("line", sa.Integer, nullable=False),
        sa.Column("session", sa.String(200), nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("norm", sa.Text, nullable=False),
        sa.Column("answer", sa.Text, nullable=False),
        sa.Column("passages", sa.JSON, nullable=False),
        sa.Column("feedback", sa.SmallInteger, nullable=True),
        sa.Column("asked_at", Timestamp, nullable=True),
        sa.Column("group_id", sa.Integer, nullable=True),
        sa.Column("item_id", sa.String(36), sa.ForeignKey("items.id", ondelete="SET NULL")),
        sa.Column("extra", sa.JSON, nullable=False),
    )
    op.create_index("ix_candidates_project_id_group_id", "candidates", ["project_id", "group_id"])
    op.create_index(
        "ix_candidates_project_id_session_turn", "candidates", ["project_id", "session", "turn"]
    )
    op.create_index("ix_candidates_import_id", "candidates", ["import_id"])
    op.create_index("ix_candidates_item_id", "candidates", ["item_id"])
    op.create_table(
        "candidate_groups",
        _project(),
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("negative", sa.Integer, nullable=False),
        sa.Column("positive", sa.Integer, nullable=False),
        sa.Column("cluster", sa.Integer, nullable=False),
        sa.Column("documents", sa.JSON, nullable=False),
        sa.Column("multi_turn", sa.Boolean, nullable=False),
        sa.Column("item_id", sa.String(36), sa.ForeignKey("items.id", ondelete="SET NULL")),
        sa.PrimaryKeyConstraint("project_id", "id"),
    )
    op.create_index(
        "ix_candidate_groups_project_id_cluster", "candidate_groups", ["project_id", "cluster"]
    )
    op.create_table(
        "candidate_clusters",
        _project(),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("groups", sa.Integer, nullable=False),
        sa.Column("questions", sa.Integer, nullable=False),
        sa.Column("centroid", sa.JSON, nullable=False),
        sa.PrimaryKeyConstraint("project_id", "number"),
    )


def downgrade() -> None:
    op.drop_table("candidate_clusters")
    op.drop_table("candidate_groups")
    op.drop_index("ix_candidates_item_id", table_name="candidates")
    op.drop_index("ix_candidates_import_id", table_name="candidates")
    op.drop_index("ix_candidates_project_id_session_turn", table_name="candidates")
    op.drop_index("ix_candidates_project_id_group_id", table_name="candidates")
    op.drop_table("candidates")
    op.drop_table("candidate_imports")
