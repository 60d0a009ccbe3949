"""Files of the workspace folder kept in the database, in parts, so that servers and workers
on several machines need no shared folder (team mode on PostgreSQL).

Revision ID: 0028
Revises: 0027
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stored_files",
        sa.Column("name", sa.String(500), nullable=False),
        sa.Column("part", sa.Integer, autoincrement=False, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.PrimaryKeyConstraint("name", "part", name=op.f("pk_stored_files")),
    )


def downgrade() -> None:
    op.drop_table("stored_files")
