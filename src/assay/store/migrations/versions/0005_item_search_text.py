"""Items: a lower-case search text (questions, answers, notes) for the list's free-text filter,
and an index for filtering by type and status (with counts) and sorting those by question.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

BATCH = 2000


def upgrade() -> None:
    op.drop_index("ix_items_project_id_query_type", table_name="items")
    op.create_index(
        "ix_items_project_id_query_type_status_query_id",
        "items",
        ["project_id", "query_type", "status", "query", "id"],
    )
    with op.batch_alter_table("items") as batch:
        batch.add_column(sa.Column("search_text", sa.Text, nullable=False, server_default=""))
    conn = op.get_bind()
    items = sa.table("items", sa.column("id"), sa.column("notes"), sa.column("search_text"))
    turns = sa.table(
        "turns",
        sa.column("item_id"),
        sa.column("ordinal"),
        sa.column("query"),
        sa.column("answer"),
    )
    ids = [row.id for row in conn.execute(sa.select(items.c.id).order_by(items.c.id))]
    for start in range(0, len(ids), BATCH):
        batch_ids = ids[start : start + BATCH]
        notes = dict(
            (row.id, row.notes)
            for row in conn.execute(
                sa.select(items.c.id, items.c.notes).where(items.c.id.in_(batch_ids))
            )
        )
        texts: dict[str, list[str]] = {item_id: [] for item_id in batch_ids}
        for row in conn.execute(
            sa.select(turns.c.item_id, turns.c.query, turns.c.answer)
            .where(turns.c.item_id.in_(batch_ids))
            .order_by(turns.c.item_id, turns.c.ordinal)
        ):
            texts[row.item_id] += [row.query, row.answer]
        for item_id in batch_ids:
            value = "\n".join([*texts[item_id], notes[item_id] or ""]).casefold()
            conn.execute(items.update().where(items.c.id == item_id).values(search_text=value))


def downgrade() -> None:
    op.drop_index("ix_items_project_id_query_type_status_query_id", table_name="items")
    op.create_index("ix_items_project_id_query_type", "items", ["project_id", "query_type"])
    with op.batch_alter_table("items") as batch:
        batch.drop_column("search_text")
