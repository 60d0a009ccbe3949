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
from collections.abc import Sequence

from assay.corpus.chunker_params import (
    DEFAULT_SEPARATORS,
    RecursiveParams,
    TokenParams,
    validate_params,
)
from assay.corpus.recursive_packing import recursive_chunk_spans
from assay.corpus.span_tidy import SpanTidier
from assay.records import Span

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
    return recursive_chunk_spans(text, params)


def tidy_spans(text: str, spans: list[Span]) -> list[Span]:
    """Trim whitespace; drop chunks that are blank or add nothing to the previous one.
    ``spans`` ascend in both ends."""
    tidier = SpanTidier(text)
    tidier.take(spans, 0, len(spans))
    return tidier.spans


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
