"""Whose record is it: what the "own records" rules of the role table ask.

An item is the account's that created it, or that it was assigned: items store the creating
account's id (``author_id``), so renaming an account changes nothing about what it owns; an
annotate task (``assignments``) gives its annotator, or whoever holds it from the shared
pool, the same rights on the item as its author.
"""

from __future__ import annotations

import functools
from typing import Any

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
    params = {"project_id": project_id, "item_id": item_id, "account_id": account_id}
    with reading(ws.engine, conn) as reader:
        author = reader.execute(_author_read(), params).scalar()
        if author is None:
            return False
        if author == account_id:
            return True
        task = reader.execute(_task_read(), params).scalar()
    return task is not None


@functools.cache
def _author_read() -> sa.Select[Any]:
    """Read on every request about one item: built once per process (bound parameters)."""
    return sa.select(items.c.author_id).where(
        items.c.id == sa.bindparam("item_id", type_=sa.String),
        items.c.project_id == sa.bindparam("project_id", type_=sa.Integer),
    )


@functools.cache
def _task_read() -> sa.Select[Any]:
    """An annotate task on the item for the account (its own, or a pool task it holds)."""
    account = sa.bindparam("account_id", type_=sa.Integer)
    return (
        sa.select(assignments.c.id)
        .where(
            assignments.c.project_id == sa.bindparam("project_id", type_=sa.Integer),
            assignments.c.item_id == sa.bindparam("item_id", type_=sa.String),
            assignments.c.task == "annotate",
            sa.or_(assignments.c.account_id == account, assignments.c.holder_id == account),
        )
        .limit(1)
    )


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
