"""How the ``recursive`` chunker of :mod:`assay.corpus.splitters` finds its chunks: untrimmed
``(start, end)`` spans, in order, trimmed by :class:`assay.corpus.span_tidy.SpanTidier` in
batches of a few hundred while their text is still in the processor's cache (one trimming
pass after the whole text cost a quarter of the time re-reading the chunks' ends).

The reference semantics is :func:`_pack`: split a region after each occurrence of its first
separator that occurs, greedily pack the pieces into chunks of at most ``max_length``
characters with overlap, split a piece that is too long by the remaining separators. Two
faster ways give the same spans without listing every piece where that would cost more:

- :func:`_split_by_piece_ends` for the whole text: the ends of its top-level pieces
  (usually paragraphs) come from one regex scan, and each chunk takes two bisections.
- :func:`_split_by_windows` inside a region (a long paragraph split into sentences): one
  ``rfind`` a chunk finds the last piece end that fits; the cost follows the chunks.

Multi-character separators are searched forward with a regex that looks for their first
character and looks ahead for the rest (:func:`_forward_finder`): in CPython that is several
times faster than ``str.find`` with a separator whose last character is common (". ") or
that is absent for long stretches ("\\n\\n" in a paragraph); backward, ``str.rfind`` is fast.

When the next chunk overlaps the last one, where it starts inside a region is
:func:`next_start`'s answer: the first piece start in the overlap, else the first word start,
and piece ends in runs of a repeated separator.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from itertools import islice
from operator import itemgetter

from assay.corpus.chunker_params import RecursiveParams
from assay.corpus.span_tidy import SpanTidier
from assay.records import Span

_SPACE = re.compile(r"\s")


def recursive_chunk_spans(text: str, params: RecursiveParams) -> list[Span]:
    """The chunks of ``text``, trimmed (:class:`assay.corpus.span_tidy.SpanTidier`)."""
    raw: list[Span] = []  # untrimmed, in order; both ends ascend strictly
    tidier = SpanTidier(text)
    levels = _levels(params)
    index, ends = _top_piece_ends(text, levels, params.max_length)
    if ends is None:
        _split_region(text, 0, len(text), levels[index:], params, raw)
        trimmed = 0
    else:
        trimmed = _split_by_piece_ends(
            text, ends, levels[index], levels[index + 1 :], params, raw, tidier
        )
    tidier.take(raw, trimmed, len(raw))
    return tidier.spans


# untrimmed spans handed to the trimming at a time, while their text is still in the cache
_BATCH = 256


# pieces looked at before deciding whether the text's pieces are long enough
_PROBE = 64


def _top_piece_ends(
    text: str, levels: tuple[_Level, ...], max_length: int
) -> tuple[int, list[int] | None]:
    """The first separator that occurs in ``text`` (its index; ``len(levels)`` if none) and
    the ends of the pieces it splits the text into, found by one regex scan. None instead
    of the ends where there are none or the pieces are short (under ``max_length / 2`` on
    average, judged from the first ones, then from all): one ``rfind`` a chunk
    (:func:`_split_by_windows`) then costs less than listing them."""
    end = len(text)
    index, ends = 0, []
    while index < len(levels):
        finditer = levels[index][6].finditer
        ends = [match.end() for match in islice(finditer(text), _PROBE)]
        if ends:
            break
        index += 1
    if not ends:
        return index, None
    if len(ends) == _PROBE:
        if ends[-1] < _PROBE * max_length // 2:
            return index, None
        cap = 2 * end // max_length + 1
        ends += [match.end() for match in islice(finditer(text, ends[-1]), cap)]
        if len(ends) >= cap:
            return index, None
    if ends[-1] < end:
        ends.append(end)
    return index, ends


def _split_by_piece_ends(
    text: str,
    ends: list[int],
    level: _Level,
    remaining: tuple[_Level, ...],
    params: RecursiveParams,
    out: list[Span],
    tidier: SpanTidier,
) -> int:
    """Chunk the whole text from the ends of its pieces as :func:`_pack` does, with two
    bisections a chunk; a piece longer than ``max_length`` is split by ``remaining``.
    Hands ``out`` to ``tidier`` in batches; returns how many spans it has taken."""
    max_length, overlap, kept = params.max_length, params.overlap, level[4]
    append, space = out.append, _SPACE.search
    # a long piece goes straight to the windows when the next separator takes them
    windows = remaining[0] if remaining and remaining[0][2] else None
    after = remaining[1:]
    count = len(ends)
    start = first = 0  # the chunk's start; the index of the first piece end after it
    trimmed = 0  # spans handed to ``tidier``; the last one may still change
    while first < count:
        limit = start + max_length
        if ends[first] > limit:  # the piece from ``start`` is too long: split it further
            if windows is None:
                _split_region(text, start, ends[first], remaining, params, out)
            else:
                _split_by_windows(text, start, ends[first], windows, after, params, out)
            start = ends[first]
            first += 1
            if kept and first < count:  # drop the separator's whitespace from the last chunk
                _trim_last(out, start + kept)
            if len(out) - trimmed > _BATCH:
                trimmed = tidier.take(out, trimmed, len(out) - 1)
            continue
        last = bisect_right(ends, limit, first + 1) - 1
        cut = ends[last]
        if last + 1 == count:
            append((start, cut))
            break
        append((start, cut + kept))
        following = ends[last + 1]
        if following - cut > max_length or not overlap:
            start, first = cut, last + 1
            continue
        # the next chunk may start at ``lowest`` and still hold the following piece
        lowest = cut - overlap
        if lowest < following - max_length:
            lowest = following - max_length
        if lowest <= start:
            lowest = start + 1
        if lowest >= cut:
            start, first = cut, last + 1
            continue
        at = bisect_left(ends, lowest, first, last) if first < last else last
        if at < last:
            start, first = ends[at], at + 1
        else:
            first = last  # the first word start in the overlap (:func:`word_start`, inlined)
            if text[lowest - 1].isspace():
                start = lowest
            else:
                match = space(text, lowest, cut)
                start = lowest if match is None or match.end() >= cut else match.end()
    return trimmed


def _trim_last(out: list[Span], end: int) -> None:
    """End the last span at ``end`` if it ends later and both ends still ascend strictly
    (as :class:`assay.corpus.span_tidy.SpanTidier` needs)."""
    start, last_end = out[-1]
    if start < end < last_end and (len(out) == 1 or out[-2][1] < end):
        out[-1] = (start, end)


# A separator as the splitting uses it: the text, its length, whether the one-search path
# (:func:`_split_by_windows`) takes it, its character if it repeats one ("\n\n"), how much
# a chunk ending with it keeps of it before trimming (minus its length), the ``search`` of a
# pattern that finds it like ``str.find`` (:func:`_forward_finder`), a pattern whose matches
# end where the pieces of a region end (occurrences one after the other, as ``str.split``),
# and the chunks' ``max_length`` and ``overlap``: the loops a region read one tuple, not the
# parameters' attributes (several times slower, thousands of regions a text).
_Level = tuple[
    str, int, bool, str | None, int, Callable[..., re.Match[str] | None], re.Pattern[str], int, int
]


def _levels(params: RecursiveParams) -> tuple[_Level, ...]:
    """The separators worked out once per text, not once per region."""
    levels = []
    max_length, overlap = params.max_length, params.overlap
    for separator in params.separators:
        width = len(separator)
        repeated = separator[0] if width > 1 and separator.count(separator[0]) == width else None
        kept = len(separator.rstrip()) - width
        search = _forward_finder(separator).search
        pieces = re.compile(re.escape(separator))
        windows = _use_windows(separator, params)
        levels.append(
            (separator, width, windows, repeated, kept, search, pieces, max_length, overlap)
        )
    return tuple(levels)


def _forward_finder(separator: str) -> re.Pattern[str]:
    """A pattern whose match starts where ``str.find`` finds ``separator`` (occurrences may
    overlap). Searching for one literal character and looking ahead for the rest is several
    times faster than ``str.find`` with a separator whose last character is common (". "),
    and also faster over the long stretches without "\\n\\n" in a paragraph."""
    if len(separator) == 1:
        return re.compile(re.escape(separator))
    return re.compile(re.escape(separator[0]) + "(?=" + re.escape(separator[1:]) + ")")


def _split_region(
    text: str,
    start: int,
    end: int,
    levels: tuple[_Level, ...],
    params: RecursiveParams,
    out: list[Span],
) -> None:
    """Append untrimmed chunk spans for ``text[start:end]`` to ``out``."""
    if levels and levels[0][2]:
        # no need to look for the separator first: where it does not occur, the windows
        # find no piece end and hand the region on to the next separator
        _split_by_windows(text, start, end, levels[0], levels[1:], params, out)
        return
    max_length = params.max_length
    index = 0
    # ``rfind``: the reverse search is the fast one for separators like ". "
    while index < len(levels) and text.rfind(levels[index][0], start, end) == -1:
        index += 1
    if index == len(levels):
        # No separator left: cut hard, stepping so that parts overlap by ``overlap``.
        step = max_length - params.overlap
        for cut in range(start, end, step):
            out.append((cut, min(cut + max_length, end)))
            if cut + max_length >= end:
                break
        return

    level = levels[index]
    if level[2]:
        _split_by_windows(text, start, end, level, levels[index + 1 :], params, out)
        return
    separator = level[0]

    # Pieces end just after each separator; the region's rest is the last piece.
    pieces: list[Span] = []
    width = len(separator)
    position = start
    found = text.find(separator, position, end)
    while found != -1:
        pieces.append((position, found + width))
        position = found + width
        found = text.find(separator, position, end)
    if position < end:
        pieces.append((position, end))

    remaining = levels[index + 1 :]
    group_start = 0
    for number, (piece_start, piece_end) in enumerate(pieces):
        if piece_end - piece_start > max_length:
            if group_start < number:
                _pack(text, pieces[group_start:number], params, out)
            _split_region(text, piece_start, piece_end, remaining, params, out)
            group_start = number + 1
    if group_start < len(pieces):
        _pack(text, pieces[group_start:], params, out)


def _use_windows(separator: str, params: RecursiveParams) -> bool:
    """Whether :func:`_split_by_windows` gives this region's chunks: when two occurrences of
    ``separator`` never overlap or it is one character repeated ("\\n\\n"), whose occurrences
    :func:`last_piece_end` realigns. (Two characters overlap only when they are the same
    one.)"""
    if len(separator) < 3 or len(set(separator)) == 1:
        return True
    return not any(separator[:k] == separator[-k:] for k in range(1, len(separator)))


def _split_by_windows(
    text: str,
    start: int,
    end: int,
    level: _Level,
    remaining: tuple[_Level, ...],
    params: RecursiveParams,
    out: list[Span],
) -> None:
    """What splitting into pieces and packing them (:func:`_pack`) gives, one chunk at a
    time: a chunk runs to the last piece end within ``max_length`` (one ``rfind``), so the
    cost follows the number of chunks, not of pieces. A piece longer than ``max_length`` is
    split by the remaining separators, as in :func:`_split_region`.

    With overlap the next chunk starts at the first piece start (else word start) at most
    ``overlap`` back, a guess that ignores the piece after the chunk. :func:`_pack` would
    start later only where that piece does not fit in a chunk from the guess; then the
    guessed chunk cannot reach past the last one, which the next ``rfind`` shows, and only
    then :func:`next_start` works the start out exactly."""
    # chunks are appended without the separator's trailing whitespace: trimming drops it
    separator, width, _, repeated, kept, search, _, max_length, overlap = level
    region = start
    rfind, append = text.rfind, out.append
    last_start = last_end = -1  # the chunk before a guessed start
    while start < end:
        limit = start + max_length
        if end <= limit:
            append((start, end))
            return
        found = rfind(separator, start, limit)
        if found != -1:
            if repeated is not None and text[found - 1] == repeated:
                cut = last_piece_end(text, region, found, separator)
            else:
                cut = found + width
            if cut > last_end:
                append((start, cut + kept))
                if overlap:
                    lowest = cut - overlap
                    if lowest <= start:
                        lowest = start + 1
                    if lowest < cut:
                        last_start, last_end = start, cut
                        match = search(
                            text, lowest - width if lowest - width > region else region, cut - 1
                        )
                        if match is None:
                            start = word_start(text, lowest, cut)
                            continue
                        found = match.start()
                        if repeated is None:
                            start = found + width  # the first piece start in the overlap
                        else:
                            start = overlap_start(text, region, lowest, cut, separator, found)
                        continue
                start = cut
                last_end = -1
                continue
        # a guess too early, or no piece end at all: none ends between the last chunk's end
        # and ``limit``, so the next one is looked for from there
        following = limit - width + 1 if limit - width + 1 > start else start
        if following < last_end:
            following = last_end
        match = search(text, following, end)
        piece_end = end if match is None else match.start() + width
        if last_end != -1:  # no new piece end after a guessed start
            if piece_end - last_end <= max_length:  # the piece fits after all: start exactly
                start = next_start(text, region, last_start, last_end, end, separator, params)
                last_end = -1
                continue
            start, last_end = last_end, -1  # too long to share a chunk: no overlap
        _split_region(text, start, piece_end, remaining, params, out)
        start = piece_end


def _pack(text: str, pieces: list[Span], params: RecursiveParams, out: list[Span]) -> None:
    """Greedily pack contiguous pieces (each <= max_length) into chunks, with overlap."""
    max_length, overlap = params.max_length, params.overlap
    chunk_start = chunk_end = pieces[0][0]
    for number, (_, piece_end) in enumerate(pieces):
        if chunk_end > chunk_start and piece_end - chunk_start > max_length:
            out.append((chunk_start, chunk_end))
            # The next chunk may begin at lowest here and still hold this piece.
            lowest = max(chunk_end - overlap, piece_end - max_length, chunk_start + 1)
            if lowest >= chunk_end:
                chunk_start = chunk_end
            else:
                at = bisect_left(pieces, lowest, 0, number, key=itemgetter(0))
                chunk_start = pieces[at][0] if at < number else word_start(text, lowest, chunk_end)
        chunk_end = piece_end
    out.append((chunk_start, chunk_end))


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
