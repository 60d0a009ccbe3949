"""Lexical overlap between a response and passages, after RAGAPHENE's highlighter.

Three levels, all returning character offsets so a page can highlight them:

``phrase_overlaps(source, target, min_tokens=3)``
    Phrases of the source copied into the target. Both texts are compared lowercased with
    curly quotes made straight. From each word (a ``\\w+`` run) of the source, the phrase is
    grown word by word while the source text from its first to its last word (punctuation
    and spacing included) still occurs in the target; a phrase of at least ``min_tokens``
    words is kept and the search goes on after it, otherwise it starts again one word later.
    Occurrences are plain substring matches, so a phrase may start or end inside a target
    word ("he cat sat" is found in "the cat sat").
``sentence_overlaps(response, passage, min_score=0.08, min_phrase_tokens=3)``
    The passage is cut into sentences at runs of ``.``, ``!`` or ``?`` followed by
    whitespace. A sentence is kept when the Jaccard similarity of its content words with the
    response's content words reaches ``min_score``; its copied phrases are then looked up.
    Content words are lowercased ``\\w+`` runs of two or more characters that are not in
    ``STOP_WORDS``.
``coverage(response, passages)``
    Share of the response's characters inside a phrase copied into any kept sentence of any
    passage (spans merged first). ``covered_spans`` gives the merged spans.

Where we differ from RAGAPHENE: a phrase never has fewer than ``min_tokens`` words (RAGAPHENE
can keep a shorter one at the very end of the source); ``\\w`` is Unicode-aware (JavaScript's
is ASCII only, which cuts "Größe" into pieces); offsets count Python characters (code points,
not UTF-16 units); and a phrase's occurrences are given in passage offsets, not sentence ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from assay.errors import InvalidInput

STOP_WORDS: frozenset[str] = frozenset(
    """
    a about after all also an and any are as at be been being but by can could did do does
    for from had has have he her him his how i if in into is it its me more most my no nor
    not of on only or other our out over own she should so some such than that the their
    them then there these they this those through to too up very was we were what when where
    which while who whom why will with would you your
    """.split()
)
"""Function words left out of the sentence similarity (our own list of about 90 words)."""

_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"\s*[.!?]+\s+")
_QUOTES = str.maketrans(
    {
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
    }
)


class PhraseMatch(NamedTuple):
    """A source phrase found in the target: its source span and every target occurrence."""

    start: int
    end: int
    text: str
    target_spans: tuple[tuple[int, int], ...]


class SentenceOverlap(NamedTuple):
    """A passage sentence similar enough to the response, with the phrases copied into it."""

    start: int
    end: int
    text: str
    score: float
    phrases: tuple[PhraseMatch, ...]


def _normalize(text: str) -> str:
    """Straight quotes and lowercase, keeping every character at its offset."""
    text = text.translate(_QUOTES)
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    # A few characters (such as "İ") grow when lowercased; keep those as they are.
    return "".join(char.lower() if len(char.lower()) == 1 else char for char in text)


def _occurrences(haystack: str, needle: str) -> tuple[tuple[int, int], ...]:
    spans: list[tuple[int, int]] = []
    position = haystack.find(needle)
    while position >= 0:
        spans.append((position, position + len(needle)))
        position = haystack.find(needle, position + len(needle))
    return tuple(spans)


def phrase_overlaps(source: str, target: str, min_tokens: int = 3) -> list[PhraseMatch]:
    """Longest phrases of at least ``min_tokens`` words of ``source`` that occur in ``target``."""
    if min_tokens < 1:
        raise InvalidInput(f"min_tokens must be at least 1, got {min_tokens}")
    left, right = _normalize(source), _normalize(target)
    words = [match.span() for match in _WORD.finditer(left)]
    matches: list[PhraseMatch] = []
    first = 0
    while first + min_tokens <= len(words):
        start = words[first][0]
        last = first + min_tokens - 1
        if left[start : words[last][1]] not in right:
            first += 1
            continue
        while last + 1 < len(words) and left[start : words[last + 1][1]] in right:
            last += 1
        end = words[last][1]
        matches.append(
            PhraseMatch(start, end, source[start:end], _occurrences(right, left[start:end]))
        )
        first = last + 1
    return matches


def content_words(text: str) -> set[str]:
    """Lowercased words of two or more characters that are not stop words."""
    return {
        word for word in _WORD.findall(_normalize(text)) if len(word) > 1 and word not in STOP_WORDS
    }


def jaccard(first: set[str], second: set[str]) -> float:
    """Size of the intersection over size of the union; 0.0 if either set is empty."""
    if not first or not second:
        return 0.0
    shared = len(first & second)
    return shared / (len(first) + len(second) - shared)


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Trimmed sentence spans, cut at ``.``/``!``/``?`` runs followed by whitespace."""
    spans: list[tuple[int, int]] = []
    position = 0
    pieces = [(match.start(), match.end()) for match in _SENTENCE_END.finditer(text)]
    for piece_start, piece_end in [*pieces, (len(text), len(text))]:
        raw = text[position:piece_start]
        stripped = raw.strip()
        if stripped:
            start = position + raw.index(stripped[0])
            spans.append((start, start + len(stripped)))
        position = piece_end
    return spans


def sentence_overlaps(
    response: str, passage: str, min_score: float = 0.08, min_phrase_tokens: int = 3
) -> list[SentenceOverlap]:
    """Passage sentences similar to the response, each with its copied phrases.

    Phrase ``target_spans`` are offsets into ``passage``.
    """
    response_words = content_words(response)
    kept: list[SentenceOverlap] = []
    for start, end in split_sentences(passage):
        sentence = passage[start:end]
        score = jaccard(response_words, content_words(sentence))
        if score < min_score:
            continue
        phrases = tuple(
            phrase._replace(
                target_spans=tuple((s + start, e + start) for s, e in phrase.target_spans)
            )
            for phrase in phrase_overlaps(response, sentence, min_phrase_tokens)
        )
        kept.append(SentenceOverlap(start, end, sentence, score, phrases))
    return kept


def passage_score(sentences: Sequence[SentenceOverlap]) -> float:
    """Mean similarity of the kept sentences of one passage (0.0 if none was kept)."""
    return sum(s.score for s in sentences) / len(sentences) if sentences else 0.0


def covered_spans(
    response: str,
    passages: Sequence[str],
    min_score: float = 0.08,
    min_phrase_tokens: int = 3,
) -> list[tuple[int, int]]:
    """Merged response spans copied into any kept sentence of any passage."""
    spans = sorted(
        (phrase.start, phrase.end)
        for passage in passages
        for sentence in sentence_overlaps(response, passage, min_score, min_phrase_tokens)
        for phrase in sentence.phrases
    )
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def coverage(
    response: str,
    passages: Sequence[str],
    min_score: float = 0.08,
    min_phrase_tokens: int = 3,
) -> float:
    """Share of the response's characters copied from the passages (0.0 for an empty response)."""
    if not response:
        return 0.0
    spans = covered_spans(response, passages, min_score, min_phrase_tokens)
    return sum(end - start for start, end in spans) / len(response)
