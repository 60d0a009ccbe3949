"""Our files read by the format owners' code give the numbers ``assay eval`` gives.

One run (the demo's keyword pool, written by ``assay pool --format trec``) and the demo's gold
(exported by ``assay export beir|trec|autorag``), unanswerable questions included: ``assay
eval`` against the project and against either qrels file, ir_measures, pytrec_eval, BEIR's
reading and evaluation, and AutoRAG's retrieval metrics must print the same numbers over the
same questions.

BEIR (``beir``, installed ``--no-deps`` by the Makefile: its declared dependencies pull torch
and sentence-transformers, which reading and scoring do not use) reads the folder with its
own ``GenericDataLoader`` and scores the run with its own ``EvaluateRetrieval.evaluate``.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import ir_measures
import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.demo import gold_items, open_demo
from assay.store.workspace import Workspace
from tests.conftest import missing

MEASURES = ["nDCG@10", "R@10", "P@10", "RR", "AP"]
TREC_EVAL = {
    "nDCG@10": "ndcg_cut_10",
    "R@10": "recall_10",
    "P@10": "P_10",
    "RR": "recip_rank",
    "AP": "map",
}
AUTORAG = ["retrieval_recall", "retrieval_precision", "retrieval_mrr", "retrieval_map"]


@pytest.fixture
def autorag_retrieval(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """AutoRAG's ``autorag/evaluation/metric/retrieval.py``, loaded from its file: its two
    imports (the decorator that checks fields, the input record) need LLM libraries, so they
    are stood in for by a plain ``functools.wraps`` and a record with the two fields."""
    spec = importlib.util.find_spec("autorag")
    if spec is None or not spec.submodule_search_locations:
        missing("autorag is not installed (pip install --no-deps autorag, as the Makefile does)")
    assert spec is not None and spec.submodule_search_locations is not None
    source = Path(next(iter(spec.submodule_search_locations)))
    util = ModuleType("autorag.evaluation.metric.util")

    def autorag_metric(fields_to_check: list[str]) -> Callable[[Any], Any]:
        return lambda func: functools.wraps(func)(func)

    util.autorag_metric = autorag_metric  # type: ignore[attr-defined]
    schema = ModuleType("autorag.schema.metricinput")
    schema.MetricInput = object  # type: ignore[attr-defined]
    for name, module in (
        ("autorag", ModuleType("autorag")),
        ("autorag.evaluation", ModuleType("autorag.evaluation")),
        ("autorag.evaluation.metric", ModuleType("autorag.evaluation.metric")),
        ("autorag.evaluation.metric.util", util),
        ("autorag.schema", ModuleType("autorag.schema")),
        ("autorag.schema.metricinput", schema),
    ):
        monkeypatch.setitem(sys.modules, name, module)
    path = source / "evaluation" / "metric" / "retrieval.py"
    loaded = importlib.util.spec_from_file_location("autorag_retrieval", path)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return module


class _Input:
    def __init__(self, retrieval_gt: list[list[str]], retrieved_ids: list[str]) -> None:
        self.retrieval_gt = retrieval_gt
        self.retrieved_ids = retrieved_ids


def _beir() -> tuple[Any, Any]:
    """BEIR's loader and evaluator, or the test fails (skips outside CI) saying how to get them."""
    try:
        from beir.datasets.data_loader import GenericDataLoader  # type: ignore[import-not-found]
        from beir.retrieval.evaluation import EvaluateRetrieval  # type: ignore[import-not-found]
    except ImportError:
        missing("beir is not installed (pip install --no-deps beir tqdm, as the Makefile does)")
    return GenericDataLoader, EvaluateRetrieval


# BEIR's loader counts lines with open() and never closes those files
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_demo_run_scores_the_same_in_every_owners_tool(
    ws: Workspace, tmp_path: Path, autorag_retrieval: ModuleType
) -> None:
    open_demo(ws, with_items=True)
    runner = CliRunner()

    def cli(*args: str) -> Any:
        result = runner.invoke(make_app(), ["--home", str(ws.settings.home), *args])
        assert result.exit_code == 0, result.output
        return result

    run = tmp_path / "pool.trec"
    cli("pool", "-p", "demo", "--source", "keyword", "--out", str(run), "--format", "trec")
    for name in ("beir", "trec", "autorag"):
        cli("export", name, str(tmp_path / name), "-p", "demo")
    metric_args = [a for m in MEASURES for a in ("-m", m)]

    def evaluate(*args: str) -> dict[str, Any]:
        return json.loads(cli("eval", "--run", str(run), "--json", *metric_args, *args).output)  # type: ignore[no-any-return]

    inside = evaluate("-p", "demo")
    unanswerable = sum(1 for i in gold_items() if i["query_type"] == "unanswerable")
    assert unanswerable > 0 and inside["tasks"] == len(gold_items())
    scored = inside["counts"]["nDCG@10"]
    assert scored == inside["tasks"] - 11  # the 11 questions without a relevant passage
    beir_direct = evaluate("--qrels", str(tmp_path / "beir" / "qrels" / "test.tsv"))
    trec_direct = evaluate("--qrels", str(tmp_path / "trec" / "qrels.txt"))
    assert beir_direct["tasks"] == trec_direct["tasks"] == scored

    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "trec" / "qrels.txt")))
    ranked = list(ir_measures.read_trec_run(str(run)))
    by_ir_measures = ir_measures.calc_aggregate(
        [ir_measures.parse_measure(m) for m in MEASURES], qrels, ranked
    )
    assert len({q.query_id for q in qrels}) == scored

    loader, evaluation = _beir()
    corpus, queries, beir_qrels = loader(data_folder=str(tmp_path / "beir")).load(split="test")
    assert len(queries) == len(beir_qrels) == scored
    results: dict[str, dict[str, float]] = {}
    for line in run.read_text().splitlines():
        query_id, _, doc_id, _, score, _ = line.split()
        assert doc_id in corpus  # the run's passages are the exported corpus' ids
        results.setdefault(query_id, {})[doc_id] = float(score)
    import pytrec_eval

    per_query = pytrec_eval.RelevanceEvaluator(beir_qrels, set(TREC_EVAL.values())).evaluate(
        results
    )
    by_pytrec_eval = {
        name: sum(values[key] for values in per_query.values()) / len(per_query)
        for name, key in TREC_EVAL.items()
    }
    ndcg, _, recall, precision = evaluation.evaluate(beir_qrels, results, [10])
    by_beir = {"nDCG@10": ndcg["NDCG@10"], "R@10": recall["Recall@10"], "P@10": precision["P@10"]}

    for measure in MEASURES:
        expected = inside["metrics"][measure]
        assert expected > 0, measure
        assert beir_direct["metrics"][measure] == pytest.approx(expected, abs=1e-12), measure
        assert trec_direct["metrics"][measure] == pytest.approx(expected, abs=1e-12), measure
        reference = by_ir_measures[ir_measures.parse_measure(measure)]
        assert reference == pytest.approx(expected, abs=1e-12), measure
        assert by_pytrec_eval[measure] == pytest.approx(expected, abs=1e-12), measure
        if measure in by_beir:  # BEIR rounds to five places
            assert by_beir[measure] == pytest.approx(expected, abs=5e-6), measure

    # AutoRAG: its qa.parquet (unanswerable questions left out, as its loader needs) and its
    # own retrieval metrics over the run's first ten passages
    qa = pd.read_parquet(tmp_path / "autorag" / "qa.parquet")
    assert len(qa) == scored
    rankings = {
        q: [d for d, _ in sorted(found.items(), key=lambda p: -p[1])][:10]
        for q, found in results.items()
    }
    autorag_means = {
        name: sum(
            getattr(autorag_retrieval, name)(
                _Input([list(g) for g in row.retrieval_gt], rankings.get(row.qid, []))
            )
            for row in qa.itertuples()
        )
        / len(qa)
        for name in AUTORAG
    }
    ours = json.loads(
        cli(
            "eval", "-p", "demo", "--run", str(run), "-k", "10", "--json",
            *(a for m in AUTORAG for a in ("-m", m)),
        ).output
    )  # fmt: skip
    for name in AUTORAG:
        assert ours["metrics"][name] == pytest.approx(autorag_means[name], abs=1e-12), name
