"""Actors: items, evidence, documents and experiments store ``author_id`` and events
``actor_id`` (the account), instead of a free-text name.

Each distinct old name becomes an account (a user name, else a display name, else a new
``imported`` account without a password); the empty name, which ``ASSAY_AUTHOR`` and personal
mode wrote by default, becomes the local owner. The old text columns are dropped, so nothing
reads them any more. How a name becomes an account is copied here as ``people.actors`` did it
when this migration was written, so later changes there do not change what this migration does.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

COLUMNS = {
    "documents": ("author", "author_id"),
    "items": ("author", "author_id"),
    "evidence": ("author", "author_id"),
    "experiments": ("author", "author_id"),
    "events": ("actor", "actor_id"),
}
"""Table: (the old name column, the new account column)."""
LOCAL = "local"
USERNAME = re.compile(r"^[a-z0-9][a-z0-9._@-]{0,63}$")
ACCOUNTS = sa.table(
    "accounts",
    *(sa.column(name, sa.Integer()) for name in ("id", "failed_logins")),
    *(sa.column(name, sa.String()) for name in ("username", "display_name", "password_hash")),
    sa.column("origin", sa.String()),
    *(sa.column(name, sa.Boolean()) for name in ("is_admin", "disabled")),
    *(sa.column(name, sa.DateTime(timezone=True)) for name in ("locked_until", "created_at")),
    sa.column("updated_at", sa.DateTime(timezone=True)),
)
"""The accounts table as migration 0007 made it."""


def upgrade() -> None:
    bind = op.get_bind()
    names: set[str] = set()
    for table, (old, new) in COLUMNS.items():
        op.add_column(table, sa.Column(new, sa.Integer(), nullable=True))
        names.update(bind.execute(sa.text(f"SELECT DISTINCT {old} FROM {table}")).scalars())
    local = bind.execute(sa.text("SELECT id FROM accounts WHERE username = 'local'")).scalar()
    ids = {name: local for name in names} | account_ids(bind, names)
    # one UPDATE per table through a mapping table, not one per name (an old workspace may
    # hold thousands of names over millions of evidence rows)
    mapping = op.create_table(
        "tmp_author_names",
        sa.Column("name", sa.String(length=200), primary_key=True),
        sa.Column("account_id", sa.Integer(), nullable=False),
    )
    if ids:
        op.bulk_insert(mapping, [{"name": n, "account_id": i} for n, i in ids.items()])
    for table, (old, new) in COLUMNS.items():
        bind.execute(
            sa.text(
                f"UPDATE {table} SET {new} = (SELECT account_id FROM tmp_author_names "
                f"WHERE tmp_author_names.name = {table}.{old})"
            )
        )
    op.drop_table("tmp_author_names")
    for table, (old, new) in COLUMNS.items():
        with op.batch_alter_table(table) as batch:
            batch.alter_column(new, existing_type=sa.Integer(), nullable=False)
            batch.create_foreign_key(op.f(f"fk_{table}_{new}_accounts"), "accounts", [new], ["id"])
            if table == "items":
                batch.drop_index("ix_items_project_id_author")
            batch.drop_column(old)
            if table == "items":
                batch.create_index(op.f("ix_items_project_id_author_id"), ["project_id", new])


def account_ids(conn: sa.Connection, names: Iterable[str]) -> dict[str, int]:
    """Account ids for author ``names``, found by user name, else by display name, else a new
    ``imported`` account; empty names are left out (the local owner stands for them)."""
    wanted = {name for name in names if name and name.strip()}
    if not wanted:
        return {}
    read = sa.select(ACCOUNTS.c.id, ACCOUNTS.c.username, ACCOUNTS.c.display_name)
    rows = conn.execute(read.order_by(ACCOUNTS.c.id)).all()
    by_username = {row.username: row.id for row in rows}
    by_display: dict[str, int] = {}
    for row in rows:
        by_display.setdefault(row.display_name, row.id)
    found: dict[str, int] = {}
    now = datetime.now(UTC)
    for name in sorted(wanted):
        known = by_username.get(name, by_display.get(name[:200]))  # display names: 200 chars
        if known is None:
            username = derived_username(name, set(by_username))
            inserted = conn.scalar(
                ACCOUNTS.insert()
                .returning(ACCOUNTS.c.id)
                .values(
                    username=username,
                    display_name=name[:200],
                    password_hash=None,
                    is_admin=False,
                    disabled=False,
                    origin="imported",
                    failed_logins=0,
                    locked_until=None,
                    created_at=now,
                    updated_at=now,
                )
            )
            known = by_username[username] = int(inserted)
            by_display.setdefault(name[:200], known)
        found[name] = known
    return found


def derived_username(name: str, taken: set[str]) -> str:
    """A valid user name for an author name, not in ``taken``: accents dropped, other
    characters as ``-``, at most 64 characters, ``-2``, ``-3``... on a clash; ``author`` when
    nothing is left (a name in another script)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    base = re.sub(r"[^a-z0-9._@-]+", "-", ascii_name.lower()).strip("-._@")[:56]
    base = base.rstrip("-._@") or "author"
    candidate, number = base, 2
    while candidate in taken or candidate == LOCAL:
        candidate, number = f"{base}-{number}", number + 1
    assert USERNAME.match(candidate), candidate
    return candidate


def downgrade() -> None:
    for table, (old, new) in COLUMNS.items():
        with op.batch_alter_table(table) as batch:
            batch.add_column(
                sa.Column(old, sa.String(length=200), nullable=False, server_default="")
            )
        op.get_bind().execute(
            sa.text(
                f"UPDATE {table} SET {old} = (SELECT CASE WHEN display_name = '' THEN username "
                f"ELSE display_name END FROM accounts WHERE accounts.id = {table}.{new})"
            )
        )
        with op.batch_alter_table(table) as batch:
            if table == "items":
                batch.drop_index("ix_items_project_id_author_id")
                batch.create_index(op.f("ix_items_project_id_author"), ["project_id", old])
            batch.drop_constraint(op.f(f"fk_{table}_{new}_accounts"), type_="foreignkey")
            batch.drop_column(new)
