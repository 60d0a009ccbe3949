"""Whose record is it: what the "own records" rules of the role table ask.

Until items record the account that made them (issue 12, "every action carries its actor"),
an item is its author's when the author name equals the account's user name; in team mode the
web records exactly that name.
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
    username: str,
    *,
    conn: sa.Connection | None = None,
) -> bool:
    """Whether the item of the project was written by ``username`` (False: someone else's, or
    no such item in the project)."""
    with reading(ws.engine, conn) as reader:
        author = reader.execute(
            sa.select(items.c.author).where(items.c.id == item_id, items.c.project_id == project_id)
        ).scalar()
    return author is not None and author == username
