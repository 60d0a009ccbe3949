"""Annotators' own copies of an item (overlap: each item done independently by N people).

A copy is an item row whose ``copy_of`` names the original (the gold item); its author is
the annotator who works on it. The editor, autosave, evidence and submit work on copies as
on any item. Copies are never gold: adjudication merges them into the original.
"""

from __future__ import annotations

from dataclasses import replace

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.gold.items import get_item, insert_item
from assay.records import Project
from assay.store.db import reading, transaction
from assay.store.schema import items
from assay.store.workspace import Workspace


def copy_item(
    ws: Workspace,
    project: Project,
    item_id: str,
    annotator: int,
    *,
    conn: sa.Connection | None = None,
) -> str:
    """Make ``annotator``'s copy of item ``item_id`` (a draft with the original's question,
    query type, evidence and answer as they are now) and return its id."""
    with transaction(ws.engine, conn) as conn:
        original = get_item(ws, project, item_id, conn=conn)
        if conn.scalar(sa.select(items.c.copy_of).where(items.c.id == item_id)):
            raise InvalidInput(f"item {item_id} is itself a copy; copy its original instead")
        data = replace(original, status_history=[])
        created = insert_item(ws, project, data, author=annotator, status="draft", conn=conn)
        conn.execute(items.update().where(items.c.id == created.id).values(copy_of=item_id))
        return created.id


def copies_of(
    ws: Workspace, project: Project, item_id: str, *, conn: sa.Connection | None = None
) -> list[str]:
    """The ids of the copies of ``item_id``, oldest first."""
    with reading(ws.engine, conn) as conn:
        rows = conn.scalars(
            sa.select(items.c.id)
            .where(items.c.project_id == project.id, items.c.copy_of == item_id)
            .order_by(items.c.created_at, items.c.id)
        )
        return list(rows)


def original_of(ws: Workspace, item_id: str, *, conn: sa.Connection | None = None) -> str | None:
    """The original's id when ``item_id`` is a copy, else None."""
    with reading(ws.engine, conn) as conn:
        return conn.scalar(sa.select(items.c.copy_of).where(items.c.id == item_id))
