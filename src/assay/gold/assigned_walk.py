"""A page of the items assigned to an annotator, found by walking the project's sort index.

The assigned part of an annotator's own list (``item_scope.own_parts``) is a set of item ids
from the assignments. Sorting it means reading every assigned item's sort key: with 2,000
tasks in a project of 100k items about 6 ms on SQLite and 20 ms on PostgreSQL for a first
page, growing with the queue (``benchmarks/own_list.py``). Where the list sorts by an indexed
column (last change, creation) and has no filter that needs the items' rows, the page is
instead the first assigned ids met while walking the project's (project, key, id) index in
the list's order: the walk reads index entries only and checks each id against the tasks.

The walk is bounded (:data:`WALK_FACTOR` index entries a task, :data:`PER_ROW` a row of the
page): an annotator whose tasks are few and scattered over a large project would otherwise
walk the whole index. When the
bounded walk does not find the page, the caller reads the assigned items by id as before,
so the rows and their order are the same either way.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from assay.gold.item_scope import Part
from assay.store.schema import items

WALK_FACTOR = 4
"""Index entries walked per assigned task at most: reading an item by id costs several times
an index entry, so a walk this long costs no more than reading the tasks' items."""
WALK_MIN = 200
"""Fewer tasks than this are read by id (a fraction of a millisecond): no walk."""
PER_ROW = 64
"""Index entries walked per row of the page at most: enough where one item in 64 or more of
the project is assigned (2,000 tasks in 100k items need about 50); a sparser queue is read by
id after a short walk."""
PAGE_SHARE = 8
"""A page that ends past this share of the tasks (1/8) is read by id: the walk would have to
pass most of the index to reach it (a page at offset 500 of 2,000 tasks walked 8,000 index
entries in vain and then read by id anyway)."""
INDEXED = (items.c.updated_at, items.c.created_at)
"""The sort columns the project has a (project_id, column, id) index for."""


def walked_ids(
    conn: sa.Connection,
    part: Part,
    column: Any,
    descending: bool,
    where: list[sa.ColumnElement[bool]],
    need: int,
) -> list[str] | None:
    """The ids of the part's first ``need`` items in the list's order (``where``: conditions
    the index serves, the list's place after an item at most), or None when the walk does
    not apply or did not find them all."""
    if part.ids is None or part.tasks < max(WALK_MIN, need * PAGE_SHARE):
        return None  # few tasks, or a page deep into them
    if not any(column is c for c in INDEXED):
        return None
    order = [c.desc() if descending else c.asc() for c in (column, items.c.id)]
    walk = (
        sa.select(items.c.id, column.label("key"))
        .where(items.c.project_id == part.project_id, *where)
        .order_by(*order)
        .limit(min(part.tasks * WALK_FACTOR, max(need, 16) * PER_ROW))
        .subquery()
    )
    merged = [c.desc() if descending else c.asc() for c in (walk.c.key, walk.c.id)]
    found = list(
        conn.scalars(
            sa.select(walk.c.id).where(walk.c.id.in_(part.ids)).order_by(*merged).limit(need)
        )
    )
    return found if len(found) == need else None
