"""Whose record is it: what the "own records" rules of the role table ask.

An item is the account's that created it: items store that account's id (``author_id``),
so renaming an account changes nothing about what it owns.
"""

from __future__ import annotations

import sqlalchemy as sa

from assay.store.db import reading
from assay.store.schema import items
from assay.store.workspace import Workspace


def owns_item(
    ws: Workspace,
    project_id: int,
    item_id: str,
    account_id: int,
    *,
    conn: sa.Connection | None = None,
) -> bool:
    """Whether the item of the project was written by the account ``account_id`` (False:
    someone else's, or no such item in the project)."""
    with reading(ws.engine, conn) as reader:
        author = reader.scalar(
            sa.select(items.c.author_id).where(
                items.c.id == item_id, items.c.project_id == project_id
            )
        )
    return author is not None and author == account_id
