"""Judging mode (issue 15): TREC RAG topics, run reports, the documents they cite, and human
judgments of reports, documents and citations.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

Timestamp = sa.DateTime(timezone=True)


def _project(table: str) -> list[Any]:
    return [
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("project_id", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f(f"fk_{table}_project_id_projects"),
            ondelete="CASCADE",
        ),
    ]


def upgrade() -> None:
    op.create_table(
        "judging_topics",
        *_project("judging_topics"),
        sa.Column("topic_id", sa.String(200), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("problem_statement", sa.Text, nullable=False),
        sa.Column("background", sa.Text, nullable=False),
        sa.Column("extra", sa.JSON, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.UniqueConstraint(
            "project_id", "topic_id", name=op.f("uq_judging_topics_project_id_topic_id")
        ),
    )
    op.create_table(
        "judging_reports",
        *_project("judging_reports"),
        sa.Column("topic_id", sa.String(200), nullable=False),
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("team_id", sa.String(200), nullable=False),
        sa.Column("sentences", sa.JSON, nullable=False),
        sa.Column("doc_ids", sa.JSON, nullable=False),
        sa.Column("metadata", sa.JSON, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.UniqueConstraint(
            "project_id",
            "topic_id",
            "run_id",
            name=op.f("uq_judging_reports_project_id_topic_id_run_id"),
        ),
    )
    op.create_table(
        "judging_documents",
        *_project("judging_documents"),
        sa.Column("doc_id", sa.String(500), nullable=False),
        sa.Column("document_id", sa.String(36), nullable=False),
        sa.Column("title", sa.Text, nullable=True),
        sa.Column("url", sa.Text, nullable=True),
        sa.ForeignKeyConstraint(
            ["document_id"],
            ["documents.id"],
            name=op.f("fk_judging_documents_document_id_documents"),
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint(
            "project_id", "doc_id", name=op.f("uq_judging_documents_project_id_doc_id")
        ),
    )
    op.create_table(
        "judgments",
        *_project("judgments"),
        sa.Column("mode", sa.String(20), nullable=False),
        sa.Column("unit_key", sa.Text, nullable=False),
        sa.Column("topic_id", sa.String(200), nullable=False),
        sa.Column("run_id", sa.String(200), nullable=True),
        sa.Column("doc_id", sa.String(500), nullable=True),
        sa.Column("sentence_idx", sa.Integer, nullable=True),
        sa.Column("judge_id", sa.Integer, nullable=False),
        sa.Column("rating", sa.String(200), nullable=False),
        sa.Column("comment", sa.Text, nullable=False),
        sa.Column("spans", sa.JSON, nullable=False),
        sa.Column("report_spans", sa.JSON, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.ForeignKeyConstraint(
            ["judge_id"], ["accounts.id"], name=op.f("fk_judgments_judge_id_accounts")
        ),
        sa.UniqueConstraint(
            "project_id",
            "unit_key",
            "judge_id",
            name=op.f("uq_judgments_project_id_unit_key_judge_id"),
        ),
    )
    op.create_index(
        op.f("ix_judgments_project_id_mode_topic_id"),
        "judgments",
        ["project_id", "mode", "topic_id"],
    )


def downgrade() -> None:
    op.drop_index("ix_judgments_project_id_mode_topic_id", "judgments")
    for table in ("judgments", "judging_documents", "judging_reports", "judging_topics"):
        op.drop_table(table)
