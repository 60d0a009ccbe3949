"""Speed of the retrieval metrics on a large seeded experiment.

Generates ``--queries`` questions with ``--depth`` ranked results each, then times:

- the AutoRAG-style metrics (all six from one pass per question) on two-level ground truth;
- the IR measures on graded qrels, all at once and one measure at a time (the latter also
  on the already gathered arrays, through the module's private helpers, to show what each
  measure adds);
- ir_measures on the same qrels and run, for comparison, if it is installed (``oracle``
  extra); skipped otherwise.

Prints the best of ``--repeat`` runs in seconds.

    python benchmarks/metrics.py [--queries 10000] [--depth 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from assay.metrics.ir import _compute, _gather, evaluate, parse_measure
from assay.metrics.retrieval import mean_retrieval_scores

IR_MEASURES = [
    "nDCG@10",
    "nDCG",
    "R@10",
    "R@100",
    "P@10",
    "RR",
    "RR@10",
    "AP",
    "AP@100",
    "Success@10",
    "Judged@10",
]


def best_time(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def make_data(
    queries: int, depth: int, seed: int = 11
) -> tuple[
    list[list[list[str]]],
    list[list[str]],
    dict[str, dict[str, int]],
    dict[str, dict[str, float]],
]:
    """Ground truth groups, ranked predictions, graded qrels and a scored run."""
    rng = random.Random(seed)
    corpus = 50 * depth
    gts: list[list[list[str]]] = []
    preds: list[list[str]] = []
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for index in range(queries):
        query_id = f"q{index}"
        pool = [f"d{rng.randrange(corpus)}" for _ in range(depth + 20)]
        ranked = list(dict.fromkeys(pool))[:depth]
        judged = rng.sample(ranked, min(len(ranked), rng.randint(1, 15)))
        gts.append([[doc_id] for doc_id in judged[: rng.randint(1, 3)]])
        preds.append(ranked)
        qrels[query_id] = {doc_id: rng.choice((0, 1, 1, 2, 3)) for doc_id in judged}
        # A fifth of the scores are rounded, so ties occur as with BM25 or integer scores.
        run[query_id] = {
            doc_id: round(rng.random(), 1) if rng.random() < 0.2 else rng.random()
            for doc_id in ranked
        }
    return gts, preds, qrels, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    started = time.perf_counter()
    gts, preds, qrels, run = make_data(args.queries, args.depth)
    print(
        f"data: {args.queries} queries x top-{args.depth} "
        f"(generated in {time.perf_counter() - started:.2f} s)"
    )

    autorag = best_time(lambda: mean_retrieval_scores(gts, preds), args.repeat)
    print(f"AutoRAG-style, all 6 metrics:       {autorag:.3f} s")
    ir_all = best_time(lambda: evaluate(qrels, run, IR_MEASURES), args.repeat)
    print(f"IR measures, all {len(IR_MEASURES)} at once:       {ir_all:.3f} s")
    print(f"total (both families):              {autorag + ir_all:.3f} s")
    tied_run = {
        query_id: {doc_id: float(round(score * 5)) for doc_id, score in ranking.items()}
        for query_id, ranking in run.items()
    }
    tied = best_time(lambda: evaluate(qrels, tied_run, IR_MEASURES), args.repeat)
    print(f"IR measures, integer scores 0-5 (nearly every document tied): {tied:.3f} s")
    gather = best_time(lambda: _gather(qrels, run, 1), args.repeat)
    print(f"IR measures, gathering and ordering the run alone: {gather:.3f} s")
    rankings = _gather(qrels, run, 1)
    print("IR measures one at a time: evaluate([m]) / the measure alone on gathered arrays:")
    for measure in IR_MEASURES:
        alone = best_time(lambda m=measure: evaluate(qrels, run, [m]), args.repeat)
        parsed_measure = parse_measure(measure)
        compute = best_time(lambda m=parsed_measure: _compute(rankings, m), args.repeat)
        print(f"  {measure:<12} {alone:.3f} s / {compute * 1000:6.1f} ms")

    try:
        import ir_measures
    except ImportError:
        print("ir_measures not installed; comparison skipped")
        return
    parsed = [ir_measures.parse_measure(measure) for measure in IR_MEASURES]
    seconds = best_time(lambda: ir_measures.calc_aggregate(parsed, qrels, run), 1)
    print(
        f"ir_measures {ir_measures.__version__}, same {len(IR_MEASURES)} measures: {seconds:.3f} s"
    )


if __name__ == "__main__":
    main()
