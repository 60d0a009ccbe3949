"""Reading gold items: one item with its turns and evidence, every item of a project in
batches, the filtered and sorted pages of the items list, and an item's history."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import sqlalchemy as sa

from assay.corpus.anchoring import needing_review, needs_review
from assay.errors import InvalidInput, NotFound
from assay.gold.jsonvalues import finite
from assay.records import Evidence, Item, ItemSummary, Project, Turn
from assay.store.db import as_utc, reading
from assay.store.schema import events, evidence, items, turns
from assay.store.workspace import Workspace


def _load(conn: sa.Connection, project: Project, item_id: str) -> Item:
    row = conn.execute(
        sa.select(items).where(items.c.id == item_id, items.c.project_id == project.id)
    ).first()
    if row is None:
        raise NotFound(f"project {project.name!r} has no item {item_id!r}")
    return _assemble(conn, [row])[0]


def _assemble(conn: sa.Connection, rows: list[Any]) -> list[Item]:
    """Items with their turns and evidence, three queries for any number of rows."""
    turn_rows = conn.execute(
        sa.select(turns)
        .where(turns.c.item_id.in_([r.id for r in rows]))
        .order_by(turns.c.item_id, turns.c.ordinal)
    ).all()
    ev_rows = conn.execute(
        sa.select(evidence)
        .where(evidence.c.turn_id.in_([t.id for t in turn_rows]))
        .order_by(evidence.c.turn_id, evidence.c.ordinal)
    ).all()
    by_turn: dict[int, list[Evidence]] = {t.id: [] for t in turn_rows}
    for e in ev_rows:
        by_turn[e.turn_id].append(
            Evidence(
                doc_id=e.doc_id,
                start=e.start,
                end=e.end,
                text=e.text,
                label=e.label,
                grade=e.grade,
                group=e.group_no,
                origin=e.origin,
                anchor=e.anchor,
                author=e.author,
                created_at=as_utc(e.created_at),
            )
        )
    by_item: dict[str, list[Turn]] = {r.id: [] for r in rows}
    for t in turn_rows:
        by_item[t.item_id].append(
            Turn(
                query=t.query,
                rewrite=t.rewrite,
                query_type=t.query_type,
                enrichments=dict(t.enrichments or {}),
                answer=t.answer,
                alternatives=list(t.alternatives or ()),
                original_answer=t.original_answer,
                generation=finite(dict(t.generation or {})),
                retrieved=finite(list(t.retrieved or ())),
                evidence=by_turn[t.id],
            )
        )
    return [
        Item(
            id=row.id,
            kind=row.kind,
            status=row.status,
            origin=row.origin,
            notes=row.notes,
            extra=finite(dict(row.extra or {})),
            author=row.author,
            version=row.version,
            created_at=as_utc(row.created_at),
            updated_at=as_utc(row.updated_at),
            turns=by_item[row.id],
        )
        for row in rows
    ]


def iter_items(
    ws: Workspace,
    project: Project,
    *,
    statuses: Iterable[str] | None = None,
    batch_size: int = 500,
    conn: sa.Connection | None = None,
) -> Iterator[Item]:
    """Every item of a project (oldest first), read in batches: exports stream with this
    (each batch on a connection of its own, unless the caller passes ``conn``)."""
    where = [items.c.project_id == project.id]
    if statuses is not None:
        where.append(items.c.status.in_(list(statuses)))
    with reading(ws.engine, conn) as reader:
        ids = reader.scalars(
            sa.select(items.c.id).where(*where).order_by(items.c.created_at, items.c.id)
        ).all()
    for offset in range(0, len(ids), batch_size):
        batch = ids[offset : offset + batch_size]
        with reading(ws.engine, conn) as reader:
            found = reader.execute(sa.select(items).where(items.c.id.in_(batch)))
            rows = {r.id: r for r in found}
            yield from _assemble(reader, [rows[i] for i in batch if i in rows])


def _summary(r: Any) -> ItemSummary:
    return ItemSummary(
        id=r.id,
        kind=r.kind,
        status=r.status,
        origin=r.origin,
        query=r.query,
        query_type=r.query_type,
        turn_count=r.turn_count,
        evidence_count=r.evidence_count,
        author=r.author,
        version=r.version,
        updated_at=as_utc(r.updated_at),
        needs_review=bool(r.needs_review),
    )


def get_item(
    ws: Workspace, project: Project, item_id: str, *, conn: sa.Connection | None = None
) -> Item:
    with reading(ws.engine, conn) as conn:
        return _load(conn, project, item_id)


SORTS: dict[str, Any] = {
    "updated": items.c.updated_at,
    "created": items.c.created_at,
    "query": items.c.query,
    "status": items.c.status,
    "type": items.c.query_type,
    "author": items.c.author,
}


def list_items(
    ws: Workspace,
    project: Project,
    *,
    status: str | None = None,
    query_type: str | None = None,
    author: str | None = None,
    kind: str | None = None,
    text: str = "",
    review: bool = False,
    sort: str = "-updated",
    offset: int = 0,
    limit: int = 50,
    conn: sa.Connection | None = None,
) -> tuple[int, list[ItemSummary]]:
    """One page of a project's items and the total matching the filters; ``review``: only
    items that need review (evidence that cannot be used as gold, see
    ``assay.corpus.anchoring``)."""
    key = sort.lstrip("-")
    if key not in SORTS:
        raise InvalidInput(f"unknown sort {sort!r}; choose one of: {', '.join(SORTS)}")
    where = [items.c.project_id == project.id]
    if status:
        where.append(items.c.status == status)
    if query_type:
        where.append(items.c.query_type == query_type)
    if author:
        where.append(items.c.author == author)
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
        total = conn.scalar(sa.select(sa.func.count()).select_from(items).where(*where)) or 0
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
                items.c.author,
                items.c.version,
                items.c.updated_at,
                needs_review().label("needs_review"),
            )
            .where(*where)
            .order_by(*order)
            .offset(offset)
            .limit(limit)
        ).all()
    return int(total), [_summary(r) for r in rows]


def item_events(
    ws: Workspace, project: Project, item_id: str, *, conn: sa.Connection | None = None
) -> list[dict[str, Any]]:
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(
            sa.select(events)
            .where(events.c.project_id == project.id, events.c.item_id == item_id)
            .order_by(events.c.at, events.c.id)
        ).all()
    return [
        {
            "actor": r.actor,
            "action": r.action,
            "before": finite(r.before),
            "after": finite(r.after),
            "at": as_utc(r.at).isoformat(),
        }
        for r in rows
    ]
