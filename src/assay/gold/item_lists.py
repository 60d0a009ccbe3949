"""Lists of a project's items: the items list (one filtered, sorted page and how many match:
the web list, its JSON, ``assay items list``, "next in list", the counts on the project page),
every gold item in export order, and which items a list holds beyond its filters (annotators'
copies, and the items an account may work on as its own).

The assigned part of an annotator's own list (:func:`own_parts`) is a set of item ids from the
assignments. Sorting it means reading every assigned item's sort key: with 2,000 tasks in a
project of 100k items about 6 ms on SQLite and 20 ms on PostgreSQL for a first page, growing
with the queue (``benchmarks/own_list.py``). Where the list sorts by an indexed column (last
change, creation) and has no filter that needs the items' rows, the page is instead the first
assigned ids met while walking the project's (project, key, id) index in the list's order
(:func:`walked_ids`): the walk reads index entries only and checks each id against the tasks.
The walk is bounded (:data:`WALK_FACTOR` index entries a task, :data:`PER_ROW` a row of the
page): an annotator whose tasks are few and scattered over a large project would otherwise walk
the whole index. When the bounded walk does not find the page, the caller reads the assigned
items by id as before, so the rows and their order are the same either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from assay.corpus.anchoring import needing_review, needs_review
from assay.errors import InvalidInput, NotFound
from assay.gold.item_rows import read_items
from assay.gold.statuses import is_every_status, parse_statuses
from assay.people.actors import AUTHOR_NAME
from assay.records import Item, ItemSummary, Project
from assay.store.db import as_utc, read_only, reading, record_from_row
from assay.store.review_schema import assignments
from assay.store.schema import accounts, items
from assay.store.workspace import Workspace

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


def assigned_to(project_id: int, account_id: int) -> sa.CompoundSelect[tuple[str]]:
    """The ids of the project's items assigned to the account: annotate tasks of its queue,
    and pool tasks it holds. Two selects, each served by its own index (project, task,
    account; holder, project, task): one ``account = X OR holder = X`` read every annotate
    task of the project."""
    annotate = [assignments.c.project_id == project_id, assignments.c.task == "annotate"]
    return sa.union_all(
        sa.select(assignments.c.item_id).where(*annotate, assignments.c.account_id == account_id),
        sa.select(assignments.c.item_id).where(
            assignments.c.holder_id == account_id, *annotate, assignments.c.account_id.is_(None)
        ),
    )


@dataclass(frozen=True, slots=True)
class Part:
    """One of the disjoint parts a list is read in: the conditions that find its items, and,
    for the items assigned to an account, their ids from the assignments alone (so that the
    part is counted there when no filter needs the items' rows), how many tasks name them
    and the project (so a page of them can walk the project's sort index instead,
    :func:`walked_ids`)."""

    where: list[sa.ColumnElement[bool]]
    ids: sa.CompoundSelect[tuple[str]] | None = None
    tasks: int = 0
    project_id: int = 0


def own_parts(conn: sa.Connection, project_id: int, account_id: int) -> list[Part]:
    """The items the account may work on as its own, as disjoint parts: those assigned to it
    (when it has tasks in the project), and those it wrote that are not.

    The parts are counted and paged one by one (see ``item_lists``): the written part reads
    the (project, author) indexes alone, the assigned part (no project condition: its ids are
    the project's) looks up only the assigned items by id. One ``author = X OR id IN
    (tasks)`` made SQLite walk every item of the project (benchmarks/own_list.py)."""
    written: list[sa.ColumnElement[bool]] = [
        items.c.project_id == project_id,
        items.c.author_id == account_id,
    ]
    tasks = assigned_to(project_id, account_id)
    # how many: read from the two indexes alone (about 0.1 ms for 2,000 tasks)
    count = int(conn.scalar(sa.select(sa.func.count()).select_from(tasks.subquery())) or 0)
    if not count:
        return [Part(written)]
    assigned = Part([items.c.id.in_(tasks)], tasks, count, project_id)
    return [Part([*written, items.c.id.not_in(tasks)]), assigned]


def item_ids(
    ws: Workspace,
    project: Project,
    statuses: Iterable[str] | None = None,
    *,
    conn: sa.Connection | None = None,
) -> list[str]:
    """Gold item ids in export order (oldest first), optionally only those of ``statuses``;
    annotators' copies (overlap) are not gold and are left out (found apart, by their own
    index, so the ids still come from an index alone)."""
    chosen = [] if statuses is None else [items.c.status.in_(list(statuses))]
    with reading(ws.engine, conn) as reader:
        copies = set(
            reader.scalars(sa.select(items.c.id).where(*copies_of_project(project.id), *chosen))
        )
        ordered = reader.scalars(
            sa.select(items.c.id)
            .where(items.c.project_id == project.id, *chosen)
            .order_by(items.c.created_at, items.c.id)
        )
        return [i for i in ordered if i not in copies]


def iter_items(
    ws: Workspace,
    project: Project,
    *,
    statuses: Iterable[str] | None = None,
    batch_size: int = 500,
    conn: sa.Connection | None = None,
) -> Iterator[Item]:
    """Every gold item of a project (oldest first, no copies), read in batches (each batch
    on a connection of its own, unless the caller passes ``conn``)."""
    ids = item_ids(ws, project, statuses, conn=conn)
    yield from items_in_batches(ws, ids, batch_size=batch_size, conn=conn)


def items_in_batches(
    ws: Workspace,
    ids: Sequence[str],
    *,
    batch_size: int = 500,
    history: bool = False,
    finite_json: bool = True,
    conn: sa.Connection | None = None,
) -> Iterator[Item]:
    """The items of ``ids`` in that order, :func:`read_items` per batch, each batch on a
    connection of its own unless the caller passes ``conn`` (exports stream with this)."""
    for offset in range(0, len(ids), batch_size):
        batch = list(ids[offset : offset + batch_size])
        with reading(ws.engine, conn) as reader:
            yield from read_items(reader, batch, history=history, finite_json=finite_json)


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
    after: str | None = None,
    offset: int = 0,
    limit: int = 50,
    count: bool = True,
    count_limit: int | None = None,
    conn: sa.Connection | None = None,
) -> tuple[int, list[ItemSummary]]:
    """One page of a project's items and the total matching the filters; ``review``: only
    items that need review (evidence that cannot be used as gold, see
    ``assay.corpus.anchoring``). ``author`` keeps to the items of the accounts with that
    user name or shown name; ``author_id`` to one account's (an annotator's own items: those
    it wrote and those assigned to it, see ``item_lists.own_parts``). ``copies``: ``exclude`` (gold
    items only), ``include`` or ``only`` annotators' copies under overlap. ``after``: the page
    starts after that item's place in the sort order (read from its sort key, wherever the
    item now is; "next in list"), ``offset`` then counts from there.
    ``count=False`` skips counting (the total is then 0): for callers that only look at a
    few rows. ``count_limit``: count no further than that; a total of ``count_limit + 1``
    then means "more than ``count_limit``"."""
    chosen = _Listing.make(
        sort=sort,
        status=status,
        query_type=query_type,
        author=author,
        kind=kind,
        text=text,
        review=review,
        copies=copies,
    )
    with read_only(ws.engine, conn) as conn:  # reads: no BEGIN/ROLLBACK on PostgreSQL
        parts = _parts(conn, project, author_id)
        total = chosen.total(conn, project, parts, author_id, count, count_limit)
        where = [*chosen.where, *chosen.shown]
        plain = not where
        if after is not None:
            mark = _sort_key(conn, project, chosen.column, after)
            where.append(_past(chosen.column, mark, after, chosen.descending))
        rows = _rows(
            conn, where, parts, chosen.column, chosen.descending, offset, limit, plain=plain
        )
    return total, [_summary(r) for r in rows]


def list_neighbours(
    ws: Workspace,
    project: Project,
    item_id: str,
    *,
    author_id: int | None = None,
    count_limit: int | None = None,
    **filters: Any,
) -> tuple[int, ItemSummary | None, ItemSummary | None]:
    """The item's neighbours in a list (``filters``: the filters and sort of
    :func:`list_items`, by the same names): how many
    the list holds (as ``list_items`` counts with ``count_limit``), the item after it and
    the item before it (None at either end), read from the item's own sort key wherever the
    item now is. One connection, the list's parts and the item's key read once: what three
    ``list_items(after=...)`` calls did in nine statements, here in five."""
    chosen = _Listing.make(**filters)
    column, descending = chosen.column, chosen.descending
    with read_only(ws.engine, None) as conn:
        parts = _parts(conn, project, author_id)
        total = chosen.total(conn, project, parts, author_id, True, count_limit)
        where = [*chosen.where, *chosen.shown]
        plain = not where
        mark = _sort_key(conn, project, column, item_id)
        after = _rows(
            conn,
            [*where, _past(column, mark, item_id, descending)],
            parts,
            column,
            descending,
            plain=plain,
        )
        # the one before is the one after in the opposite order (the id breaks ties in the
        # sort's own direction, so reversing the sort reverses the whole order)
        before = _rows(
            conn,
            [*where, _past(column, mark, item_id, not descending)],
            parts,
            column,
            not descending,
            plain=plain,
        )
    return (
        total,
        _summary(after[0]) if after else None,
        _summary(before[0]) if before else None,
    )


@dataclass(frozen=True, slots=True)
class _Listing:
    """A list's filters as conditions, and its sort."""

    where: list[sa.ColumnElement[bool]]
    shown: list[sa.ColumnElement[bool]]
    copies: str
    author: bool
    column: Any
    descending: bool

    @classmethod
    def make(
        cls,
        *,
        sort: str = "-updated",
        status: str | None = None,
        query_type: str | None = None,
        author: str | None = None,
        kind: str | None = None,
        text: str = "",
        review: bool = False,
        copies: str = "exclude",
    ) -> _Listing:
        key = sort.lstrip("-")
        if key not in SORTS:
            raise InvalidInput(f"unknown sort {sort!r}; choose one of: {', '.join(SORTS)}")
        where: list[sa.ColumnElement[bool]] = []  # the project: in parts, see _parts
        if status:  # names, a comma list or all: the same reading as every --status
            chosen = parse_statuses(status)
            if not is_every_status(chosen):
                where.append(items.c.status.in_(chosen))
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
        return cls(where, shown, copies, bool(author), SORTS[key], sort.startswith("-"))

    def total(
        self,
        conn: sa.Connection,
        project: Project,
        parts: list[Part],
        author_id: int | None,
        count: bool,
        count_limit: int | None,
    ) -> int:
        """How many items the list holds (see ``list_items``: ``count``, ``count_limit``)."""
        counted = WITH_AUTHORS if self.author else items  # the join only when it filters
        if not count:
            return 0
        if author_id is None and self.copies == "exclude" and count_limit is None:
            counting = sa.select(sa.func.count()).select_from(counted).where(*self.where)
            total = int(conn.scalar(counting.where(items.c.project_id == project.id)) or 0)
            # all less the copies
            return total - int(conn.scalar(counting.where(*copies_of_project(project.id))) or 0)
        filters = [*self.where, *self.shown]
        total = sum(_count_part(conn, counted, filters, p, count_limit) for p in parts)
        return total if count_limit is None else min(total, count_limit + 1)


WITH_AUTHORS = items.join(accounts, accounts.c.id == items.c.author_id)


COLUMNS = (
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


def _parts(conn: sa.Connection, project: Project, author_id: int | None) -> list[Part]:
    if author_id is not None:
        return own_parts(conn, project.id, author_id)
    return [Part([items.c.project_id == project.id])]


def _rows(
    conn: sa.Connection,
    where: list[sa.ColumnElement[bool]],
    parts: list[Part],
    column: Any,
    descending: bool,
    offset: int = 0,
    limit: int = 1,
    *,
    plain: bool = False,
) -> list[Any]:
    """One page of the list's rows in its order; ``plain``: ``where`` holds no filter, at
    most the list's place (the index serves it)."""
    # the id breaks ties in the same direction, so one index (project_id, column, id) serves
    # the whole ORDER BY and deep pages do not sort the table (see benchmarks/workbench.py)
    order = [c.desc() if descending else c.asc() for c in (column, items.c.id)]
    if len(parts) == 1:
        return list(
            conn.execute(
                sa.select(*COLUMNS)
                .select_from(WITH_AUTHORS)
                .where(*where, *parts[0].where)
                .order_by(*order)
                .offset(offset)
                .limit(limit)
            ).all()
        )
    ids = _merged_page(conn, where, parts, column, descending, offset, limit, plain)
    found = conn.execute(
        sa.select(*COLUMNS).select_from(WITH_AUTHORS).where(items.c.id.in_(ids))
    ).all()
    by_id = {r.id: r for r in found}
    return [by_id[i] for i in ids if i in by_id]


def _count_part(
    conn: sa.Connection,
    source: sa.FromClause,
    filters: list[sa.ColumnElement[bool]],
    part: Part,
    limit: int | None,
) -> int:
    """How many items of the part match the filters; with ``limit``, counted no further than
    ``limit + 1`` (reading at most that many rows). Assigned items with no filter are
    counted from the assignments, without reading the items."""
    if part.ids is not None and not filters:
        ids = part.ids.subquery()
        found = sa.select(ids.c.item_id).distinct()
    else:
        found = sa.select(sa.literal_column("1")).select_from(source).where(*filters, *part.where)
    if limit is not None:
        found = found.limit(limit + 1)
    return int(conn.scalar(sa.select(sa.func.count()).select_from(found.subquery())) or 0)


def _sort_key(conn: sa.Connection, project: Project, column: Any, item_id: str) -> Any:
    """The item's value in the sort column (NotFound: not an item of the project)."""
    value = conn.scalar(
        sa.select(column)
        .select_from(WITH_AUTHORS)
        .where(items.c.id == item_id, items.c.project_id == project.id)
    )
    if value is None:
        raise NotFound(
            f"item {item_id!r} not found in project {project.name!r}: the list cannot "
            "continue after it"
        )
    return value


def _past(column: Any, value: Any, item_id: str, descending: bool) -> sa.ColumnElement[bool]:
    """The rows that come after the item (sort key ``value``) in the sort order: (column,
    id) past its own, so the index (project_id, column, id) starts there rather than
    counting rows to it."""
    key, mark = sa.tuple_(column, items.c.id), sa.tuple_(sa.literal(value, column.type), item_id)
    return key < mark if descending else key > mark


def _merged_page(
    conn: sa.Connection,
    where: list[sa.ColumnElement[bool]],
    parts: list[Part],
    column: Any,
    descending: bool,
    offset: int,
    limit: int,
    plain: bool,
) -> list[str]:
    """The ids of one page of a list made of disjoint parts: each part's first
    ``offset + limit`` rows in order (each read from its own index), merged. One query
    with ``part1 OR part2`` walks the project's whole time index instead. The assigned
    part's first rows come from a walk of the sort index where that applies
    (:func:`walked_ids`), else from reading its items by id."""

    def ordered(key: Any, item_id: Any) -> list[Any]:
        return [c.desc() if descending else c.asc() for c in (key, item_id)]

    def first_rows(part: Part) -> Any:
        need = offset + limit
        walked = walked_ids(conn, part, column, descending, where, need) if plain else None
        found = part.where if walked is None else [items.c.id.in_(walked)]
        return (
            sa.select(items.c.id, column.label("key"))
            .select_from(WITH_AUTHORS)
            .where(*where, *found)
            .order_by(*ordered(column, items.c.id))
            .limit(offset + limit)
            .subquery()
        )

    firsts = [first_rows(part) for part in parts]
    merged = sa.union_all(*(sa.select(first) for first in firsts)).subquery()
    return list(
        conn.scalars(
            sa.select(merged.c.id)
            .order_by(*ordered(merged.c.key, merged.c.id))
            .offset(offset)
            .limit(limit)
        )
    )


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
