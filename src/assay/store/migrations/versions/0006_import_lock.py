"""Projects: the import lock (token, holder, start, heartbeat); the import journal that lets a
failed or killed batched import be undone.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("import_token", sa.String(36), nullable=True))
        batch.add_column(sa.Column("import_holder", sa.String(300), nullable=True))
        batch.add_column(sa.Column("import_started_at", Timestamp, nullable=True))
        batch.add_column(sa.Column("import_heartbeat_at", Timestamp, nullable=True))
    op.create_table(
        "import_journal",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("token", sa.String(36), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("ref", sa.String(300), nullable=False),
        sa.Column("before", sa.Text, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_journal")),
    )
    op.create_index(
        op.f("ix_import_journal_token_kind_ref"), "import_journal", ["token", "kind", "ref"]
    )


def downgrade() -> None:
    op.drop_index("ix_import_journal_token_kind_ref", table_name="import_journal")
    op.drop_table("import_journal")
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("import_heartbeat_at")
        batch.drop_column("import_started_at")
        batch.drop_column("import_holder")
        batch.drop_column("import_token")
