"""Lean, batched reads for exports: a million chunks and 100k items without per-row records.

The stage functions (``annotation.iter_items``, ``chunkings.iter_chunk_spans``) build full
records and sort the whole chunk join in the database; an export only needs a few columns in
a fixed order. Here items come three queries per batch (items, turns, evidence) with JSON
columns read as text and parsed only when not empty, and chunks come per batch of documents,
read along the ``(doc_id, chunking_id, ordinal)`` index so the database never sorts them all.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from assay.records import Evidence, Item, Project, StatusChange, Turn
from assay.store.db import as_utc
from assay.store.schema import chunks, documents, events, evidence, items, turns
from assay.store.workspace import Workspace

ITEM_BATCH = 1000
DOC_BATCH = 200

ChunkSpan = tuple[str, int, int]
"""``(chunk_id, start, end)`` of one chunk."""


def _json(raw: Any) -> Any:
    """A JSON column read as text; the common empty values skip the parser."""
    if raw == "{}":
        return {}
    if raw == "[]":
        return []
    if isinstance(raw, str):
        return json.loads(raw)
    return raw


def _driver_rows(conn: sa.Connection, statement: sa.Select[Any]) -> list[Any]:
    """Rows as the driver hands them over, without SQLAlchemy's per-row processing: only for
    columns of plain strings and integers, which every driver returns alike."""
    compiled = statement.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.params
    args: Any = params
    if compiled.positional:
        args = tuple(params[name] for name in compiled.positiontup or ())
    cursor = conn.connection.cursor()
    try:
        cursor.execute(str(compiled), args)
        return list(cursor.fetchall())
    finally:
        cursor.close()


def _time(value: Any, cache: dict[Any, datetime]) -> datetime:
    """A stored time in UTC (SQLite gives text, PostgreSQL a datetime); the same stamps
    recur across an export's rows, so each is converted once."""
    found = cache.get(value)
    if found is None:
        stamp = datetime.fromisoformat(value) if isinstance(value, str) else value
        cache[value] = found = as_utc(stamp)
    return found


def _text(column: sa.ColumnElement[Any]) -> sa.ColumnElement[str]:
    return sa.cast(column, sa.Text)


def item_ids(ws: Workspace, project: Project, statuses: Sequence[str] | None) -> list[str]:
    """Item ids in export order (oldest first)."""
    where = [items.c.project_id == project.id]
    if statuses is not None:
        where.append(items.c.status.in_(list(statuses)))
    with ws.engine.connect() as conn:
        return list(
            conn.scalars(
                sa.select(items.c.id).where(*where).order_by(items.c.created_at, items.c.id)
            ).all()
        )


def status_counts(ws: Workspace, project: Project) -> dict[str, int]:
    """How many items the project holds per status."""
    with ws.engine.connect() as conn:
        rows = conn.execute(
            sa.select(items.c.status, sa.func.count())
            .where(items.c.project_id == project.id)
            .group_by(items.c.status)
        ).all()
    return {status: count for status, count in rows}


def iter_item_rows(ws: Workspace, ids: Sequence[str]) -> Iterator[Item]:
    """The items of ``ids`` in that order with their turns and evidence, in batches."""
    with ws.engine.connect() as conn:  # most workspaces record no status change: skip the query
        changes = conn.scalar(sa.select(events.c.id).where(events.c.action == "status").limit(1))
    for offset in range(0, len(ids), ITEM_BATCH):
        batch = list(ids[offset : offset + ITEM_BATCH])
        with ws.engine.connect() as conn:
            yield from _item_batch(conn, batch, with_history=changes is not None)


def _status_history(conn: sa.Connection, batch: list[str]) -> dict[str, list[StatusChange]]:
    """Per item, each recorded status change, oldest first."""
    stamps: dict[Any, datetime] = {}
    rows = _driver_rows(
        conn,
        sa.select(events.c.item_id, _text(events.c.after), events.c.actor, events.c.at)
        .select_from(
            events.join(
                items,
                sa.and_(items.c.project_id == events.c.project_id, items.c.id == events.c.item_id),
            )
        )
        .where(items.c.id.in_(batch), events.c.action == "status")
        .order_by(events.c.item_id, events.c.at, events.c.id),
    )
    history: dict[str, list[StatusChange]] = {}
    for item_id, after, actor, at in rows:
        status = (_json(after) or {}).get("status")
        if isinstance(status, str):
            history.setdefault(item_id, []).append(StatusChange(status, actor, _time(at, stamps)))
    return history


def _item_batch(conn: sa.Connection, batch: list[str], *, with_history: bool) -> list[Item]:
    stamps: dict[Any, datetime] = {}
    item_rows = _driver_rows(
        conn,
        sa.select(
            items.c.id,
            items.c.kind,
            items.c.status,
            items.c.origin,
            items.c.notes,
            _text(items.c.extra),
            items.c.author,
            items.c.created_at,
            items.c.updated_at,
            items.c.version,
        ).where(items.c.id.in_(batch)),
    )
    turn_rows = _driver_rows(
        conn,
        sa.select(
            turns.c.id,
            turns.c.item_id,
            turns.c.query,
            turns.c.rewrite,
            turns.c.query_type,
            _text(turns.c.enrichments),
            turns.c.answer,
            _text(turns.c.alternatives),
            turns.c.original_answer,
            _text(turns.c.generation),
            _text(turns.c.retrieved),
        )
        .where(turns.c.item_id.in_(batch))
        .order_by(turns.c.item_id, turns.c.ordinal),
    )
    ev_rows = _driver_rows(
        conn,
        sa.select(
            evidence.c.turn_id,
            evidence.c.doc_id,
            evidence.c.start,
            evidence.c.end,
            evidence.c.text,
            evidence.c.label,
            evidence.c.grade,
            evidence.c.group_no,
            evidence.c.origin,
            evidence.c.anchor,
            evidence.c.author,
            evidence.c.created_at,
        )
        .join(turns, turns.c.id == evidence.c.turn_id)
        .where(turns.c.item_id.in_(batch))
        .order_by(evidence.c.turn_id, evidence.c.ordinal),
    )
    history = _status_history(conn, batch) if with_history else {}
    by_turn: dict[int, list[Evidence]] = {}
    for e in ev_rows:
        by_turn.setdefault(e[0], []).append(
            Evidence(
                e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9], e[10],
                _time(e[11], stamps),
            )
        )  # fmt: skip
    by_item: dict[str, list[Turn]] = {}
    for t in turn_rows:
        by_item.setdefault(t[1], []).append(
            Turn(
                query=t[2],
                rewrite=t[3],
                query_type=t[4],
                enrichments=_json(t[5]) or {},
                answer=t[6],
                alternatives=list(_json(t[7]) or ()),
                original_answer=t[8],
                generation=_json(t[9]) or {},
                retrieved=list(_json(t[10]) or ()),
                evidence=by_turn.get(t[0], []),
            )
        )
    found = {
        r[0]: Item(
            id=r[0],
            kind=r[1],
            status=r[2],
            origin=r[3],
            notes=r[4],
            extra=_json(r[5]) or {},
            author=r[6],
            created_at=_time(r[7], stamps),
            updated_at=_time(r[8], stamps),
            version=r[9],
            turns=by_item.get(r[0], []),
            status_history=history.get(r[0], []),
        )
        for r in item_rows
    }
    return [found[i] for i in batch if i in found]


def evidence_spans(ws: Workspace, project: Project) -> dict[str, set[tuple[int, int]]]:
    """The anchored passages of a project's items by document: ``{doc_id: {(start, end)}}``."""
    spans: dict[str, set[tuple[int, int]]] = {}
    with ws.engine.connect() as conn:
        rows = _driver_rows(
            conn,
            sa.select(evidence.c.doc_id, evidence.c.start, evidence.c.end)
            .join(turns, turns.c.id == evidence.c.turn_id)
            .join(items, items.c.id == turns.c.item_id)
            .where(
                items.c.project_id == project.id,
                evidence.c.doc_id.is_not(None),
                evidence.c.start.is_not(None),
                evidence.c.end.is_not(None),
            ),
        )
    for doc_id, start, end in rows:
        found = spans.get(doc_id)
        if found is None:
            found = spans[doc_id] = set()
        found.add((start, end))
    return spans


def document_ids(ws: Workspace, project: Project) -> list[str]:
    """Document ids in export order (oldest first, then by name)."""
    with ws.engine.connect() as conn:
        return list(
            conn.scalars(
                sa.select(documents.c.id)
                .where(documents.c.project_id == project.id)
                .order_by(documents.c.created_at, documents.c.name)
            ).all()
        )


def iter_document_chunks(
    ws: Workspace, chunking_id: int, doc_ids: Sequence[str], *, with_text: bool = False
) -> Iterator[tuple[str, str | None, list[ChunkSpan]]]:
    """``(doc_id, text or None, chunks in ordinal order)`` for each of ``doc_ids`` in order."""
    for offset in range(0, len(doc_ids), DOC_BATCH):
        batch = list(doc_ids[offset : offset + DOC_BATCH])
        with ws.engine.connect() as conn:
            rows = _driver_rows(
                conn,
                sa.select(chunks.c.doc_id, chunks.c.chunk_id, chunks.c.start, chunks.c.end)
                .where(chunks.c.chunking_id == chunking_id, chunks.c.doc_id.in_(batch))
                .order_by(chunks.c.doc_id, chunks.c.ordinal),
            )
            texts: dict[str, str] = {}
            if with_text:
                texts = dict(
                    conn.execute(
                        sa.select(documents.c.id, documents.c.text).where(documents.c.id.in_(batch))
                    ).all()
                )
        grouped: dict[str, list[ChunkSpan]] = {}
        for doc_id, chunk_id, start, end in rows:
            grouped.setdefault(doc_id, []).append((chunk_id, start, end))
        for doc_id in batch:
            yield doc_id, texts.get(doc_id), grouped.get(doc_id, [])
