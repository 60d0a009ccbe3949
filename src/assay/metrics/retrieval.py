"""Retrieval metrics on two-level ground truth, with AutoRAG's formulas.

The ground truth of one question is a list of *groups*: every group must be retrieved (AND)
and any member of a group satisfies it (OR). ``[["a", "b"], ["c"]]`` means "a or b, and c".
The prediction is the ranked list of retrieved ids, best first, duplicates allowed.

The numbers equal AutoRAG's ``retrieval_recall``, ``retrieval_precision``, ``retrieval_f1``,
``retrieval_ndcg``, ``retrieval_mrr`` and ``retrieval_map``, including their quirks:

- precision divides the number of *distinct* relevant ids by ``len(pred)``, so a duplicated
  hit lowers precision;
- nDCG gives relevance 1 to any id in any group and counts duplicates in the DCG; the ideal
  DCG has ``min(len(flatten(gt)), len(pred))`` ones, so a fully satisfied OR group can
  score below 1 (``gt=[["a", "b"]]``, ``pred=["a", "x"]`` gives 1 / (1 + 1/log2(3)) = 0.613);
- MRR is the mean over groups of 1/rank of the group's first hit (0 for a missed group);
- MAP is the mean over groups of the group's average precision, where a group's AP averages
  precision@i over the ranks i holding one of its members (duplicates count again).

Where we differ, on purpose:

- Empty ground truth (no group, or only empty groups) means the question is unanswerable
  by retrieval: every metric is ``None`` and callers skip the item when averaging. Empty
  groups inside a non-empty ground truth are dropped first.
- An empty prediction scores 0.0 everywhere. AutoRAG returns ``None`` for it, which would
  let a system that retrieves nothing leave its mean untouched.

``k`` truncates the prediction to its first ``k`` ids before scoring (``recall@5``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from assay.errors import InvalidInput

GroundTruth = Sequence[Sequence[str]]


class RetrievalScores(NamedTuple):
    """All six AutoRAG-style retrieval metrics of one question."""

    recall: float
    precision: float
    f1: float
    ndcg: float
    mrr: float
    map: float


RETRIEVAL_METRIC_NAMES = ("recall", "precision", "f1", "ndcg", "mrr", "map")


def normalize_ground_truth(gt: str | Sequence[str] | GroundTruth) -> list[list[str]]:
    """Bring ground truth to the list-of-groups shape, as AutoRAG's casting does.

    A single id becomes one group with one member; a flat list of ids becomes ONE OR group
    (AutoRAG's code does this, although its docs call a flat list "and"); a list of lists is
    kept. Empty groups are dropped.
    """
    if isinstance(gt, str):
        return [[gt]] if gt else []
    groups: list[list[str]] = []
    flat: list[str] = []
    for entry in gt:
        if isinstance(entry, str):
            flat.append(entry)
        else:
            members = [str(member) for member in entry]
            if members:
                groups.append(members)
    if flat and groups:
        raise InvalidInput(
            "retrieval ground truth mixes ids and groups of ids; give either a flat list "
            "(one OR group) or a list of groups"
        )
    return [flat] if flat else groups


def retrieval_scores(
    gt: GroundTruth, pred: Sequence[str], k: int | None = None
) -> RetrievalScores | None:
    """Compute the six metrics in one pass over the ranking; ``None`` for empty ``gt``."""
    groups = [group for group in gt if len(group) > 0]
    if not groups:
        return None
    if k is not None:
        if k < 1:
            raise InvalidInput(f"retrieval cutoff k must be a positive integer, got {k}")
        pred = pred[:k]
    if not pred:
        return RetrievalScores(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    member_of: dict[str, list[int]] = {}
    flat_size = 0
    for index, group in enumerate(groups):
        flat_size += len(group)
        for doc_id in set(group):
            member_of.setdefault(doc_id, []).append(index)

    n_groups = len(groups)
    first_rank = [0] * n_groups  # 0 = not hit yet
    group_hits = [0] * n_groups
    precision_sums = [0.0] * n_groups
    seen_relevant: set[str] = set()
    dcg = 0.0
    for position, doc_id in enumerate(pred):
        hit_groups = member_of.get(doc_id)
        if hit_groups is None:
            continue
        rank = position + 1
        seen_relevant.add(doc_id)
        dcg += 1.0 / math.log2(rank + 1)
        for index in hit_groups:
            if first_rank[index] == 0:
                first_rank[index] = rank
            group_hits[index] += 1
            precision_sums[index] += group_hits[index] / rank

    groups_hit = sum(1 for rank in first_rank if rank)
    recall = groups_hit / n_groups
    precision = len(seen_relevant) / len(pred)
    f1 = 0.0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)
    ideal_hits = min(flat_size, len(pred))
    idcg = sum(1.0 / math.log2(rank + 1) for rank in range(1, ideal_hits + 1))
    ndcg = dcg / idcg if idcg > 0 else 0.0
    mrr = sum(1.0 / rank for rank in first_rank if rank) / n_groups
    average_precision = sum(
        precision_sums[index] / group_hits[index] for index in range(n_groups) if group_hits[index]
    )
    return RetrievalScores(recall, precision, f1, ndcg, mrr, average_precision / n_groups)


def retrieval_recall(gt: GroundTruth, pred: Sequence[str], k: int | None = None) -> float | None:
    """Share of groups with at least one member retrieved."""
    scores = retrieval_scores(gt, pred, k)
    return None if scores is None else scores.recall


def retrieval_precision(gt: GroundTruth, pred: Sequence[str], k: int | None = None) -> float | None:
    """Distinct relevant ids retrieved, divided by ``len(pred)`` (duplicates included)."""
    scores = retrieval_scores(gt, pred, k)
    return None if scores is None else scores.precision


def retrieval_f1(gt: GroundTruth, pred: Sequence[str], k: int | None = None) -> float | None:
    """Harmonic mean of recall and precision (0 when both are 0)."""
    scores = retrieval_scores(gt, pred, k)
    return None if scores is None else scores.f1


def retrieval_ndcg(gt: GroundTruth, pred: Sequence[str], k: int | None = None) -> float | None:
    """Binary nDCG with AutoRAG's ideal of ``min(len(flatten(gt)), len(pred))`` hits."""
    scores = retrieval_scores(gt, pred, k)
    return None if scores is None else scores.ndcg


def retrieval_mrr(gt: GroundTruth, pred: Sequence[str], k: int | None = None) -> float | None:
    """Mean over groups of 1/rank of the group's first hit."""
    scores = retrieval_scores(gt, pred, k)
    return None if scores is None else scores.mrr


def retrieval_map(gt: GroundTruth, pred: Sequence[str], k: int | None = None) -> float | None:
    """Mean over groups of the group's average precision."""
    scores = retrieval_scores(gt, pred, k)
    return None if scores is None else scores.map


def mean_retrieval_scores(
    gts: Sequence[GroundTruth], preds: Sequence[Sequence[str]], k: int | None = None
) -> dict[str, float | None]:
    """Mean of each metric over the answerable questions (empty ground truth skipped).

    A metric is ``None`` when no question is answerable.
    """
    if len(gts) != len(preds):
        raise InvalidInput(
            f"got {len(gts)} ground truths but {len(preds)} predictions; they pair up by position"
        )
    totals = [0.0] * len(RETRIEVAL_METRIC_NAMES)
    counted = 0
    for gt, pred in zip(gts, preds, strict=True):
        scores = retrieval_scores(gt, pred, k)
        if scores is None:
            continue
        counted += 1
        for index, value in enumerate(scores):
            totals[index] += value
    return {
        name: (totals[index] / counted if counted else None)
        for index, name in enumerate(RETRIEVAL_METRIC_NAMES)
    }


def substring_rank(
    gold_context: str, candidates: Sequence[str], k: int | None = None
) -> int | None:
    """1-based rank of the first candidate that contains the gold context or lies inside it.

    RAGTools' ``retrieval_rank``: exact, case-sensitive containment in either direction, so
    a truncated chunk ("I am a hors") still finds its gold ("I am a horse."). Unlike
    RAGTools, an empty (or whitespace-only) candidate is never a match: it is contained in
    every gold text and would make any ranking with a blank entry a hit. ``None`` when no
    candidate matches, and for an empty gold context.
    """
    if not gold_context.strip():
        return None
    if k is not None:
        if k < 1:
            raise InvalidInput(f"retrieval cutoff k must be a positive integer, got {k}")
        candidates = candidates[:k]
    for rank, candidate in enumerate(candidates, start=1):
        if candidate.strip() and (gold_context in candidate or candidate in gold_context):
            return rank
    return None


def substring_hit(
    gold_context: str, candidates: Sequence[str], k: int | None = None
) -> float | None:
    """RAGTools' ``retrieval_score``: 1.0 if some candidate matches (see ``substring_rank``).

    ``None`` for an empty gold context, which has nothing to find.
    """
    if not gold_context.strip():
        return None
    return 0.0 if substring_rank(gold_context, candidates, k) is None else 1.0
