"""Where a chunk of the ``recursive`` chunker starts or ends inside a region, when the next
chunk overlaps the last one (:mod:`assay.corpus.recursive_packing`): the first piece start in
the overlap, else the first word start, and piece ends in runs of a repeated separator."""

from __future__ import annotations

import re

from assay.corpus.chunker_params import RecursiveParams

_SPACE = re.compile(r"\s")


def next_start(
    text: str,
    region: int,
    start: int,
    cut: int,
    end: int,
    separator: str,
    params: RecursiveParams,
) -> int:
    """Where packing (``recursive_packing._pack``) starts the chunk after ``text[start:cut]``
    in a region that starts at ``region`` and ends at ``end``: the next chunk must still
    hold the piece after ``cut``; if that piece is longer than ``max_length`` there is no
    overlap."""
    max_length, width = params.max_length, len(separator)
    following = text.find(separator, cut, min(end, cut + max_length))
    piece_end = following + width if following != -1 else end
    lowest = max(cut - params.overlap, piece_end - max_length, start + 1)
    if lowest >= cut or piece_end - cut > max_length:
        return cut
    found = text.find(separator, max(lowest - width, region), cut - 1)
    if found == -1:
        return word_start(text, lowest, cut)
    if len(set(separator)) == 1 and width > 1:
        return overlap_start(text, region, lowest, cut, separator, found)
    return found + width


def overlap_start(text: str, region: int, lowest: int, cut: int, separator: str, found: int) -> int:
    """Where packing (``recursive_packing._pack``) starts the chunk after one that ends at
    ``cut``: the first piece start in ``[lowest, cut)`` (pieces of ``text[region:]`` split
    after each ``separator``), else the first word start there. ``found``: the first
    occurrence of ``separator`` that ends at ``lowest`` or later, before ``cut``."""
    width = len(separator)
    repeated = width > 1 and len(set(separator)) == 1
    while found != -1:
        if not repeated:
            return found + width
        # in a run of the repeated character, pieces end every ``width`` from the run's start
        run = found
        while run > region and text[run - 1] == separator[0]:
            run -= 1
        run_end = found + width
        while run_end < len(text) and text[run_end] == separator[0]:
            run_end += 1
        steps = max(0, -(-(lowest - width - run) // width))
        piece_start = run + (steps + 1) * width
        if piece_start <= run_end and piece_start < cut:
            return piece_start
        if piece_start >= cut:
            break
        found = text.find(separator, run_end, cut - 1)
    return word_start(text, lowest, cut)


def last_piece_end(text: str, start: int, found: int, separator: str) -> int:
    """End of the piece closed by the occurrence at ``found`` as a scan from ``start`` sees it:
    in a run of a repeated character ("\\n\\n\\n") that scan takes occurrences every
    ``len(separator)`` characters from the run's start, so ``found`` may sit one step late."""
    width = len(separator)
    if width > 1 and len(set(separator)) == 1:
        run = found
        while run > start and text[run - 1] == separator[0]:
            run -= 1
        found -= (found - run) % width
    return found + width


def word_start(text: str, lowest: int, end: int) -> int:
    """First offset in ``[lowest, end)`` that follows whitespace, else ``lowest``."""
    if text[lowest - 1].isspace():
        return lowest
    match = _SPACE.search(text, lowest, end)
    if match is not None and match.end() < end:
        return match.end()
    return lowest
