"""Outgoing endpoints a workspace admin registered: in team mode the only URLs generators,
judges, rerankers, pool sources and external systems may use, and the only hosts an API key
is sent to.

Revision ID: 0027
Revises: 0026
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "outgoing_endpoints",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("allow_private", sa.Boolean, nullable=False),
        sa.Column("note", sa.String(500), nullable=False),
        sa.Column("created_by", sa.Integer, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outgoing_endpoints")),
        sa.UniqueConstraint("name", name=op.f("uq_outgoing_endpoints_name")),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["accounts.id"],
            name=op.f("fk_outgoing_endpoints_created_by_accounts"),
        ),
    )


def downgrade() -> None:
    op.drop_table("outgoing_endpoints")
