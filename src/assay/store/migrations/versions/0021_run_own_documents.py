"""Judging reports keep the documents their run embeds in a version other than the project's.

Runs may embed one doc id with different text (a longer and a shorter passage); the project
keeps one document per doc id, the longest. autojudge-annotate shows and writes each run's
own version, so the export needs it: ``own_documents`` holds ``{doc id: {text, title, url}}``
for the documents of the report that differ from the project's (NULL: none do, or the report
was imported before this column).

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("judging_reports") as batch:
        batch.add_column(sa.Column("own_documents", sa.JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("judging_reports") as batch:
        batch.drop_column("own_documents")
