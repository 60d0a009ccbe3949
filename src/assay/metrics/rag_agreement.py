"""How much two annotators' versions of one RAG question agree, measure by measure.

The chance-corrected statistics over many questions (Cohen's and Fleiss' kappa,
Krippendorff's alpha) are in :mod:`assay.metrics.agreement`; these are the per-question
measures that RAG gold needs, each symmetric in its two sides and in [0, 1]:

- ``set_agreement(a, b)``: Jaccard (shared / either) and F1 (2·shared / (|a| + |b|)) of two
  sets of relevant passages, as chunk ids or any hashable passage key. Two empty sets agree
  fully (both say nothing is relevant): 1.0 and 1.0.
- ``span_f1(a, b)``: character-level F1 of two lists of ``(doc_id, start, end)`` spans; a
  side's overlapping spans count their characters once (both empty: 1.0).
  ``span_agreement`` gives the characters' Jaccard and F1 together.
- ``labelled_span_f1(a, b)``: character-level F1 where a character counts as shared only
  when both sides gave it the same label (relevant, distracting, …): shared characters
  summed over labels, divided by the two sides' labelled characters.
- ``group_f1(a, b)``: agreement of AND/OR group structure. A side's groups are sets of
  passage keys (passages in one group are alternatives, any one suffices; different groups
  are all needed). Over the passages both sides marked relevant, each side defines the set
  of unordered passage pairs it puts in a common group; the measure is the F1 of those two
  pair sets (pairwise co-membership F1, as in clustering comparison). When neither side
  pairs any shared passages (both say: every shared passage is needed) it is 1.0; with
  fewer than two shared passages there is no structure to compare: None.
- ``answer_agreement(a, b)``: token F1 (SQuAD normalisation) and ROUGE-L of two reference
  answers (:mod:`assay.metrics.generation`); None when neither has a word.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import combinations
from typing import NamedTuple

from assay.metrics.generation import (
    normalize_answer,
    rouge_l_of,
    rouge_tokens,
    token_f1_of,
)

DocSpan = tuple[str, int, int]
"""``(doc_id, start, end)``: a half-open character range of one document."""
Ranges = dict[str, list[tuple[int, int]]]
"""Per document, sorted disjoint character ranges (a side's spans merged)."""


class SetAgreement(NamedTuple):
    jaccard: float
    f1: float


class AnswerAgreement(NamedTuple):
    token_f1: float
    rouge_l: float


def set_agreement(a: Iterable[Hashable], b: Iterable[Hashable]) -> SetAgreement:
    """Jaccard and F1 of two sets (both empty: full agreement)."""
    first, second = set(a), set(b)
    if not first and not second:
        return SetAgreement(1.0, 1.0)
    shared = len(first & second)
    return SetAgreement(shared / len(first | second), 2 * shared / (len(first) + len(second)))


def _merged(spans: Iterable[DocSpan]) -> Ranges:
    """Per document, the spans' union as sorted, disjoint ranges."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for doc_id, start, end in spans:
        if end > start:
            by_doc.setdefault(doc_id, []).append((start, end))
    for doc_id, ranges in by_doc.items():
        if len(ranges) == 1:  # the common case: one passage in a document
            continue
        ranges.sort()
        out = [ranges[0]]
        for start, end in ranges[1:]:
            if start <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], end))
            else:
                out.append((start, end))
        by_doc[doc_id] = out
    return by_doc


def _length(ranges: Ranges) -> int:
    return sum(end - start for spans in ranges.values() for start, end in spans)


def _shared(first: Ranges, second: Ranges) -> int:
    """Characters in both unions (two pointers over each document's sorted ranges)."""
    total = 0
    for doc_id, ours in first.items():
        theirs = second.get(doc_id, [])
        i = j = 0
        while i < len(ours) and j < len(theirs):
            low, high = max(ours[i][0], theirs[j][0]), min(ours[i][1], theirs[j][1])
            total += max(0, high - low)
            if ours[i][1] < theirs[j][1]:
                i += 1
            else:
                j += 1
    return total


def _ranges_agreement(first: Ranges, second: Ranges) -> SetAgreement:
    shared, one, other = _shared(first, second), _length(first), _length(second)
    if one + other == 0:
        return SetAgreement(1.0, 1.0)
    return SetAgreement(shared / (one + other - shared), 2 * shared / (one + other))


def span_agreement(a: Iterable[DocSpan], b: Iterable[DocSpan]) -> SetAgreement:
    """Jaccard (characters in both / in either) and F1 of two span lists, by characters
    (both empty: full agreement)."""
    return _ranges_agreement(_merged(a), _merged(b))


def span_f1(a: Iterable[DocSpan], b: Iterable[DocSpan]) -> float:
    """Character-level F1 of two span lists (both empty: 1.0)."""
    return span_agreement(a, b).f1


def labelled_span_f1(
    a: Mapping[str, Sequence[DocSpan]], b: Mapping[str, Sequence[DocSpan]]
) -> float:
    """Character-level F1 counting a character as shared only under the same label on both
    sides; ``a`` and ``b`` map a label to its spans (both empty: 1.0)."""
    return _labelled_f1(_labelled(a), _labelled(b))


def _labelled(spans: Mapping[str, Iterable[DocSpan]]) -> dict[str, Ranges]:
    return {label: _merged(found) for label, found in spans.items()}


def _labelled_f1(a: Mapping[str, Ranges], b: Mapping[str, Ranges]) -> float:
    shared = marked = 0
    for label in set(a) | set(b):
        first, second = a.get(label, {}), b.get(label, {})
        shared += _shared(first, second)
        marked += _length(first) + _length(second)
    return 1.0 if marked == 0 else 2 * shared / marked


def _co_members(
    groups: Iterable[Iterable[Hashable]], keep: set[Hashable]
) -> set[frozenset[Hashable]]:
    pairs: set[frozenset[Hashable]] = set()
    for group in groups:
        members = sorted({m for m in group if m in keep}, key=repr)
        pairs.update(frozenset(pair) for pair in combinations(members, 2))
    return pairs


def group_f1(a: Sequence[Iterable[Hashable]], b: Sequence[Iterable[Hashable]]) -> float | None:
    """Pairwise co-membership F1 of two AND/OR group structures over their shared passages
    (see the module docstring); None with fewer than two shared passages."""
    a_groups = [set(g) for g in a]
    b_groups = [set(g) for g in b]
    shared = set().union(*a_groups) & set().union(*b_groups)
    if len(shared) < 2:
        return None
    first, second = _co_members(a_groups, shared), _co_members(b_groups, shared)
    if not first and not second:
        return 1.0
    return 2 * len(first & second) / (len(first) + len(second))


def answer_agreement(a: str, b: str) -> AnswerAgreement | None:
    """Token F1 and ROUGE-L of two reference answers; None when neither has a word."""
    first, second = rouge_tokens(a), rouge_tokens(b)
    if not first and not second:
        return None
    tokens = normalize_answer(a).split(), normalize_answer(b).split()
    return AnswerAgreement(token_f1_of(*tokens), rouge_l_of(first, second))


class TurnAnnotation(NamedTuple):
    """One annotator's version of one question, prepared once for many comparisons (make
    it with :func:`annotate`)."""

    query_type: str
    passages: frozenset[Hashable]
    groups: tuple[frozenset[Hashable], ...]
    relevant: Ranges
    labelled: dict[str, Ranges]
    answer_tokens: tuple[str, ...]
    rouge_tokens: tuple[str, ...]


def annotate(
    query_type: str,
    groups: Iterable[Iterable[Hashable]],
    relevant: Iterable[DocSpan],
    labelled: Mapping[str, Iterable[DocSpan]],
    answer: str,
) -> TurnAnnotation:
    """A version of a question: ``groups`` holds the relevant passages' keys (chunk ids, or
    ``(doc_id, start, end)`` by characters) in their AND/OR groups, ``relevant`` their
    spans, ``labelled`` each label's spans (every label, not only relevant)."""
    frozen = tuple(frozenset(g) for g in groups)
    return TurnAnnotation(
        query_type,
        frozenset().union(*frozen),
        tuple(g for g in frozen if g),
        _merged(relevant),
        _labelled(labelled),
        tuple(normalize_answer(answer).split()),
        tuple(rouge_tokens(answer)),
    )


class TurnScores(NamedTuple):
    """The per-question measures of two versions (None: not defined for this pair)."""

    passages_jaccard: float
    passages_f1: float
    spans_f1: float
    groups_f1: float | None
    answer_token_f1: float | None
    answer_rouge_l: float | None


def compare_turns(a: TurnAnnotation, b: TurnAnnotation, *, on_chunks: bool) -> TurnScores:
    """Every per-question measure of two versions. Passage sets are compared as sets of
    chunk ids ``on_chunks``, else by characters (Jaccard and F1 of the relevant spans);
    answers are not compared when neither has a word."""
    if on_chunks:
        passages = set_agreement(a.passages, b.passages)
    else:
        passages = _ranges_agreement(a.relevant, b.relevant)
    answers: tuple[float | None, float | None] = (None, None)
    if a.rouge_tokens == b.rouge_tokens and a.answer_tokens == b.answer_tokens:
        answers = (1.0, 1.0) if a.rouge_tokens else answers  # the same words: no LCS to run
    else:
        answers = (
            token_f1_of(a.answer_tokens, b.answer_tokens),
            rouge_l_of(a.rouge_tokens, b.rouge_tokens),
        )
    return TurnScores(
        passages.jaccard,
        passages.f1,
        _labelled_f1(a.labelled, b.labelled),
        group_f1(a.groups, b.groups),
        *answers,
    )
