"""Standard IR measures on graded judgements, named and computed as ir_measures does.

Inputs are plain dicts: ``qrels = {query_id: {doc_id: grade}}`` and
``run = {query_id: {doc_id: score}}``. Measures use ir_measures' names (``nDCG@10``, ``R@5``,
``P@5``, ``RR``, ``RR@10``, ``AP``, ``AP@100``, ``Success@5``, ``Judged@10``); lowercase
aliases such as ``ndcg@10``, ``recall@5``, ``precision@5``, ``mrr``, ``map`` and ``hit@5``
are accepted.

Conventions (those of trec_eval, which ir_measures runs through pytrec_eval):

- A ranking is the run's documents sorted by score, highest first; equal scores are ordered
  by doc_id descending (plain string comparison), as trec_eval does.
- Binary measures (P, R, RR, AP, Success) count a document as relevant when its grade is
  ``>= relevance_level`` (1 by default).
- nDCG uses the grade itself as gain (grades <= 0 give nothing) and a ``log2(rank + 1)``
  discount; the ideal ranking holds every judged document with a positive grade.
- AP and AP@k divide by the number of relevant documents in the qrels (not by k).
- Judged@k is the share of the first ``min(k, len(ranking))`` documents that appear in the
  qrels with any grade (0 included); without a cutoff, of the whole ranking.
- Averaging runs over the queries of the qrels. A query with no entry in the run counts
  as 0 for every measure (ir_measures fills in each measure's default, 0, for these);
  run queries that have no qrels are ignored.

Two places where ir_measures itself is not uniform, and we are: it computes ``RR@k``
through the MS MARCO script and ``Judged@k`` in its own code, and both break score ties by
doc_id *ascending*. We use trec_eval's order for every measure, so with tied scores our
``RR@k`` and ``Judged@k`` can differ from ir_measures' (without ties they are equal).

The computation is vectorised with numpy: one Python pass gathers the run into flat arrays,
and every measure is a handful of array operations over all queries at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from assay.errors import InvalidInput

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class MeasureInfo(NamedTuple):
    """What a measure means and whether it takes a rank cutoff."""

    description: str
    cutoff: Literal["required", "optional"]


MEASURES: dict[str, MeasureInfo] = {
    "nDCG": MeasureInfo("normalised discounted cumulative gain, graded (gain = grade)", "optional"),
    "R": MeasureInfo(
        "recall at k: relevant documents in the first k / relevant judged", "required"
    ),
    "P": MeasureInfo("precision at k: relevant documents in the first k / k", "required"),
    "RR": MeasureInfo("reciprocal rank of the first relevant document", "optional"),
    "AP": MeasureInfo("average precision (mean over queries: MAP)", "optional"),
    "Success": MeasureInfo("1 if a relevant document is in the first k, else 0", "required"),
    "Judged": MeasureInfo("share of the first k retrieved documents that are judged", "optional"),
}

_ALIASES: dict[str, str] = {
    **{name.lower(): name for name in MEASURES},
    "recall": "R",
    "precision": "P",
    "mrr": "RR",
    "recip_rank": "RR",
    "map": "AP",
    "hit": "Success",
    "hits": "Success",
    "hit_rate": "Success",
}


class Measure(NamedTuple):
    """A parsed measure: canonical ``name`` and optional rank ``cutoff``."""

    name: str
    cutoff: int | None = None

    def __str__(self) -> str:
        return self.name if self.cutoff is None else f"{self.name}@{self.cutoff}"


def _valid_names() -> str:
    return ", ".join(
        f"{name}@k" if info.cutoff == "required" else f"{name}[@k]"
        for name, info in MEASURES.items()
    )


def parse_measure(text: str | Measure) -> Measure:
    """Parse ``"nDCG@10"`` (or an alias like ``"ndcg@10"``, ``"mrr"``) into a ``Measure``."""
    if isinstance(text, Measure):
        name, cutoff_text = text.name, (None if text.cutoff is None else str(text.cutoff))
    else:
        raw = text.strip()
        name, _, cutoff_text_raw = raw.partition("@")
        cutoff_text = cutoff_text_raw.strip() if "@" in raw else None
    canonical = _ALIASES.get(name.strip().lower())
    if canonical is None:
        raise InvalidInput(f"unknown IR measure {text!r}; valid measures: {_valid_names()}")
    cutoff: int | None = None
    if cutoff_text is not None:
        if not cutoff_text.isdigit() or int(cutoff_text) < 1:
            raise InvalidInput(
                f"measure {text!r}: the cutoff after '@' must be a positive integer, "
                f"got {cutoff_text!r}"
            )
        cutoff = int(cutoff_text)
    elif MEASURES[canonical].cutoff == "required":
        raise InvalidInput(f"measure {text!r} needs a cutoff, e.g. {canonical}@10")
    return Measure(canonical, cutoff)


class _Rankings(NamedTuple):
    """Every query's ranking, flattened in qrels order, plus what the measures share."""

    query_ids: list[str]
    lengths: IntArray  # documents retrieved per query
    query_index: IntArray  # per ranked document: index of its query
    rank: IntArray  # per ranked document: 1-based rank within its query
    grade: FloatArray  # per ranked document: its grade, NaN when unjudged
    relevant: npt.NDArray[np.bool_]  # grade >= relevance_level
    num_relevant: FloatArray  # per query: judged documents with grade >= relevance_level
    ideal_query_index: IntArray  # per positive judgement, ordered by query then grade desc
    ideal_rank: IntArray
    ideal_gain: FloatArray


def _segment_starts(lengths: IntArray) -> IntArray:
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return starts


def _order_rankings(lengths: IntArray, scores: FloatArray, doc_ids: list[str]) -> IntArray:
    """Order by query, then score descending, then doc_id descending (trec_eval).

    The input holds each query's documents contiguously, queries in order.
    """
    query_index = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    starts = _segment_starts(lengths)
    longest = int(lengths.max()) if len(lengths) else 0
    if len(lengths) * longest <= 4 * len(scores) + 1024:
        # Sorting many short rows is several times faster than one long sort: lay the
        # rankings out as rows padded with +inf (sorted last, after any real score).
        grid = np.full((len(lengths), longest), np.inf)
        column = np.arange(len(scores), dtype=np.int64) - np.repeat(starts, lengths)
        grid[query_index, column] = -scores
        by_row = np.argsort(grid, axis=1, kind="stable")
        order: IntArray = (by_row + starts[:, None])[by_row < lengths[:, None]]
    else:
        by_score = np.argsort(-scores, kind="stable")
        order = by_score[np.argsort(query_index[by_score], kind="stable")]
    sorted_q = query_index[order]
    sorted_s = scores[order]
    tied = (sorted_q[1:] == sorted_q[:-1]) & (sorted_s[1:] == sorted_s[:-1])
    if not tied.any():
        return order
    # Resolve the blocks of equal (query, score) by doc_id, descending: sort the tied
    # positions by (block, doc_id); blocks are contiguous runs of positions, so each block
    # stays where it is and only its members move.
    starts_block = np.concatenate(([tied[0]], tied[1:] & ~tied[:-1]))
    in_block = np.concatenate((tied, [False])) | np.concatenate(([False], tied))
    positions = np.flatnonzero(in_block)
    block = np.cumsum(np.concatenate((starts_block, [False])))[positions]
    entries = order[positions]
    names = np.array([doc_ids[entry] for entry in entries.tolist()])
    ascending = np.lexsort((names, block))  # numpy orders str by code point, like Python
    _, first, size = np.unique(block, return_index=True, return_counts=True)
    block_first = np.repeat(first, size)
    block_last = block_first + np.repeat(size, size) - 1
    # doc ids are unique within a query, so reversing each block gives descending order
    order[positions] = entries[ascending[block_first + block_last - np.arange(len(block))]]
    return order


def _gather(qrels: Qrels, run: Run, relevance_level: float) -> _Rankings:
    query_ids = list(qrels)
    if not query_ids:
        raise InvalidInput("the qrels hold no query; nothing to evaluate")
    doc_ids: list[str] = []
    scores: list[float] = []
    grades: list[float] = []
    lengths = np.zeros(len(query_ids), dtype=np.int64)
    num_relevant = np.zeros(len(query_ids), dtype=np.float64)
    ideal_q: list[int] = []
    ideal_gains: list[float] = []
    nan = math.nan
    for index, query_id in enumerate(query_ids):
        judged = qrels[query_id]
        positive = [float(grade) for grade in judged.values() if grade > 0]
        ideal_gains.extend(positive)
        ideal_q.extend([index] * len(positive))
        num_relevant[index] = sum(1 for grade in judged.values() if grade >= relevance_level)
        ranking = run.get(query_id)
        if not ranking:
            continue
        docs = list(ranking)
        doc_ids.extend(docs)
        scores.extend(ranking.values())
        grades.extend([judged.get(doc_id, nan) for doc_id in docs])
        lengths[index] = len(docs)

    query_index = np.repeat(np.arange(len(query_ids), dtype=np.int64), lengths)
    score_array = np.asarray(scores, dtype=np.float64)
    if np.isnan(score_array).any():
        raise InvalidInput("the run has a NaN score; every retrieved document needs a number")
    order = _order_rankings(lengths, score_array, doc_ids)
    grade = np.asarray(grades, dtype=np.float64)[order]
    rank = np.arange(len(order), dtype=np.int64) - np.repeat(_segment_starts(lengths), lengths) + 1

    ideal_query_index = np.asarray(ideal_q, dtype=np.int64)
    ideal_gain_array = np.asarray(ideal_gains, dtype=np.float64)
    ideal_order = np.lexsort((-ideal_gain_array, ideal_query_index))
    ideal_gain_array = ideal_gain_array[ideal_order]
    ideal_lengths = np.bincount(ideal_query_index, minlength=len(query_ids)).astype(np.int64)
    ideal_rank = (
        np.arange(len(ideal_order), dtype=np.int64)
        - np.repeat(_segment_starts(ideal_lengths), ideal_lengths)
        + 1
    )
    with np.errstate(invalid="ignore"):
        relevant = grade >= relevance_level
    return _Rankings(
        query_ids=query_ids,
        lengths=lengths,
        query_index=query_index,
        rank=rank,
        grade=grade,
        relevant=relevant,
        num_relevant=num_relevant,
        ideal_query_index=ideal_query_index[ideal_order],
        ideal_rank=ideal_rank,
        ideal_gain=ideal_gain_array,
    )


def _per_query_sum(r: _Rankings, weights: npt.NDArray[np.generic]) -> FloatArray:
    sums = np.bincount(r.query_index, weights=weights, minlength=len(r.query_ids))
    return np.asarray(sums, dtype=np.float64)


def _divide(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    out = np.zeros_like(numerator)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _within(r: _Rankings, cutoff: int | None) -> npt.NDArray[np.bool_]:
    if cutoff is None:
        return np.ones(len(r.rank), dtype=np.bool_)
    return r.rank <= cutoff


def _compute(r: _Rankings, measure: Measure) -> FloatArray:
    name, cutoff = measure
    within = _within(r, cutoff)
    if name in ("P", "R", "Success"):
        hits = _per_query_sum(r, r.relevant & within)
        if name == "P":
            return hits / float(cutoff or 1)
        if name == "R":
            return _divide(hits, r.num_relevant)
        return (hits > 0).astype(np.float64)
    if name == "nDCG":
        discount = 1.0 / np.log2(r.rank + 1.0)
        gain = np.where(r.grade > 0, r.grade, 0.0)
        dcg = _per_query_sum(r, gain * discount * within)
        ideal_within = (
            r.ideal_rank <= cutoff if cutoff is not None else np.ones(len(r.ideal_rank), bool)
        )
        ideal_terms = r.ideal_gain / np.log2(r.ideal_rank + 1.0) * ideal_within
        idcg = np.bincount(r.ideal_query_index, weights=ideal_terms, minlength=len(r.query_ids))
        return _divide(dcg, np.asarray(idcg, dtype=np.float64))
    if name == "RR":
        hit_rows = np.flatnonzero(r.relevant & within)
        queries, first = np.unique(r.query_index[hit_rows], return_index=True)
        values = np.zeros(len(r.query_ids), dtype=np.float64)
        values[queries] = 1.0 / r.rank[hit_rows[first]]
        return values
    if name == "AP":
        relevant = r.relevant.astype(np.int64)
        prefix = np.concatenate(([0], np.cumsum(relevant)))
        starts = np.repeat(_segment_starts(r.lengths), r.lengths)
        relevant_so_far = prefix[1:] - prefix[starts]
        precision = relevant_so_far / r.rank
        return _divide(_per_query_sum(r, precision * (r.relevant & within)), r.num_relevant)
    if name == "Judged":
        judged = _per_query_sum(r, ~np.isnan(r.grade) & within)
        shown = r.lengths if cutoff is None else np.minimum(r.lengths, cutoff)
        return _divide(judged, shown.astype(np.float64))
    raise InvalidInput(f"unknown IR measure {name!r}; valid measures: {_valid_names()}")


def _parse_all(measures: Iterable[str | Measure]) -> list[Measure]:
    parsed: list[Measure] = []
    for text in [measures] if isinstance(measures, str) else measures:
        measure = parse_measure(text)
        if measure not in parsed:
            parsed.append(measure)
    if not parsed:
        raise InvalidInput(f"no IR measure asked for; valid measures: {_valid_names()}")
    return parsed


def per_query_arrays(
    qrels: Qrels, run: Run, measures: Iterable[str | Measure], relevance_level: float = 1
) -> tuple[list[str], dict[Measure, FloatArray]]:
    """Query ids (qrels order) and, per measure, an array of per-query values."""
    parsed = _parse_all(measures)
    rankings = _gather(qrels, run, relevance_level)
    return rankings.query_ids, {measure: _compute(rankings, measure) for measure in parsed}


def evaluate(
    qrels: Qrels, run: Run, measures: Iterable[str | Measure], relevance_level: float = 1
) -> dict[str, float]:
    """Mean of each measure over the queries of ``qrels``, keyed by canonical name."""
    _, values = per_query_arrays(qrels, run, measures, relevance_level)
    return {str(measure): float(array.mean()) for measure, array in values.items()}


def evaluate_per_query(
    qrels: Qrels, run: Run, measures: Iterable[str | Measure], relevance_level: float = 1
) -> dict[str, dict[str, float]]:
    """``{query_id: {measure: value}}`` for every query of ``qrels``."""
    query_ids, values = per_query_arrays(qrels, run, measures, relevance_level)
    columns = {str(measure): array.tolist() for measure, array in values.items()}
    return {
        query_id: {name: column[index] for name, column in columns.items()}
        for index, query_id in enumerate(query_ids)
    }
