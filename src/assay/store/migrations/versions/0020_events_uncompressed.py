"""PostgreSQL keeps an event's JSON in its row uncompressed up to 8 kB.

Every save and every imported item writes an event holding a copy of the item (2–5 kB). Rows
over 2 kB were compressed with pglz as they were written: in a profile of an import of
100,000 items that was about 3.4 s of the server's CPU, more than the inserts themselves
(50,000 such rows: 3.0 s with compression, 1.3 s without). The table takes about 30 % more
space instead. SQLite stores them as they are anyway.

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE events SET (toast_tuple_target = 8160)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE events RESET (toast_tuple_target)")
