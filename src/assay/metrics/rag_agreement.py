"""How much two annotators' versions of one RAG question agree, measure by measure.

The chance-corrected statistics over many questions (Cohen's and Fleiss' kappa,
Krippendorff's alpha) are in :mod:`assay.metrics.agreement`; these are the per-question
measures that RAG gold needs, each symmetric in its two sides and in [0, 1]:

- ``set_agreement(a, b)``: Jaccard (shared / either) and F1 (2·shared / (|a| + |b|)) of two
  sets of relevant passages, as chunk ids or any hashable passage key. Two empty sets agree
  fully (both say nothing is relevant): 1.0 and 1.0.
- ``span_f1(a, b)``: character-level F1 of two lists of ``(doc_id, start, end)`` spans; a
  side's overlapping spans count their characters once. ``span_jaccard`` likewise. Both
  empty: 1.0.
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
  answers (:mod:`assay.metrics.generation`); None when both are empty.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import combinations
from typing import NamedTuple

from assay.metrics.generation import rouge_l, token_f1

DocSpan = tuple[str, int, int]
"""``(doc_id, start, end)``: a half-open character range of one document."""


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


def _merged(spans: Iterable[DocSpan]) -> dict[str, list[tuple[int, int]]]:
    """Per document, the spans' union as sorted, disjoint ranges."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for doc_id, start, end in spans:
        if end > start:
            by_doc.setdefault(doc_id, []).append((start, end))
    merged: dict[str, list[tuple[int, int]]] = {}
    for doc_id, ranges in by_doc.items():
        ranges.sort()
        out = [ranges[0]]
        for start, end in ranges[1:]:
            if start <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], end))
            else:
                out.append((start, end))
        merged[doc_id] = out
    return merged


def _length(ranges: Mapping[str, list[tuple[int, int]]]) -> int:
    return sum(end - start for spans in ranges.values() for start, end in spans)


def _shared(
    first: Mapping[str, list[tuple[int, int]]], second: Mapping[str, list[tuple[int, int]]]
) -> int:
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


def _span_counts(a: Iterable[DocSpan], b: Iterable[DocSpan]) -> tuple[int, int, int]:
    first, second = _merged(a), _merged(b)
    return _shared(first, second), _length(first), _length(second)


def span_f1(a: Iterable[DocSpan], b: Iterable[DocSpan]) -> float:
    """Character-level F1 of two span lists (both empty: 1.0)."""
    shared, first, second = _span_counts(a, b)
    return 1.0 if first + second == 0 else 2 * shared / (first + second)


def span_jaccard(a: Iterable[DocSpan], b: Iterable[DocSpan]) -> float:
    """Characters in both / characters in either (both empty: 1.0)."""
    shared, first, second = _span_counts(a, b)
    union = first + second - shared
    return 1.0 if union == 0 else shared / union


def labelled_span_f1(
    a: Mapping[str, Sequence[DocSpan]], b: Mapping[str, Sequence[DocSpan]]
) -> float:
    """Character-level F1 counting a character as shared only under the same label on both
    sides; ``a`` and ``b`` map a label to its spans (both empty: 1.0)."""
    shared = marked = 0
    for label in set(a) | set(b):
        both, first, second = _span_counts(a.get(label, ()), b.get(label, ()))
        shared += both
        marked += first + second
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
    """Token F1 and ROUGE-L of two reference answers; None when both are empty."""
    if not a.strip() and not b.strip():
        return None
    return AnswerAgreement(token_f1(a, b, strip_think=False), rouge_l(a, b, strip_think=False))


class TurnAnnotation(NamedTuple):
    """One annotator's version of one question, as the measures see it. ``passages`` are
    the relevant passages' keys (chunk ids, or ``(doc_id, start, end)`` on characters) and
    ``groups`` the same keys in their AND/OR groups; ``labelled`` maps each label to the
    spans marked with it (every label, not only relevant)."""

    query_type: str
    passages: frozenset[Hashable]
    groups: tuple[frozenset[Hashable], ...]
    relevant_spans: tuple[DocSpan, ...]
    labelled: Mapping[str, tuple[DocSpan, ...]]
    answer: str


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
    chunk ids ``on_chunks``, else by characters (Jaccard and F1 of the relevant spans)."""
    if on_chunks:
        passages = set_agreement(a.passages, b.passages)
    else:
        passages = SetAgreement(
            span_jaccard(a.relevant_spans, b.relevant_spans),
            span_f1(a.relevant_spans, b.relevant_spans),
        )
    answers = answer_agreement(a.answer, b.answer)
    return TurnScores(
        passages.jaccard,
        passages.f1,
        labelled_span_f1(a.labelled, b.labelled),
        group_f1(a.groups, b.groups),
        answers.token_f1 if answers else None,
        answers.rouge_l if answers else None,
    )
