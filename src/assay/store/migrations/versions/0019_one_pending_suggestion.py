"""Suggestions: at most one pending suggestion per passage of a turn (relevance) and one
pending rewrite per turn, held by two partial unique indexes.

Two requests for the same item at once (two tabs, two annotators) could both store their
suggestions, and the annotator saw each passage twice. With the indexes a second relevance
suggestion for a passage that waits already is not stored, and a new rewrite replaces the
waiting one (:mod:`assay.gold.suggestions`). Duplicates stored before are kept as records in
the state ``replaced``: the oldest relevance suggestion of a passage and the newest rewrite
of a turn stay pending (the workbench shows the newest rewrite).

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

PENDING_RELEVANCE = sa.text("state = 'pending' AND kind = 'relevance'")
PENDING_REWRITE = sa.text("state = 'pending' AND kind = 'rewrite'")


def upgrade() -> None:
    op.execute(
        "UPDATE suggestions SET state = 'replaced' "
        "WHERE state = 'pending' AND kind = 'relevance' AND id NOT IN ("
        "SELECT min(id) FROM suggestions WHERE state = 'pending' AND kind = 'relevance' "
        'GROUP BY item_id, turn_ordinal, doc_id, start, "end")'
    )
    op.execute(
        "UPDATE suggestions SET state = 'replaced' "
        "WHERE state = 'pending' AND kind = 'rewrite' AND id NOT IN ("
        "SELECT max(id) FROM suggestions WHERE state = 'pending' AND kind = 'rewrite' "
        "GROUP BY item_id, turn_ordinal)"
    )
    op.create_index(
        "ux_suggestions_pending_passage",
        "suggestions",
        ["item_id", "turn_ordinal", "doc_id", "start", "end"],
        unique=True,
        postgresql_where=PENDING_RELEVANCE,
        sqlite_where=PENDING_RELEVANCE,
    )
    op.create_index(
        "ux_suggestions_pending_rewrite",
        "suggestions",
        ["item_id", "turn_ordinal"],
        unique=True,
        postgresql_where=PENDING_REWRITE,
        sqlite_where=PENDING_REWRITE,
    )


def downgrade() -> None:
    op.drop_index("ux_suggestions_pending_rewrite", table_name="suggestions")
    op.drop_index("ux_suggestions_pending_passage", table_name="suggestions")
