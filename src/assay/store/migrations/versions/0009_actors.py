"""Actors: items, evidence, documents and experiments store ``author_id`` and events
``actor_id`` (the account), instead of a free-text name.

Each distinct old name becomes an account as ``assay.people.actors.account_ids`` decides (a
user name, else a display name, else a new ``imported`` account without a password); the
empty name, which ``ASSAY_AUTHOR`` and personal mode wrote by default, becomes the local
owner. The old text columns are dropped, so nothing reads them any more.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

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


def upgrade() -> None:
    from assay.people.actors import account_ids

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
