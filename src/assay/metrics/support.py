"""How much of an answer is backed by its contexts: RAGTools' trigram support score.

``annotate_support(answer, contexts)`` follows RAGTools.jl's ``TrigramAnnotater``:

1. The answer is cut into units: a fenced code block gives one unit per line (the newlines
   between lines are units too); inline code is one unit; other text is cut into newlines,
   tabs, list markers, sentences (text up to and including ``.``, ``!`` or ``?`` runs) and
   stray punctuation. Every unit is scored, whitespace-only ones included (they score 0).
2. Each context becomes a set holding, for every token longer than one character, the token
   itself and all 3-character substrings of the token with its *boundaries*: a neighbouring
   token of exactly one character (a space, a bracket, a full stop) is glued on.
3. In a unit, tokens of one character and stop words are skipped. Another token scores 1.0
   against a context whose set holds the token itself; otherwise its score is the share of
   its own boundary trigrams (a set, plus the token itself) found in that context's set.
   In the unit, a token's left boundary is the previous *scored* token, never a space, so
   the left neighbour is glued only at the start of a context token, not of an answer token.
4. A unit's score is the best, over contexts, of the mean token score against that context;
   the context achieving it is the unit's source when the score is at least
   ``min_source_score`` (0.25). A token's sources are the contexts where it scores at least
   ``min_score`` (0.5).
5. The overall score is the mean of the unit scores weighted by unit length in characters.

Where Assay departs from RAGTools, so the overlay in the conversation workbench is right on
the answers people write: a URL (``https://…``, ``www.…``) and a number with its separators
and percent sign (``1,234.5``, ``3.2%``, ``1.234,5``) are one token each, and a full stop
inside them ends no sentence; a citation marker (``[1]``, ``[2, 3]``, ``[4-6]``) is not
scored, like a stop word, and stays with the sentence it follows.

Matching is case-sensitive and without stemming. Context indexes are 0-based here (RAGTools
prints 1-based ones). RAGTools' example (contexts "This is a test context.", "Another context
sentence.", "Final piece of context."; answer "This is a test answer. It has multiple
sentences.") scores 0.483 overall, 2/3 and 1/3 for the two sentences.

The lexical overlap of RAGAPHENE lives in ``assay.metrics.overlap``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from assay.errors import InvalidInput

_BASE_STOPWORDS = (
    "a an the and or but so then than to from at into on of per with "
    "is isn isn't are aren aren't was wasn't be been will won won't would wouldn wouldn't "
    "have haven't has hasn hasn't do don don't does did go goes went gone "
    "what why who where whom which that its their it such some these there"
).split()

STOPWORDS: frozenset[str] = frozenset(
    _BASE_STOPWORDS + [word[:1].upper() + word[1:] for word in _BASE_STOPWORDS]
)
"""Words RAGTools does not score, in lowercase and with a capital first letter."""

_URL = r"(?:https?://|www\.)[^\s<>\"'\[\]]*[^\s<>\"'\[\].,;:!?)]"
_NUMBER = r"\d+(?:[.,]\d+)*%?(?!\w)"
_CITATION = r"\[\d+(?:\s*[,;\u2013-]\s*\d+)*\]"
_TOKEN = re.compile(
    rf"{_URL}|{_CITATION}|{_NUMBER}"
    r"|\s+|=>|\(;|[,.(){}\[\];:+\-*/<>=&|!]|@\w+|[@#$%^~`\"']|\w+"
)
_WHOLE = re.compile(rf"{_URL}|{_NUMBER}")
"""Tokens whose full stops end no sentence."""
_IS_CITATION = re.compile(rf"{_CITATION}\Z")
_BLOCKS = re.compile(r"(```[\s\S]+?```)|(`[^`]*?`)|([^`]+)")
_UNITS = re.compile(
    rf"\n|\t|^\s*[*+-]\s*|^\s*\d+\.\s+|[^\n\t.!?]+[.!?]*(?:\s?{_CITATION})*|[*+\-.!?]",
    re.MULTILINE,
)


class TokenSupport(NamedTuple):
    """One answer token; ``score`` is None for tokens that are not scored."""

    start: int
    end: int
    score: float | None
    sources: tuple[int, ...]


class UnitSupport(NamedTuple):
    """One sentence (or code line, or separator) of the answer and how well it is backed."""

    start: int
    end: int
    text: str
    score: float
    source: int | None
    tokens: tuple[TokenSupport, ...]


class SupportResult(NamedTuple):
    """Overall score (length-weighted over units) and the scored units."""

    score: float
    units: tuple[UnitSupport, ...]


def is_citation(token: str) -> bool:
    """A citation marker such as ``[1]`` or ``[2, 3]``: never scored."""
    return _IS_CITATION.match(token) is not None


def tokenize(text: str) -> list[tuple[int, int]]:
    """Token spans: URLs, citation markers, numbers, whitespace runs, operators and
    punctuation, ``@macro`` and word runs.

    Characters none of these cover (such as ``?``) belong to no token.
    """
    return [match.span() for match in _TOKEN.finditer(text)]


def _with_boundaries(previous: str | None, current: str, following: str | None) -> str:
    """Glue one-character neighbours onto a token, as RAGTools' ``token_with_boundaries``."""
    if len(current) == 1:
        return current
    prefix = previous if previous is not None and len(previous) == 1 else ""
    suffix = following if following is not None and len(following) == 1 else ""
    return prefix + current + suffix


def _trigrams(text: str) -> set[str]:
    return {text[index : index + 3] for index in range(len(text) - 2)}


def context_trigrams(text: str) -> set[str]:
    """Every token (longer than one character) plus the trigrams of it with boundaries."""
    tokens = [text[start:end] for start, end in tokenize(text)]
    found: set[str] = set()
    for index, token in enumerate(tokens):
        if len(token) <= 1:
            continue
        previous = tokens[index - 1] if index > 0 else None
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        found |= _trigrams(_with_boundaries(previous, token, following))
        found.add(token)
    return found


def split_units(answer: str) -> list[tuple[int, int]]:
    """Spans of the answer's units: code lines, inline code, sentences, separators."""
    spans: list[tuple[int, int]] = []
    for block in _BLOCKS.finditer(answer):
        start, end = block.span()
        text = block.group()
        if text.startswith("```"):
            offset = start
            lines: list[tuple[int, int]] = []
            for line in text.split("\n"):
                if line:
                    lines.append((offset, offset + len(line)))
                offset += len(line) + 1
            for position, line_span in enumerate(lines):
                spans.append(line_span)
                if position + 1 < len(lines):
                    spans.append((line_span[1], line_span[1] + 1))
        elif text.startswith("`"):
            spans.append((start, end))
        else:
            masked = _WHOLE.sub(lambda m: re.sub(r"[.!?]", "_", m.group()), text)
            spans.extend((start + m.start(), start + m.end()) for m in _UNITS.finditer(masked))
    return spans


def _score_unit(
    answer: str,
    span: tuple[int, int],
    contexts: Sequence[set[str]],
    min_score: float,
    min_source_score: float,
    skip_trigrams: bool,
    stopwords: frozenset[str],
) -> UnitSupport:
    start, end = span
    text = answer[start:end]
    token_spans = tokenize(text)
    totals = [0.0] * len(contexts)
    scored = 0
    previous: str | None = None
    tokens: list[TokenSupport] = []
    for index, (token_start, token_end) in enumerate(token_spans):
        token = text[token_start:token_end]
        if len(token) == 1 or token in stopwords or is_citation(token):
            tokens.append(TokenSupport(start + token_start, start + token_end, None, ()))
            continue
        scored += 1
        following = None
        if index + 1 < len(token_spans):
            following = text[token_spans[index + 1][0] : token_spans[index + 1][1]]
        grams = _trigrams(_with_boundaries(previous, token, following))
        grams.add(token)
        best = 0.0
        sources: list[int] = []
        for context_index, context in enumerate(contexts):
            if skip_trigrams and token in context:
                score = 1.0
            else:
                score = sum(1 for gram in grams if gram in context) / len(grams)
            totals[context_index] += score
            best = max(best, score)
            if score >= min_score:
                sources.append(context_index)
        tokens.append(TokenSupport(start + token_start, start + token_end, best, tuple(sources)))
        previous = token
    unit_score = 0.0
    source: int | None = None
    if scored:
        best_context = max(range(len(contexts)), key=totals.__getitem__)
        unit_score = totals[best_context] / scored
        if unit_score >= min_source_score:
            source = best_context
    return UnitSupport(start, end, text, unit_score, source, tuple(tokens))


def annotate_support(
    answer: str,
    contexts: Sequence[str],
    *,
    min_score: float = 0.5,
    min_source_score: float = 0.25,
    skip_trigrams: bool = True,
    stopwords: Iterable[str] = STOPWORDS,
) -> SupportResult:
    """Score how well each unit of ``answer`` is supported by ``contexts`` (see module doc)."""
    if not contexts:
        raise InvalidInput("support scoring needs at least one context text, got none")
    context_sets = [context_trigrams(context) for context in contexts]
    stop = stopwords if isinstance(stopwords, frozenset) else frozenset(stopwords)
    units = tuple(
        _score_unit(answer, span, context_sets, min_score, min_source_score, skip_trigrams, stop)
        for span in split_units(answer)
    )
    weight = sum(unit.end - unit.start for unit in units)
    total = sum(unit.score * (unit.end - unit.start) for unit in units)
    return SupportResult(total / weight if weight else 0.0, units)


def support_score(answer: str, contexts: Sequence[str]) -> float:
    """Overall trigram support of ``answer`` by ``contexts``, between 0 and 1."""
    return annotate_support(answer, contexts).score
