"""IR measures: name parsing, worked examples, and equality with ir_measures/pytrec_eval
on seeded random qrels and runs (graded judgements, tied scores, missing queries)."""

from __future__ import annotations

import importlib
import math
import os
import random
from types import ModuleType
from typing import Any

import pytest

from assay.errors import InvalidInput
from assay.metrics.ir import MEASURES, Measure, evaluate, evaluate_per_query, parse_measure


def oracle(module: str) -> ModuleType:
    """Import a reference implementation; missing is a skip locally and a failure in CI."""
    try:
        return importlib.import_module(module)
    except ImportError:
        message = f"{module} is not installed (it is in the 'oracle' extra)"
        if os.environ.get("CI") in ("1", "true"):
            pytest.fail(message)
        pytest.skip(message)


# --- parsing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("nDCG@10", Measure("nDCG", 10)),
        ("ndcg@10", Measure("nDCG", 10)),
        ("nDCG", Measure("nDCG", None)),
        ("recall@5", Measure("R", 5)),
        ("R@5", Measure("R", 5)),
        ("precision@3", Measure("P", 3)),
        ("mrr", Measure("RR", None)),
        ("MRR@10", Measure("RR", 10)),
        ("map", Measure("AP", None)),
        ("AP@100", Measure("AP", 100)),
        ("hit@5", Measure("Success", 5)),
        (" Success @ 5 ", Measure("Success", 5)),
        ("judged@10", Measure("Judged", 10)),
    ],
)
def test_parse_measure(text: str, expected: Measure) -> None:
    assert parse_measure(text) == expected


def test_measure_prints_its_canonical_name() -> None:
    assert str(parse_measure("ndcg@10")) == "nDCG@10"
    assert str(parse_measure("mrr")) == "RR"
    assert parse_measure(Measure("RR", 5)) == Measure("RR", 5)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bpref", "unknown IR measure 'bpref'; valid measures: nDCG"),
        ("P", "needs a cutoff"),
        ("R", "needs a cutoff"),
        ("nDCG@0", "positive integer"),
        ("nDCG@ten", "positive integer"),
        ("nDCG@", "positive integer"),
    ],
)
def test_parse_measure_errors(text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_measure(text)


def test_every_measure_is_listed_in_errors() -> None:
    with pytest.raises(InvalidInput) as error:
        parse_measure("nope")
    for name in MEASURES:
        assert name in str(error.value)


# --- worked examples ----------------------------------------------------------------------

QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}, "q3": {"z": 0}}
RUN = {
    "q1": {"a": 1.0, "b": 1.0, "c": 0.5, "d": 1.0},  # tie: d, b, a (doc_id descending)
    "q3": {"z": 1.0, "y": 0.2},
    "q9": {"x": 1.0},  # not in the qrels: ignored
}


def test_worked_example_per_query() -> None:
    values = evaluate_per_query(QRELS, RUN, ["RR", "P@3", "R@3", "nDCG@3", "AP", "Success@2"])
    assert set(values) == {"q1", "q2", "q3"}
    q1 = values["q1"]
    assert q1["RR"] == pytest.approx(1 / 3)  # d, b, a: "a" is third
    assert q1["P@3"] == pytest.approx(1 / 3)
    assert q1["R@3"] == pytest.approx(1 / 2)
    ideal = 2 + 1 / math.log2(3)
    assert q1["nDCG@3"] == pytest.approx((2 / math.log2(4)) / ideal)
    assert q1["AP"] == pytest.approx((1 / 3 + 2 / 4) / 2)
    assert q1["Success@2"] == 0.0
    # q2 has no run: every measure is 0; q3 has nothing relevant: 0
    assert all(value == 0.0 for value in values["q2"].values())
    assert all(value == 0.0 for value in values["q3"].values())


def test_judged_share() -> None:
    values = evaluate_per_query(QRELS, RUN, ["Judged@2", "Judged@10", "Judged"])
    assert values["q1"]["Judged@2"] == 0.5  # d, b
    assert values["q1"]["Judged@10"] == 0.75  # 3 of the 4 retrieved
    assert values["q3"]["Judged"] == 0.5
    assert values["q2"]["Judged@10"] == 0.0


def test_evaluate_averages_over_qrels_queries() -> None:
    mean = evaluate(QRELS, RUN, ["RR", "mrr"])
    assert list(mean) == ["RR"]  # aliases of one measure are computed once
    assert mean["RR"] == pytest.approx((1 / 3) / 3)


def test_relevance_level() -> None:
    values = evaluate_per_query(QRELS, RUN, ["RR", "R@4"], relevance_level=2)
    assert values["q1"]["RR"] == pytest.approx(1 / 3)
    assert values["q1"]["R@4"] == 1.0  # only "a" counts as relevant now


def test_evaluate_errors() -> None:
    with pytest.raises(InvalidInput, match="no query"):
        evaluate({}, RUN, ["RR"])
    with pytest.raises(InvalidInput, match="no IR measure"):
        evaluate(QRELS, RUN, [])
    with pytest.raises(InvalidInput, match="NaN"):
        evaluate(QRELS, {"q1": {"a": math.nan}}, ["RR"])


def test_a_single_measure_name_string_is_accepted() -> None:
    assert evaluate(QRELS, RUN, "RR") == evaluate(QRELS, RUN, ["RR"])


# --- ir_measures parity -------------------------------------------------------------------

PARITY_MEASURES = [
    "nDCG@1",
    "nDCG@5",
    "nDCG@10",
    "nDCG",
    "R@5",
    "R@1000",
    "P@1",
    "P@5",
    "P@100",
    "RR",
    "AP",
    "AP@10",
    "Success@1",
    "Success@3",
]


def random_collection(
    seed: int, ties: bool, grades: tuple[int, ...] = (0, 0, 1, 2, 3)
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for index in range(250):
        query_id = f"q{index}"
        docs = list({f"d{rng.randint(0, 80)}" for _ in range(rng.randint(1, 40))})
        if rng.random() < 0.92:
            judged = rng.sample(docs, min(len(docs), rng.randint(1, 12)))
            judged += [f"unretrieved{n}" for n in range(rng.randint(0, 3))]
            qrels[query_id] = {doc_id: rng.choice(grades) for doc_id in judged}
        if rng.random() < 0.9:  # some qrels queries have no run, some run queries no qrels
            run[query_id] = {
                doc_id: float(rng.randint(0, 5)) if ties and rng.random() < 0.6 else rng.random()
                for doc_id in docs
            }
    qrels.setdefault("q0", {"d1": 1})
    return qrels, run


def oracle_per_query(
    measures: list[str], qrels: dict[str, Any], run: dict[str, Any]
) -> dict[str, dict[str, float]]:
    ir_measures = oracle("ir_measures")
    oracle("pytrec_eval")
    values: dict[str, dict[str, float]] = {}
    parsed = [ir_measures.parse_measure(measure) for measure in measures]
    for metric in ir_measures.iter_calc(parsed, qrels, run):
        values.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    return values


def assert_same(ours: dict[str, dict[str, float]], theirs: dict[str, dict[str, float]]) -> None:
    assert set(ours) == set(theirs)
    for query_id, row in theirs.items():
        assert set(row) == set(ours[query_id])
        for name, value in row.items():
            assert ours[query_id][name] == pytest.approx(value, abs=1e-9), (query_id, name)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("ties", [False, True])
def test_equals_ir_measures_per_query(seed: int, ties: bool) -> None:
    qrels, run = random_collection(seed, ties)
    theirs = oracle_per_query(PARITY_MEASURES, qrels, run)
    ours = evaluate_per_query(qrels, run, PARITY_MEASURES)
    assert_same(ours, theirs)


def test_equals_ir_measures_mean() -> None:
    ir_measures = oracle("ir_measures")
    oracle("pytrec_eval")
    qrels, run = random_collection(7, ties=True)
    theirs = ir_measures.calc_aggregate(
        [ir_measures.parse_measure(m) for m in PARITY_MEASURES], qrels, run
    )
    ours = evaluate(qrels, run, PARITY_MEASURES)
    for measure, value in theirs.items():
        assert ours[str(measure)] == pytest.approx(value, abs=1e-9)


def test_equals_ir_measures_with_negative_grades_and_rel_2() -> None:
    qrels, run = random_collection(11, ties=True, grades=(-1, 0, 1, 2, 3))
    theirs = oracle_per_query(["nDCG@5", "nDCG", "P@5", "AP", "RR"], qrels, run)
    assert_same(evaluate_per_query(qrels, run, ["nDCG@5", "nDCG", "P@5", "AP", "RR"]), theirs)
    strict = oracle_per_query(["P(rel=2)@5", "AP(rel=2)", "RR(rel=2)", "R(rel=2)@10"], qrels, run)
    renamed = {
        query_id: {name.replace("(rel=2)", ""): value for name, value in row.items()}
        for query_id, row in strict.items()
    }
    ours = evaluate_per_query(qrels, run, ["P@5", "AP", "RR", "R@10"], relevance_level=2)
    assert_same(ours, renamed)


def test_rr_and_judged_cutoffs_equal_ir_measures_without_ties() -> None:
    # ir_measures computes RR@k and Judged@k with doc_id-ascending tie order; without ties
    # the order is the same as trec_eval's.
    qrels, run = random_collection(5, ties=False)
    measures = ["RR@1", "RR@5", "RR@10", "Judged@5", "Judged@20"]
    assert_same(evaluate_per_query(qrels, run, measures), oracle_per_query(measures, qrels, run))


def test_rr_cutoff_agrees_with_trec_eval_order_on_ties() -> None:
    qrels, run = random_collection(6, ties=True)
    values = evaluate_per_query(qrels, run, ["RR", "RR@5"])
    trec = oracle_per_query(["RR"], qrels, run)
    for query_id, row in values.items():
        assert row["RR"] == pytest.approx(trec[query_id]["RR"], abs=1e-12)
        expected = row["RR"] if row["RR"] >= 1 / 5 else 0.0
        assert row["RR@5"] == pytest.approx(expected, abs=1e-12)


def test_many_tied_scores_per_query() -> None:
    # all scores equal: the ranking is doc_id descending
    qrels = {"q": {"d1": 1, "d3": 1}}
    run = {"q": {f"d{i}": 0.0 for i in range(10)}}  # d9, d8, ..., d3 (7th), ..., d1 (9th)
    values = evaluate_per_query(qrels, run, ["RR", "AP"])["q"]
    assert values["RR"] == pytest.approx(1 / 7)
    assert values["AP"] == pytest.approx((1 / 7 + 2 / 9) / 2)
    theirs = oracle_per_query(["RR", "AP"], qrels, run)["q"]
    assert values == pytest.approx(theirs)
