"""Whose record is it: what the "own records" rules of the role table ask.

An item is the account's that created it, or that it was assigned: items store the creating
account's id (``author_id``), so renaming an account changes nothing about what it owns; an
annotate task (``assignments``) gives its annotator, or whoever holds it from the shared
pool, the same rights on the item as its author.
"""

from __future__ import annotations

import sqlalchemy as sa

from assay.store.db import reading
from assay.store.review_schema import assignments
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
    """Whether the item of the project was written by the account ``account_id`` or is
    assigned to it (False: someone else's, or no such item in the project)."""
    with reading(ws.engine, conn) as reader:
        author = reader.scalar(
            sa.select(items.c.author_id).where(
                items.c.id == item_id, items.c.project_id == project_id
            )
        )
        if author is None:
            return False
        if author == account_id:
            return True
        task = reader.scalar(
            sa.select(assignments.c.id)
            .where(
                assignments.c.project_id == project_id,
                assignments.c.item_id == item_id,
                assignments.c.task == "annotate",
                sa.or_(
                    assignments.c.account_id == account_id, assignments.c.holder_id == account_id
                ),
            )
            .limit(1)
        )
    return task is not None


def others_copy(
    ws: Workspace,
    project_id: int,
    item_id: str,
    account_id: int,
    *,
    conn: sa.Connection | None = None,
) -> bool:
    """Whether the item is another annotator's copy (overlap) of an item not yet accepted:
    what blind mode keeps from annotators until review."""
    original = items.alias("original")
    with reading(ws.engine, conn) as reader:
        row = reader.execute(
            sa.select(items.c.author_id, original.c.status)
            .join(original, original.c.id == items.c.copy_of)
            .where(items.c.id == item_id, items.c.project_id == project_id)
        ).first()
    return row is not None and row.author_id != account_id and row.status != "accepted"
