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


IS_COPY = items.c.copy_of > ""
"""An annotator's copy (``copy_of`` names its original; ids are never empty). Written as a
range, which SQLite's copy_of index serves (``IS NOT NULL`` it answers with a scan). Counts
of gold items are all less these, where ``copy_of IS NULL`` would read every row."""


def copies_of_project(project_id: int) -> list[sa.ColumnElement[bool]]:
    """The project's copies, found by the copy_of index: ``project_id + 0`` keeps SQLite
    (which keeps no statistics) from walking the project's index and reading every row."""
    return [IS_COPY, (items.c.project_id + 0) == project_id]


def copies_condition(copies: str) -> list[sa.ColumnElement[bool]]:
    if copies not in COPIES:
        raise InvalidInput(f"unknown copies {copies!r}; choose one of: {', '.join(COPIES)}")
    if copies == "exclude":
        return [items.c.copy_of.is_(None)]
    return [IS_COPY] if copies == "only" else []


LISTED = 5000
"""Up to this many assigned items are named by id (the primary key then drives the count);
more are read by a subquery."""


def own_parts(
    conn: sa.Connection, project_id: int, account_id: int
) -> list[list[sa.ColumnElement[bool]]]:
    """The items the account may work on as its own, as disjoint parts (each a list of
    conditions): those it wrote, and, when it has tasks in the project, those assigned to it
    that others wrote (an annotate task of its queue, or a pool task it holds).

    Counted part by part, the first stays an index-only count on (project, author) and the
    second (no project condition: its ids are the project's) looks up only those items by
    id; one ``author = X OR id IN (tasks)`` made SQLite read every item of the project
    (benchmarks/own_list.py)."""
    mine = sa.and_(
        assignments.c.project_id == project_id,
        assignments.c.task == "annotate",
        sa.or_(
            assignments.c.account_id == account_id,
            sa.and_(assignments.c.account_id.is_(None), assignments.c.holder_id == account_id),
        ),
    )
    written: list[sa.ColumnElement[bool]] = [
        items.c.project_id == project_id,
        items.c.author_id == account_id,
    ]
    assigned = list(conn.scalars(sa.select(assignments.c.item_id).where(mine).limit(LISTED + 1)))
    if not assigned:
        return [written]
    if len(assigned) > LISTED:  # too many to list: the database reads them itself
        return [
            written,
            [
                items.c.author_id != account_id,
                items.c.id.in_(sa.select(assignments.c.item_id).where(mine)),
            ],
        ]
    return [written, [items.c.author_id != account_id, items.c.id.in_(assigned)]]
