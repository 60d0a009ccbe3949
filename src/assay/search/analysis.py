"""Text analysis for keyword search: one analyzer per language, query terms, snippets.

The same tantivy analyzer turns chunk text into index terms, a query into search terms and a
snippet into highlightable tokens, so a word is highlighted exactly when the index matched it.
"""

from __future__ import annotations

from collections.abc import Iterable

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


def highlight_terms(terms: list[str], stop: frozenset[str]) -> list[str]:
    """The query terms worth marking in a snippet, in query order: stop words (from
    :func:`stop_terms`) are left out, unless the query has nothing else."""
    return [term for term in terms if term not in stop] or terms


def matched_spans(analyzer: tantivy.TextAnalyzer, text: str, terms: set[str]) -> list[Span]:
    """Character offsets of every token of `text` whose analysed form is one of `terms`."""
    return [
        (token.char_offset_from, token.char_offset_to)
        for token in analyzer.pre_tokenize(text).tokens
        if token.text in terms
    ]


def make_snippet(
    analyzer: tantivy.TextAnalyzer,
    text: str,
    terms: set[str],
    max_chars: int = SNIPPET_CHARS,
) -> tuple[str, tuple[Span, ...]]:
    """The snippet of `text` around the tokens that `analyzer` turns into one of `terms`."""
    return Snippets(analyzer, max_chars).around(text, matched_spans(analyzer, text, terms))


class Snippets:
    """Builds the snippets of one search's hits.

    Choosing where a snippet goes counts distinct terms, so it needs the term of each matched
    word, but only when a hit's matches lie too far apart to fit; the terms are remembered for
    the rest of the search, whose hits share their words.
    """

    def __init__(self, analyzer: tantivy.TextAnalyzer, max_chars: int = SNIPPET_CHARS) -> None:
        self._analyzer = analyzer
        self._max_chars = max_chars
        self._budget = max_chars - 2 * len(ELLIPSIS)
        self._terms: dict[str, str] = {}

    def around(self, text: str, matches: list[Span]) -> tuple[str, tuple[Span, ...]]:
        """A short excerpt of `text` around the densest run of `matches` (the character
        offsets of matched tokens, in text order), cut between words, and the ``(start,
        end)`` offsets of every match inside that excerpt."""
        if len(text) <= self._max_chars:
            return text, tuple(matches)
        budget = self._budget
        if matches and matches[-1][1] - matches[0][0] <= budget:
            first, last = matches[0][0], matches[-1][1]  # all of them fit
        else:
            seen = self._terms
            terms = [seen.get(text[a:b]) or self._term(text[a:b]) for a, b in matches]
            first, last = _best_cluster(matches, terms, budget)
        start, end = _word_window(text, first, last, budget)
        prefix = ELLIPSIS if start > 0 else ""
        suffix = ELLIPSIS if end < len(text) else ""
        shift = len(prefix) - start
        highlights = tuple([(a + shift, b + shift) for a, b in matches if a >= start and b <= end])
        return prefix + text[start:end] + suffix, highlights

    def _term(self, word: str) -> str:
        term = self._terms.get(word)
        if term is None:
            analysed = self._analyzer.analyze(word)  # a matched word is one token
            term = self._terms[word] = analysed[0] if analysed else word
        return term


def ranked_hits(
    analyzer: tantivy.TextAnalyzer,
    terms: set[str],
    found: Iterable[tuple[str, str, int, int, float, str]],
) -> list[Hit]:
    """Hits ranked 1, 2 … in the order of ``found`` (``(doc_id, chunk_id, start, end, score,
    text)``, best first), each with a snippet around ``terms``."""
    snippets = Snippets(analyzer)
    hits: list[Hit] = []
    for rank, (doc_id, chunk_id, start, end, score, text) in enumerate(found, start=1):
        matches = matched_spans(analyzer, text, terms)
        snippet, highlights = snippets.around(text, matches)
        hits.append(Hit(doc_id, chunk_id, start, end, score, rank, text, snippet, highlights))
    return hits


def _best_cluster(matches: list[Span], terms: list[str], budget: int) -> tuple[int, int]:
    """Character range of the run of matches (``terms[i]`` is the term of ``matches[i]``)
    that fits `budget` and holds the most distinct terms (then the most matches; the earliest
    wins ties)."""
    if not matches:
        return 0, 0
    best = (0, 0)
    best_range = matches[0]
    counts: dict[str, int] = {}
    left = 0
    left_start = matches[0][0]
    for right, (_start, end) in enumerate(matches):
        counts[terms[right]] = counts.get(terms[right], 0) + 1
        while end - left_start > budget and left < right:
            gone = terms[left]
            counts[gone] -= 1
            if counts[gone] == 0:
                del counts[gone]
            left += 1
            left_start = matches[left][0]
        score = (len(counts), right - left + 1)
        if score > best:
            best = score
            best_range = (left_start, min(end, left_start + budget))
    return best_range


def _word_window(text: str, first: int, last: int, budget: int) -> tuple[int, int]:
    """The whole words holding ``[first, last)``, widened by half of what `budget` leaves on
    the left (more if the text ends sooner on the right) and by the rest on the right, words
    cut at either edge left out; a character cut inside an overlong word.

    Only the characters within `budget` of ``[first, last)`` are read, with a few string
    scans and no Python loop over words, so the cost stays small whatever the chunk.
    """
    if last <= first:  # no match: the beginning of the text
        first = last = len(text) - len(text.lstrip())
        if first == len(text):
            return 0, min(len(text), budget)
    start, end = first, last
    if start > 0 and not text[start - 1].isspace():  # inside a word: back to its start
        start -= len(text[max(0, first - budget) : first].rsplit(None, 1)[-1])
    if end < len(text) and not text[end].isspace():  # inside a word: on to its end
        end += len(text[last : last + budget].split(None, 1)[0])
    if end - start > budget:
        # One token run longer than the budget (a URL, a table row without spaces).
        start = max(0, min(first, len(text) - budget))
        return start, min(len(text), start + budget)
    spare = budget - (end - start)
    left = spare - (len(text) - end)  # what the right side cannot take
    if left < spare // 2:
        left = spare // 2
    start = _first_word_start(text, start - left if left < start else 0, start)
    right = start + budget
    return start, _last_word_end(text, end, right if right < len(text) else len(text))


def _first_word_start(text: str, offset: int, word_start: int) -> int:
    """The first word start in ``[offset, word_start]`` (`word_start` is one): a word that
    `offset` cuts is left out."""
    between = text[offset:word_start]
    if between and not between[0].isspace() and offset > 0 and not text[offset - 1].isspace():
        parts = between.split(None, 1)
        return word_start - len(parts[1]) if len(parts) == 2 else word_start
    return word_start - len(between.lstrip())


def _last_word_end(text: str, word_end: int, offset: int) -> int:
    """The last word end in ``[word_end, offset]`` (`word_end` is one): a word that `offset`
    cuts is left out."""
    between = text[word_end:offset]
    if between and not between[-1].isspace() and offset < len(text) and not text[offset].isspace():
        parts = between.rsplit(None, 1)
        return word_end + len(parts[0]) if len(parts) == 2 else word_end
    return word_end + len(between.rstrip())
