"""Which chunks stand for an evidence passage: the one overlap policy Assay uses everywhere
(exports to chunk-based formats, gold chunk ids for experiments). Which evidence may be mapped
at all (anchored, not stale) is decided in :mod:`assay.corpus.anchoring` (``gold_span``)."""

from __future__ import annotations

from collections.abc import Iterable


def chunks_for_span(
    start: int, end: int, chunks: Iterable[tuple[str, int, int]]
) -> tuple[str, ...]:
    """The chunk ids that stand for the passage ``start..end`` (the overlap policy).

    A chunk counts when it overlaps the passage and the overlap covers at least half of the
    passage or at least half of the chunk. When no chunk passes, the chunk with the largest
    overlap stands for the passage; a passage overlapping no chunk maps to none.
    """
    length = max(end - start, 1)
    overlaps = [
        (chunk_id, min(end, c_end) - max(start, c_start), max(c_end - c_start, 1))
        for chunk_id, c_start, c_end in chunks
        if min(end, c_end) > max(start, c_start)
    ]
    chosen = [cid for cid, shared, size in overlaps if 2 * shared >= length or 2 * shared >= size]
    if not chosen and overlaps:
        chosen = [max(overlaps, key=lambda o: o[1])[0]]
    return tuple(dict.fromkeys(chosen))
