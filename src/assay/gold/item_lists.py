"""The items list: one filtered, sorted page of a project's items and how many match (the
web list, its JSON, ``assay items list``, "next in list", the counts on the project page)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from assay.corpus.anchoring import needing_review, needs_review
from assay.errors import InvalidInput
from assay.gold.item_scope import copies_condition, copies_of_project, own_parts
from assay.people.actors import AUTHOR_NAME
from assay.records import ItemSummary, Project
from assay.store.db import as_utc, reading, record_from_row
from assay.store.schema import accounts, items
from assay.store.workspace import Workspace


def _summary(r: Any) -> ItemSummary:
    updated = as_utc(r.updated_at)
    return record_from_row(ItemSummary, r, updated_at=updated, needs_review=bool(r.needs_review))


SORTS: dict[str, Any] = {
    "updated": items.c.updated_at,
    "created": items.c.created_at,
    "query": items.c.query,
    "status": items.c.status,
    "type": items.c.query_type,
    "author": AUTHOR_NAME,
}


def list_items(
    ws: Workspace,
    project: Project,
    *,
    status: str | None = None,
    query_type: str | None = None,
    author: str | None = None,
    author_id: int | None = None,
    kind: str | None = None,
    text: str = "",
    review: bool = False,
    copies: str = "exclude",
    sort: str = "-updated",
    offset: int = 0,
    limit: int = 50,
    count: bool = True,
    conn: sa.Connection | None = None,
) -> tuple[int, list[ItemSummary]]:
    """One page of a project's items and the total matching the filters; ``review``: only
    items that need review (evidence that cannot be used as gold, see
    ``assay.corpus.anchoring``). ``author`` keeps to the items of the accounts with that
    user name or shown name; ``author_id`` to one account's (an annotator's own items: those
    it wrote and those assigned to it, see ``item_scope.own_parts``). ``copies``: ``exclude`` (gold
    items only), ``include`` or ``only`` annotators' copies under overlap.
    ``count=False`` skips counting (the total is then 0): for callers that only look at a
    few rows, such as "next in list"."""
    key = sort.lstrip("-")
    if key not in SORTS:
        raise InvalidInput(f"unknown sort {sort!r}; choose one of: {', '.join(SORTS)}")
    where: list[sa.ColumnElement[bool]] = []  # the project: in parts, below
    if status:
        where.append(items.c.status == status)
    if query_type:
        where.append(items.c.query_type == query_type)
    if author:
        where.append(sa.or_(accounts.c.username == author, accounts.c.display_name == author))
    shown = copies_condition(copies)
    if kind:
        where.append(items.c.kind == kind)
    if text.strip():
        where.append(items.c.search_text.contains(text.strip().casefold(), autoescape=True))
    if review:
        where.append(needing_review())
    column = SORTS[key]
    # the id breaks ties in the same direction, so one index (project_id, column, id) serves
    # the whole ORDER BY and deep pages do not sort the table (see benchmarks/workbench.py)
    descending = sort.startswith("-")
    order = [c.desc() if descending else c.asc() for c in (column, items.c.id)]
    with reading(ws.engine, conn) as conn:
        project_only = [[items.c.project_id == project.id]]
        parts = own_parts(conn, project.id, author_id) if author_id is not None else project_only
        with_authors = items.join(accounts, accounts.c.id == items.c.author_id)
        counted = with_authors if author else items  # the join only when it filters
        counting = sa.select(sa.func.count()).select_from(counted).where(*where)
        total = 0
        if count and parts is project_only and copies == "exclude":  # all less the copies
            total = int(conn.scalar(counting.where(*project_only[0])) or 0)
            total -= int(conn.scalar(counting.where(*copies_of_project(project.id))) or 0)
        elif count:
            total = sum(int(conn.scalar(counting.where(*p, *shown)) or 0) for p in parts)
        where.extend([*shown, *project_only[0], sa.or_(*(sa.and_(*p) for p in parts))])
        rows = conn.execute(
            sa.select(
                items.c.id,
                items.c.kind,
                items.c.status,
                items.c.origin,
                items.c.query,
                items.c.query_type,
                items.c.turn_count,
                items.c.evidence_count,
                AUTHOR_NAME.label("author"),
                items.c.version,
                items.c.updated_at,
                needs_review().label("needs_review"),
            )
            .select_from(with_authors)
            .where(*where)
            .order_by(*order)
            .offset(offset)
            .limit(limit)
        ).all()
    return int(total or 0), [_summary(r) for r in rows]
