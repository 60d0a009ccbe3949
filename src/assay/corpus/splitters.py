"""Pure chunkers by characters and by tokens: a text goes in, ``(start, end)`` spans come out.

Chunks are views on a document's text, never copies, so every chunker returns offsets:
``text[start:end]`` is the chunk. Spans are ascending, non-empty, trimmed of surrounding
whitespace (never whitespace-only) and together cover every non-whitespace character.
Lengths are Python characters (code points), like ``len(str)``. Sentence chunks are in
:mod:`assay.corpus.sentences`; the methods by name in :mod:`assay.corpus.chunker_registry`.

``recursive``
    Recursive-separator splitting as in RAGTools' ``recursive_splitter`` and LangChain's
    ``RecursiveCharacterTextSplitter(keep_separator="end")``: split on the first separator
    that occurs, keep each separator at the end of the piece it closes, greedily pack the
    pieces into chunks of at most ``max_length`` characters; a piece that is itself too long
    is split the same way with the remaining separators, and its sub-chunks are packed among
    themselves (never merged with neighbours). Where LangChain differs, on purpose:

    1. A piece longer than ``max_length`` with no separator left is cut hard every
       ``max_length`` characters; LangChain (and RAGTools) keep such a piece whole, so their
       chunks can exceed the limit. Ours never do.
    2. A piece of exactly ``max_length`` characters fits; LangChain's test is
       ``len(piece) < chunk_size``, so it splits such a piece further with the next separator.
       The sub-pieces then pack back into the same single chunk, so this shows only with
       overlap (LangChain never overlaps into or out of such a piece; we may).
    3. Chunks are trimmed and whitespace-only chunks are dropped, which equals LangChain's
       ``strip_whitespace=True`` (its default). LangChain does not strip a long piece it keeps
       whole (case 1); our hard-cut parts are trimmed like every chunk.
    4. Overlap: LangChain carries whole trailing pieces of the previous chunk (at most
       ``chunk_overlap`` characters) and gives no overlap when the last piece is longer.
       We do the same, but when no piece boundary lies inside the overlap window we start
       at the first word start in it (or exactly ``overlap`` characters back if there is no
       whitespace), so the requested overlap is honoured. A chunk that would add no new
       character after trimming is dropped.

    Hard cuts count code points, so they may separate a combining mark or an emoji
    modifier from its base character; only the hard cut can do this.

``tokens``
    Fixed windows of ``size`` word tokens (``\\w+`` or a single non-space symbol) stepping
    ``size - overlap`` tokens. A combining mark that is not a word character counts as a
    token of its own. (A cl100k variant is left out: the tokenizer embedded in
    semantic-text-splitter gives no exact token offsets.)
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from operator import itemgetter

from assay.corpus.chunker_params import (
    DEFAULT_SEPARATORS,
    RecursiveParams,
    TokenParams,
    validate_params,
)
from assay.records import Span

_NON_SPACE = re.compile(r"\S")
_SPACE = re.compile(r"\s")
_WORD_TOKEN = re.compile(r"\w+|[^\w\s]")


# --- recursive separators ---------------------------------------------------------------


def recursive_spans(
    text: str,
    *,
    max_length: int = 1000,
    overlap: int = 0,
    separators: Sequence[str] = DEFAULT_SEPARATORS,
) -> list[Span]:
    """Split ``text`` by separators, packing pieces into chunks of at most ``max_length``."""
    params = validate_params(
        "recursive",
        RecursiveParams,
        {"max_length": max_length, "overlap": overlap, "separators": tuple(separators)},
    )
    return split_recursive(text, params)


def split_recursive(text: str, params: RecursiveParams) -> list[Span]:
    """The ``recursive`` chunker with checked parameters."""
    raw: list[Span] = []
    _split_region(text, 0, len(text), _levels(params), params, raw)
    return tidy_spans(text, raw)


# A separator as the splitting uses it: the text, its length, whether the one-search path
# (:func:`_split_by_windows`) takes it, its character if it repeats one ("\n\n"), and how
# much a chunk ending with it keeps of it before trimming (minus its length).
_Level = tuple[str, int, bool, str | None, int]


def _levels(params: RecursiveParams) -> tuple[_Level, ...]:
    """The separators worked out once per text, not once per region."""
    levels = []
    for separator in params.separators:
        width = len(separator)
        repeated = separator[0] if width > 1 and separator.count(separator[0]) == width else None
        kept = len(separator.rstrip()) - width
        levels.append((separator, width, _use_windows(separator, params), repeated, kept))
    return tuple(levels)


def _split_region(
    text: str,
    start: int,
    end: int,
    levels: tuple[_Level, ...],
    params: RecursiveParams,
    out: list[Span],
) -> None:
    """Append untrimmed chunk spans for ``text[start:end]`` to ``out``."""
    max_length = params.max_length
    index = 0
    while index < len(levels) and text.find(levels[index][0], start, end) == -1:
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
    :func:`_last_piece_end` realigns. (Two characters overlap only when they are the same
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
    then :func:`_next_start` works the start out exactly."""
    max_length, overlap = params.max_length, params.overlap
    # chunks are appended without the separator's trailing whitespace: trimming drops it
    separator, width, _, repeated, kept = level
    region = start
    find, rfind, append = text.find, text.rfind, out.append
    last_start = last_end = -1  # the chunk before a guessed start
    while start < end:
        limit = start + max_length
        if end <= limit:
            append((start, end))
            return
        found = rfind(separator, start, limit)
        if found != -1:
            if repeated is not None and text[found - 1] == repeated:
                cut = _last_piece_end(text, region, found, separator)
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
                        found = find(
                            separator,
                            lowest - width if lowest - width > region else region,
                            cut - 1,
                        )
                        if found == -1:
                            start = _word_start(text, lowest, cut)
                        elif repeated is None:
                            start = found + width  # the first piece start in the overlap
                        else:
                            start = _overlap_start(text, region, lowest, cut, separator, found)
                        continue
                start = cut
                last_end = -1
                continue
        # a guess too early, or no piece end at all: none ends between the last chunk's end
        # and ``limit``, so the next one is looked for from there
        following = limit - width + 1 if limit - width + 1 > start else start
        if following < last_end:
            following = last_end
        found = find(separator, following, end)
        piece_end = end if found == -1 else found + width
        if last_end != -1:  # no new piece end after a guessed start
            if piece_end - last_end <= max_length:  # the piece fits after all: start exactly
                start = _next_start(text, region, last_start, last_end, end, separator, params)
                last_end = -1
                continue
            start, last_end = last_end, -1  # too long to share a chunk: no overlap
        _split_region(text, start, piece_end, remaining, params, out)
        start = piece_end


def _next_start(
    text: str,
    region: int,
    start: int,
    cut: int,
    end: int,
    separator: str,
    params: RecursiveParams,
) -> int:
    """Where :func:`_pack` starts the chunk after ``text[start:cut]`` in a region that
    starts at ``region`` and ends at ``end``: the next chunk must still hold the piece after
    ``cut``; if that piece is longer than ``max_length`` there is no overlap."""
    max_length, width = params.max_length, len(separator)
    following = text.find(separator, cut, min(end, cut + max_length))
    piece_end = following + width if following != -1 else end
    lowest = max(cut - params.overlap, piece_end - max_length, start + 1)
    if lowest >= cut or piece_end - cut > max_length:
        return cut
    found = text.find(separator, max(lowest - width, region), cut - 1)
    if found == -1:
        return _word_start(text, lowest, cut)
    if len(set(separator)) == 1 and width > 1:
        return _overlap_start(text, region, lowest, cut, separator, found)
    return found + width


def _overlap_start(
    text: str, region: int, lowest: int, cut: int, separator: str, found: int
) -> int:
    """Where :func:`_pack` starts the chunk after one that ends at ``cut``: the first piece
    start in ``[lowest, cut)`` (pieces of ``text[region:]`` split after each ``separator``),
    else the first word start there. ``found``: the first occurrence of ``separator`` that
    ends at ``lowest`` or later, before ``cut``."""
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
    return _word_start(text, lowest, cut)


def _last_piece_end(text: str, start: int, found: int, separator: str) -> int:
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
                chunk_start = pieces[at][0] if at < number else _word_start(text, lowest, chunk_end)
        chunk_end = piece_end
    out.append((chunk_start, chunk_end))


def _word_start(text: str, lowest: int, end: int) -> int:
    """First offset in ``[lowest, end)`` that follows whitespace, else ``lowest``."""
    if text[lowest - 1].isspace():
        return lowest
    match = _SPACE.search(text, lowest, end)
    if match is not None and match.end() < end:
        return match.end()
    return lowest


def tidy_spans(text: str, spans: list[Span]) -> list[Span]:
    """Trim whitespace; drop chunks that are blank or add nothing to the previous one."""
    tidy: list[Span] = []
    append = tidy.append
    non_space = _NON_SPACE.search
    last_start = -1
    last_end = 0
    for start, end in spans:
        if text[start].isspace():  # most chunks start on a word: no search needed
            match = non_space(text, start, end)
            if match is None:
                continue
            start = match.start()
        while text[end - 1].isspace():
            end -= 1
        if end <= last_end:
            continue
        if start == last_start:
            tidy[-1] = (start, end)  # trimming made it start where the last one did: keep one
        else:
            append((start, end))
            last_start = start
        last_end = end
    return tidy


# --- token windows ----------------------------------------------------------------------


def token_spans(
    text: str, *, size: int = 256, overlap: int = 32, tokenizer: str = "words"
) -> list[Span]:
    """Windows of ``size`` tokens, each starting ``size - overlap`` tokens after the last."""
    params = validate_params(
        "tokens", TokenParams, {"size": size, "overlap": overlap, "tokenizer": tokenizer}
    )
    return split_tokens(text, params)


def split_tokens(text: str, params: TokenParams) -> list[Span]:
    """The ``tokens`` chunker with checked parameters."""
    starts: list[int] = []
    ends: list[int] = []
    for match in _WORD_TOKEN.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
    return window_spans(starts, ends, params.size, params.size - params.overlap)


def window_spans(starts: list[int], ends: list[int], size: int, step: int) -> list[Span]:
    """Group units (given by their starts and ends) ``size`` at a time, moving ``step``."""
    count = len(starts)
    spans: list[Span] = []
    for first in range(0, count, step):
        last = min(first + size, count)
        spans.append((starts[first], ends[last - 1]))
        if last == count:
            break
    return spans
