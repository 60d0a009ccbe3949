"""Neighbouring-chunk expansion: a hit grows by the ``n`` chunks before and after it.

The neighbours are those of the same chunking and document (by ordinal); the context is the
document text from the first chunk's start to the last chunk's end, one span with exact
offsets, so ``document.text[start:end] == context.text`` always holds (overlapping chunks
merge into that span, gaps between chunks are kept). The hit's own chunk id and rank stay:
scoring still counts the chunk the search found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.records import Chunking, Hit
from assay.store.schema import chunks, documents
from assay.store.workspace import Workspace

MAX_NEIGHBOURS = 10


@dataclass(frozen=True, slots=True)
class Expanded:
    """One hit's context: ``text == document.text[start:end]``; ``chunk_ids`` the chunks
    merged, in document order."""

    hit: Hit
    start: int
    end: int
    text: str
    chunk_ids: tuple[str, ...]


def check_neighbours(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_NEIGHBOURS:
        raise InvalidInput(
            f"expand must be a whole number of neighbouring chunks from 0 to {MAX_NEIGHBOURS}, "
            f"got {n!r}"
        )
    return n


def expand_hits(ws: Workspace, chunking: Chunking, hits: Sequence[Hit], n: int) -> list[Expanded]:
    """Each hit with ``n`` chunks either side merged into one context (``n = 0``: the
    chunk itself)."""
    check_neighbours(n)
    if not hits:
        return []
    doc_ids = sorted({hit.doc_id for hit in hits})
    with ws.engine.connect() as conn:
        rows = conn.execute(
            sa.select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.start, chunks.c.end)
            .where(chunks.c.chunking_id == chunking.id, chunks.c.doc_id.in_(doc_ids))
            .order_by(chunks.c.doc_id, chunks.c.ordinal)
        ).all()
        texts = dict(
            conn.execute(
                sa.select(documents.c.id, documents.c.text).where(documents.c.id.in_(doc_ids))
            ).all()
        )
    ordered: dict[str, list[tuple[str, int, int]]] = {}
    for row in rows:
        ordered.setdefault(row.doc_id, []).append((row.chunk_id, row.start, row.end))
    position = {
        chunk_id: (doc_id, index)
        for doc_id, spans in ordered.items()
        for index, (chunk_id, _, _) in enumerate(spans)
    }
    expanded: list[Expanded] = []
    for hit in hits:
        text = texts.get(hit.doc_id)
        if hit.chunk_id not in position or text is None:  # the index is behind: keep the hit
            expanded.append(Expanded(hit, hit.start, hit.end, hit.text, (hit.chunk_id,)))
            continue
        doc_id, index = position[hit.chunk_id]
        spans = ordered[doc_id][max(0, index - n) : index + n + 1]
        start = min(s for _, s, _ in spans)
        end = max(e for _, _, e in spans)
        expanded.append(Expanded(hit, start, end, text[start:end], tuple(c for c, _, _ in spans)))
    return expanded
