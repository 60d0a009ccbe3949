"""Per-question agreement measures for RAG gold on hand-made cases with known values."""

from __future__ import annotations

import pytest

from assay.metrics.rag_agreement import (
    TurnAnnotation,
    annotate,
    answer_agreement,
    compare_turns,
    group_f1,
    labelled_span_f1,
    set_agreement,
    span_agreement,
    span_f1,
)


def test_passage_sets_jaccard_and_f1() -> None:
    # shared {c2, c3}; union {c1..c4}: Jaccard 2/4, F1 2*2/(3+3)
    assert set_agreement({"c1", "c2", "c3"}, {"c2", "c3", "c4"}) == (0.5, pytest.approx(2 / 3))
    assert set_agreement({"c1"}, {"c2"}) == (0.0, 0.0)
    assert set_agreement([], []) == (1.0, 1.0)  # both: nothing is relevant
    assert set_agreement({"c1"}, []) == (0.0, 0.0)


def test_span_f1_counts_characters() -> None:
    # a: 0-10 (10 chars), b: 5-20 (15 chars), shared 5: F1 = 10/25, Jaccard 5/20
    a, b = [("d", 0, 10)], [("d", 5, 20)]
    assert span_f1(a, b) == pytest.approx(0.4)
    assert span_agreement(a, b) == (0.25, pytest.approx(0.4))
    # the same offsets in another document share nothing
    assert span_f1([("d", 0, 10)], [("e", 0, 10)]) == 0.0
    # a side's overlapping spans count once: a = 0-15 (15), b = 0-10 + 20-30 (20), shared 10
    assert span_f1([("d", 0, 10), ("d", 5, 15)], [("d", 0, 10), ("d", 20, 30)]) == pytest.approx(
        20 / 35
    )
    assert span_f1([], []) == 1.0
    assert span_f1([("d", 0, 4)], []) == 0.0
    assert span_f1([("d", 3, 3)], []) == 1.0  # an empty span marks nothing


def test_labelled_span_f1_needs_the_same_label() -> None:
    a = {"relevant": (("d", 0, 10),), "distracting": (("d", 20, 30),)}
    b = {"relevant": (("d", 0, 10), ("d", 20, 30))}
    # shared under the same label: 10 (relevant 0-10); marked: 20 + 20
    assert labelled_span_f1(a, b) == pytest.approx(0.5)
    assert labelled_span_f1(a, a) == 1.0
    assert labelled_span_f1({}, {}) == 1.0


def test_group_structure_is_pairwise_co_membership_f1() -> None:
    # a: {x, y} alternatives, z needed; b: {x, y, z} all alternatives
    # a's pairs {xy}; b's pairs {xy, xz, yz}: F1 = 2*1/(1+3)
    assert group_f1([{"x", "y"}, {"z"}], [{"x", "y", "z"}]) == pytest.approx(0.5)
    # both: every passage needed (no pairs) -> full agreement
    assert group_f1([{"x"}, {"y"}], [{"x"}, {"y"}]) == 1.0
    # only the shared passages count: w (a only) is left out, x/y agree
    assert group_f1([{"x", "y", "w"}], [{"x", "y"}]) == 1.0
    # one says alternatives, the other all needed: no shared pair
    assert group_f1([{"x", "y"}], [{"x"}, {"y"}]) == 0.0
    # fewer than two shared passages: nothing to compare
    assert group_f1([{"x", "y"}], [{"x"}, {"q"}]) is None
    assert group_f1([], []) is None


def test_answers_token_f1_and_rouge_l() -> None:
    # tokens (SQuAD): "up to 140 euros" vs "140 euros per night": 2 shared of 4 and 4
    scores = answer_agreement("Up to 140 euros.", "140 euros per night")
    assert scores is not None
    assert scores.token_f1 == pytest.approx(0.5)
    assert scores.rouge_l == pytest.approx(0.5)  # LCS "140 euros" = 2 of 4 and 4
    assert answer_agreement("", "  ") is None
    empty = answer_agreement("", "Paris")
    assert empty is not None and empty == (0.0, 0.0)


def annotation(
    query_type: str = "fact_single",
    spans: tuple[tuple[str, int, int], ...] = (),
    groups: tuple[frozenset[object], ...] = (),
    answer: str = "",
) -> TurnAnnotation:
    return annotate(query_type, groups, spans, {"relevant": spans}, answer)


def test_compare_turns_on_chunks_and_on_characters() -> None:
    a = annotation(spans=(("d", 0, 10),), groups=(frozenset({"c1", "c2"}),), answer="Paris")
    b = annotation(spans=(("d", 0, 20),), groups=(frozenset({"c1"}), frozenset({"c2"})))
    on_chunks = compare_turns(a, b, on_chunks=True)
    assert (on_chunks.passages_jaccard, on_chunks.passages_f1) == (1.0, 1.0)
    assert on_chunks.groups_f1 == 0.0
    assert (on_chunks.answer_token_f1, on_chunks.answer_rouge_l) == (0.0, 0.0)
    on_chars = compare_turns(a, b, on_chunks=False)
    assert on_chars.passages_jaccard == pytest.approx(0.5)
    assert on_chars.passages_f1 == pytest.approx(20 / 30)
    assert on_chars.spans_f1 == pytest.approx(20 / 30)
    assert compare_turns(annotation(), annotation(), on_chunks=True).answer_token_f1 is None
