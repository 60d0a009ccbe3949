"""Lean, batched reads for exports: a million chunks and 100k items without per-row records.

Items come from ``assay.gold.item_lists`` in large batches with their status history.
``chunkings.iter_chunk_spans`` builds full records and sorts the whole chunk join in the
database; an export only needs a few columns in a fixed order, so here chunks come per batch
of documents, read along the ``(doc_id, chunking_id, ordinal)`` index so the database never
sorts them all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import sqlalchemy as sa

from assay.gold.item_lists import copies_of_project, items_in_batches
from assay.records import Item, Project
from assay.store.db import driver_rows
from assay.store.schema import chunks, documents, events, evidence, items, turns
from assay.store.workspace import Workspace

ITEM_BATCH = 1000
DOC_BATCH = 200

ChunkSpan = tuple[str, int, int]
"""``(chunk_id, start, end)`` of one chunk."""


def status_counts(ws: Workspace, project: Project) -> dict[str, int]:
    """How many gold items (no annotators' copies) the project holds per status: all less
    the copies, each counted by an index."""
    counts: dict[str, int] = {}
    with ws.engine.connect() as conn:
        for where, sign in (
            ([items.c.project_id == project.id], 1),
            (copies_of_project(project.id), -1),
        ):
            rows = conn.execute(
                sa.select(items.c.status, sa.func.count()).where(*where).group_by(items.c.status)
            ).all()
            for status, count in rows:
                counts[status] = counts.get(status, 0) + sign * count
    return {status: count for status, count in counts.items() if count}


def iter_item_rows(ws: Workspace, ids: Sequence[str]) -> Iterator[Item]:
    """The items of ``ids`` in that order with their turns, evidence and status history, in
    batches, their free JSON as stored."""
    with ws.engine.connect() as conn:  # most workspaces record no status change: skip the query
        changes = conn.scalar(sa.select(events.c.id).where(events.c.action == "status").limit(1))
    yield from items_in_batches(
        ws, ids, batch_size=ITEM_BATCH, history=changes is not None, finite_json=False
    )


def evidence_spans(ws: Workspace, project: Project) -> dict[str, set[tuple[int, int]]]:
    """The anchored passages of a project's items by document: ``{doc_id: {(start, end)}}``."""
    spans: dict[str, set[tuple[int, int]]] = {}
    with ws.engine.connect() as conn:
        rows = driver_rows(
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
            rows = driver_rows(
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
