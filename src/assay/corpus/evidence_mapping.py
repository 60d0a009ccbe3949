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
    chosen = [cid for cid, shared, size in overlaps if _enough(shared, length, size)]
    if not chosen and overlaps:
        chosen = [max(overlaps, key=lambda o: o[1])[0]]
    return tuple(dict.fromkeys(chosen))


def _enough(shared: int, length: int, size: int) -> bool:
    return 2 * shared >= length or 2 * shared >= size


def same_passage(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two passages of one document stand for each other under the overlap policy:
    they overlap by at least half of either one (no fallback to the largest overlap)."""
    shared = min(a[1], b[1]) - max(a[0], b[0])
    return shared > 0 and _enough(shared, max(a[1] - a[0], 1), max(b[1] - b[0], 1))
