"""Spine: projects, documents, chunkings, chunks.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("language", sa.String(16), nullable=False),
        sa.Column("settings", sa.JSON, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_projects"),
        sa.UniqueConstraint("name", name="uq_projects_name"),
    )
    op.create_table(
        "documents",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("project_id", sa.Integer, nullable=False),
        sa.Column("name", sa.String(500), nullable=False),
        sa.Column("media_type", sa.String(200), nullable=False),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("parse_info", sa.JSON, nullable=False),
        sa.Column("notes", sa.Text, nullable=False),
        sa.Column("metadata", sa.JSON, nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_documents"),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name="fk_documents_project_id_projects",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("project_id", "name", name="uq_documents_project_id_name"),
    )
    op.create_index("ix_documents_project_id_sha256", "documents", ["project_id", "sha256"])
    op.create_table(
        "chunkings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("project_id", sa.Integer, nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("method", sa.String(100), nullable=False),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("is_default", sa.Boolean, nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_chunkings"),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name="fk_chunkings_project_id_projects",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("project_id", "name", name="uq_chunkings_project_id_name"),
    )
    op.create_table(
        "chunks",
        sa.Column("chunking_id", sa.Integer, nullable=False),
        sa.Column("chunk_id", sa.String(300), nullable=False),
        sa.Column("doc_id", sa.String(36), nullable=False),
        sa.Column("ordinal", sa.Integer, nullable=False),
        sa.Column("start", sa.Integer, nullable=False),
        sa.Column("end", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("chunking_id", "chunk_id", name="pk_chunks"),
        sa.ForeignKeyConstraint(
            ["chunking_id"],
            ["chunkings.id"],
            name="fk_chunks_chunking_id_chunkings",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["doc_id"], ["documents.id"], name="fk_chunks_doc_id_documents", ondelete="CASCADE"
        ),
    )
    op.create_index(
        "ix_chunks_doc_id_chunking_id_ordinal", "chunks", ["doc_id", "chunking_id", "ordinal"]
    )


def downgrade() -> None:
    op.drop_table("chunks")
    op.drop_table("chunkings")
    op.drop_index("ix_documents_project_id_sha256", table_name="documents")
    op.drop_table("documents")
    op.drop_table("projects")
