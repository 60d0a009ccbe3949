"""AutoRAG-style retrieval metrics (worked examples and a reference re-implementation of
AutoRAG's per-metric formulas on random data) and RAGTools' substring hit and rank."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from assay.errors import InvalidInput
from assay.metrics.retrieval import (
    RetrievalScores,
    mean_retrieval_scores,
    normalize_ground_truth,
    retrieval_f1,
    retrieval_map,
    retrieval_mrr,
    retrieval_ndcg,
    retrieval_precision,
    retrieval_recall,
    retrieval_scores,
    substring_hit,
    substring_rank,
)

# --- AutoRAG's formulas written out literally, one metric at a time -----------------------


def reference_scores(gt: list[list[str]], pred: list[str]) -> RetrievalScores:
    """Straight transcription of the formulas in seed-formats.md section 6.2."""
    gt_sets = [frozenset(group) for group in gt]
    pred_set = set(pred)
    recall = sum(any(p in g for p in pred_set) for g in gt_sets) / len(gt)
    precision = sum(any(p in g for g in gt_sets) for p in pred_set) / len(pred)
    f1 = 0.0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)
    relevance = {p: int(any(p in g for g in gt_sets)) for p in pred_set}
    dcg = sum((2 ** relevance[p] - 1) / math.log2(i + 2) for i, p in enumerate(pred))
    flat = len(list(itertools.chain.from_iterable(gt)))
    ideal = [1] * min(flat, len(pred)) + [0] * max(0, len(pred) - flat)
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    ndcg = dcg / idcg if idcg > 0 else 0.0
    rr = []
    for g in gt_sets:
        for i, p in enumerate(pred):
            if p in g:
                rr.append(1.0 / (i + 1))
                break
    mrr = sum(rr) / len(gt_sets)
    ap = []
    for g in gt_sets:
        hits = [1 if p in g else 0 for p in pred]
        precisions = [sum(hits[: i + 1]) / (i + 1) for i, h in enumerate(hits) if h]
        ap.append(sum(precisions) / len(precisions) if precisions else 0.0)
    return RetrievalScores(recall, precision, f1, ndcg, mrr, sum(ap) / len(gt_sets))


def test_matches_autorag_formulas_on_random_data() -> None:
    rng = random.Random(20)
    ids = [f"d{i}" for i in range(12)]
    for _ in range(2000):
        gt = [rng.sample(ids, rng.randint(1, 3)) for _ in range(rng.randint(1, 3))]
        pred = [rng.choice(ids) for _ in range(rng.randint(1, 8))]  # duplicates happen
        ours = retrieval_scores(gt, pred)
        assert ours is not None
        assert ours == pytest.approx(reference_scores(gt, pred), abs=1e-12)


# --- worked examples ----------------------------------------------------------------------


def test_and_of_or_groups() -> None:
    gt = [["a", "b"], ["c"]]
    scores = retrieval_scores(gt, ["b", "x", "c"])
    assert scores is not None
    assert scores.recall == 1.0
    assert scores.precision == pytest.approx(2 / 3)
    assert scores.mrr == pytest.approx((1 + 1 / 3) / 2)
    # a group's precision counts only its own members: "c" at rank 3 gives 1/3, not 2/3
    assert scores.map == pytest.approx((1 + 1 / 3) / 2)
    # one group missed: half recall, and that group adds 0 to MRR and MAP
    partial = retrieval_scores(gt, ["x", "a"])
    assert partial is not None
    assert (partial.recall, partial.precision, partial.mrr, partial.map) == (0.5, 0.5, 0.25, 0.25)
    assert partial.f1 == pytest.approx(0.5)


def test_satisfied_or_group_scores_below_one_in_ndcg() -> None:
    # AutoRAG's ideal DCG counts every member of every group: "a" satisfies the group,
    # yet the ideal assumes two relevant documents.
    assert retrieval_ndcg([["a", "b"]], ["a", "x"]) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert retrieval_recall([["a", "b"]], ["a", "x"]) == 1.0
    # with a single retrieved id the ideal holds one hit only
    assert retrieval_ndcg([["a", "b"]], ["a"]) == 1.0


def test_duplicates_in_prediction() -> None:
    gt = [["a"]]
    pred = ["a", "a", "x"]
    assert retrieval_precision(gt, pred) == pytest.approx(1 / 3)  # distinct hit / len(pred)
    assert retrieval_ndcg(gt, pred) == pytest.approx(
        (1 + 1 / math.log2(3)) / 1.0  # both copies add gain; ideal has min(1, 3) = 1 hit
    )
    assert retrieval_map(gt, pred) == pytest.approx((1 + 1) / 2)  # precision@1 and @2 both 1
    assert retrieval_mrr(gt, pred) == 1.0


def test_empty_prediction_scores_zero() -> None:
    assert retrieval_scores([["a"]], []) == RetrievalScores(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    assert retrieval_f1([["a"]], []) == 0.0


def test_empty_ground_truth_is_unanswerable() -> None:
    empty_truths: list[list[list[str]]] = [[], [[]], [[], []]]
    for gt in empty_truths:
        assert retrieval_scores(gt, ["a"]) is None
        assert retrieval_recall(gt, ["a"]) is None
        assert retrieval_ndcg(gt, []) is None
    # empty groups next to real ones are dropped, not counted as missed
    assert retrieval_recall([["a"], []], ["a"]) == 1.0


def test_cutoff_truncates_prediction() -> None:
    assert retrieval_recall([["a"], ["c"]], ["a", "b", "c"], k=2) == 0.5
    assert retrieval_precision([["a"]], ["a", "b", "c"], k=1) == 1.0
    with pytest.raises(InvalidInput, match="positive integer"):
        retrieval_scores([["a"]], ["a"], k=0)


def test_mean_skips_unanswerable_items() -> None:
    means = mean_retrieval_scores([[["a"]], [], [["b"]]], [["a"], ["a"], ["x"]])
    assert means["recall"] == 0.5
    assert means["precision"] == 0.5
    assert mean_retrieval_scores([[]], [["a"]])["ndcg"] is None
    with pytest.raises(InvalidInput, match="pair up by position"):
        mean_retrieval_scores([[["a"]]], [])


def test_normalize_ground_truth_shapes() -> None:
    assert normalize_ground_truth("a") == [["a"]]
    assert normalize_ground_truth("") == []
    assert normalize_ground_truth(["a", "b"]) == [["a", "b"]]  # flat list = one OR group
    assert normalize_ground_truth([["a"], ["b", "c"], []]) == [["a"], ["b", "c"]]
    with pytest.raises(InvalidInput, match="mixes ids and groups"):
        normalize_ground_truth(["a", ["b"]])


# --- RAGTools substring hit and rank ------------------------------------------------------


def test_substring_containment_either_way() -> None:
    gold = "I am a horse."
    assert substring_rank(gold, ["nothing", "I am a hors"]) == 2  # candidate inside gold
    assert substring_rank(gold, ["Well, I am a horse. Neigh."]) == 1  # gold inside candidate
    assert substring_hit(gold, ["i am a horse."]) == 0.0  # case-sensitive
    assert substring_rank(gold, ["zebra"]) is None
    assert substring_hit(gold, []) == 0.0


def test_empty_candidate_is_not_a_hit() -> None:
    # RAGTools would count "" (contained in every string) as a hit; we do not.
    assert substring_rank("I am a horse.", ["", "  ", "I am"]) == 3
    assert substring_hit("I am a horse.", [""]) == 0.0
    assert substring_hit("", ["anything"]) is None
    assert substring_rank("  ", ["anything"]) is None


def test_substring_cutoff() -> None:
    assert substring_hit("gold", ["x", "gold"], k=1) == 0.0
    assert substring_hit("gold", ["x", "gold"], k=2) == 1.0
