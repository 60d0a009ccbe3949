"""Which items a list holds beyond its filters: annotators' copies (overlap), and the items
an account may work on as its own."""

from __future__ import annotations

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.store.review_schema import assignments
from assay.store.schema import items

COPIES = ("exclude", "include", "only")
"""How a list treats annotators' copies of items (overlap): left out (gold reads), shown
too, or alone."""


def copies_condition(copies: str) -> list[sa.ColumnElement[bool]]:
    if copies not in COPIES:
        raise InvalidInput(f"unknown copies {copies!r}; choose one of: {', '.join(COPIES)}")
    if copies == "exclude":
        return [items.c.copy_of.is_(None)]
    if copies == "only":
        return [items.c.copy_of.is_not(None)]
    return []


def owned_by(project_id: int, account_id: int) -> sa.ColumnElement[bool]:
    """Items the account may work on as its own: those it wrote, and those assigned to it
    (an annotate task of its queue, or a task of the shared pool it holds)."""
    assigned = sa.select(assignments.c.item_id).where(
        assignments.c.project_id == project_id,
        assignments.c.task == "annotate",
        sa.or_(assignments.c.account_id == account_id, assignments.c.holder_id == account_id),
    )
    return sa.or_(items.c.author_id == account_id, items.c.id.in_(assigned))
