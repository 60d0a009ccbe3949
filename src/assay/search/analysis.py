"""Text analysis for keyword search: one analyzer per language, query terms, snippets.

The same tantivy analyzer turns chunk text into index terms, a query into search terms and a
snippet into highlightable tokens, so a word is highlighted exactly when the index matched it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import tantivy

from assay.errors import InvalidInput
from assay.records import Hit, Span

SNOWBALL_LANGUAGES: dict[str, str] = {
    "ar": "arabic",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "en": "english",
    "es": "spanish",
    "fi": "finnish",
    "fr": "french",
    "hu": "hungarian",
    "it": "italian",
    "nl": "dutch",
    "no": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
}
"""Project language code -> name of the Snowball stemmer tantivy ships for it."""

MAX_TOKEN_CHARS = 40
"""Longer tokens (hashes, base64, URLs glued together) are dropped: nobody searches for them."""

MAX_QUERY_TERMS = 1024
"""A pasted page as a query still runs; terms past this many distinct ones are ignored."""

SNIPPET_CHARS = 240
ELLIPSIS = "…"

_WORD = re.compile(r"\S+")


def snowball_name(language: str) -> str:
    """The stemmer name for a project language code, or InvalidInput naming the valid codes."""
    name = SNOWBALL_LANGUAGES.get(language.strip().lower())
    if name is None:
        valid = ", ".join(sorted(SNOWBALL_LANGUAGES))
        raise InvalidInput(
            f"Keyword search has no stemmer for language {language!r}; use one of: {valid}."
        )
    return name


def build_analyzer(language: str) -> tantivy.TextAnalyzer:
    """Split on non-alphanumerics, lowercase, stem, then fold accents.

    Folding after stemming keeps the stemmer's view of accented suffixes (French, Spanish)
    while making "cafe" and "café" the same term. German umlauts are already folded by the
    German stemmer itself ("Fahrräder" -> "fahrrad").
    """
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_CHARS + 1))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer(snowball_name(language)))
        .filter(tantivy.Filter.ascii_fold())
        .build()
    )


def query_terms(analyzer: tantivy.TextAnalyzer, query: str) -> list[str]:
    """Distinct index terms of a query in first-seen order; words only, no operators."""
    terms: dict[str, None] = {}
    for term in analyzer.analyze(query):
        if term and term not in terms:
            terms[term] = None
            if len(terms) >= MAX_QUERY_TERMS:
                break
    return list(terms)


# Words too common to be worth highlighting (ranking still counts them, BM25 weights them low).
HIGHLIGHT_STOP_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        """a an and are as at be by can do does for from has have how i in is it its of on or
        that the their there this to was what when where which who why will with""".split()
    ),
    "de": frozenset(
        """am an auf aus bei das dem den der des die ein eine einem einen einer es für hat im in
        ist mit nach nicht oder sich sie sind über um und von vor was wer wie wird wo zu zum
        zur""".split()
    ),
}


def stop_terms(analyzer: tantivy.TextAnalyzer, language: str) -> frozenset[str]:
    """The analysed stop words of a language; indexes compute them once, not per query."""
    return frozenset(
        term
        for word in HIGHLIGHT_STOP_WORDS.get(language, frozenset())
        for term in analyzer.analyze(word)
    )


def highlight_terms(terms: list[str], stop: frozenset[str]) -> set[str]:
    """The query terms worth marking in a snippet: stop words (from :func:`stop_terms`) are
    left out, unless the query has nothing else."""
    kept = {term for term in terms if term not in stop}
    return kept or set(terms)


@dataclass(frozen=True, slots=True)
class _Match:
    term: str
    start: int
    end: int


def matched_spans(analyzer: tantivy.TextAnalyzer, text: str, terms: set[str]) -> list[_Match]:
    """Every token of `text` whose analysed form is one of `terms`, with character offsets."""
    return [
        _Match(token.text, token.char_offset_from, token.char_offset_to)
        for token in analyzer.pre_tokenize(text).tokens
        if token.text in terms
    ]


def make_snippet(
    analyzer: tantivy.TextAnalyzer,
    text: str,
    terms: set[str],
    max_chars: int = SNIPPET_CHARS,
) -> tuple[str, tuple[Span, ...]]:
    """A short excerpt around the densest run of matches, cut between words, and the
    ``(start, end)`` offsets of every matched token inside that excerpt."""
    matches = matched_spans(analyzer, text, terms)
    if len(text) <= max_chars:
        return text, tuple((m.start, m.end) for m in matches)

    budget = max_chars - 2 * len(ELLIPSIS)
    first, last = _best_cluster(matches, budget)
    start, end = _word_window(text, first, last, budget)
    prefix = ELLIPSIS if start > 0 else ""
    suffix = ELLIPSIS if end < len(text) else ""
    shift = len(prefix) - start
    highlights = tuple(
        (m.start + shift, m.end + shift) for m in matches if m.start >= start and m.end <= end
    )
    return prefix + text[start:end] + suffix, highlights


def ranked_hits(
    analyzer: tantivy.TextAnalyzer,
    terms: set[str],
    found: Iterable[tuple[str, str, int, int, float, str]],
) -> list[Hit]:
    """Hits ranked 1, 2 … in the order of ``found`` (``(doc_id, chunk_id, start, end, score,
    text)``, best first), each with a snippet around ``terms``."""
    hits: list[Hit] = []
    for rank, (doc_id, chunk_id, start, end, score, text) in enumerate(found, start=1):
        snippet, highlights = make_snippet(analyzer, text, terms)
        hits.append(Hit(doc_id, chunk_id, start, end, score, rank, text, snippet, highlights))
    return hits


def _best_cluster(matches: list[_Match], budget: int) -> tuple[int, int]:
    """Character range of the run of matches that fits `budget` and holds the most distinct
    terms (then the most matches; the earliest wins ties)."""
    if not matches:
        return 0, 0
    best = (0, 0)
    best_range = (matches[0].start, matches[0].end)
    counts: dict[str, int] = {}
    left = 0
    for right, match in enumerate(matches):
        counts[match.term] = counts.get(match.term, 0) + 1
        while match.end - matches[left].start > budget and left < right:
            gone = matches[left].term
            counts[gone] -= 1
            if counts[gone] == 0:
                del counts[gone]
            left += 1
        score = (len(counts), right - left + 1)
        if score > best:
            best = score
            best_range = (matches[left].start, min(match.end, matches[left].start + budget))
    return best_range


def _word_window(text: str, first: int, last: int, budget: int) -> tuple[int, int]:
    """Grow ``[first, last)`` by whole whitespace-separated words, alternately left and right,
    while it fits `budget`; fall back to a plain character cut inside an overlong word.

    Only words within `budget` + 1 characters of the matches are read: a word cut by that
    bound could never fit, exactly as the whole word could not, so long chunks cost no more.
    """
    low, high = (max(0, first - budget - 1), min(len(text), last + budget + 1))
    words = [m.span() for m in _WORD.finditer(text, low, high)] if last > first else []
    if not words:
        words = [m.span() for m in _WORD.finditer(text)]
    if not words:
        return 0, min(len(text), budget)
    lo = _word_at(words, first)
    hi = _word_at(words, max(first, last - 1))
    start, end = words[lo][0], words[hi][1]
    if end - start > budget:
        # One token run longer than the budget (a URL, a table row without spaces).
        start = max(0, min(first, len(text) - budget))
        return start, start + budget
    grew = True
    while grew:
        grew = False
        if lo > 0 and end - words[lo - 1][0] <= budget:
            lo -= 1
            start = words[lo][0]
            grew = True
        if hi + 1 < len(words) and words[hi + 1][1] - start <= budget:
            hi += 1
            end = words[hi][1]
            grew = True
    return start, end


def _word_at(words: list[tuple[int, int]], offset: int) -> int:
    """Index of the word containing `offset`, or of the nearest word after it."""
    lo, hi = 0, len(words) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if words[mid][1] <= offset:
            lo = mid + 1
        else:
            hi = mid
    return lo
