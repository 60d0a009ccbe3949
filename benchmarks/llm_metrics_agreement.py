"""Assay's LLM metric catalogue against Ragas 0.4.3 on the same samples and the same judge.

Builds the demo project with its 53 accepted gold items, answers them with the ``keyword``
pipeline (the offline extractive generator, top 5 passages), then scores every task with
Assay's five catalogue metrics and with Ragas's ``evaluate()`` (faithfulness,
answer_relevancy, llm_context_precision_with_reference, context_recall,
answer_correctness). Both ask one deterministic judge: a fake OpenAI-compatible server that
answers Assay's and Ragas's prompts by the same rule over the text
(``tests/fakes/rule_judge.py``), and both embed with the packaged MiniLM embedder. Prints per
metric the tasks both scored, the means, Pearson's correlation, the mean absolute difference
and the share of equal scores; then the time of each tool per round (alternating, min and
median over ``--rounds``) and the load average.

Needs the benchmark extra ``bench`` (Ragas and its LangChain/OpenAI clients; Makefile).

    python benchmarks/llm_metrics_agreement.py [--rounds 3] [--k 5] [--workers 4]
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fakes

from tests.fakes import rule_judge
from tests.fakes.openai_server import Computed, FakeOpenAI

from assay.demo import open_demo
from assay.experiments import create_experiment, iter_results, run_experiment
from assay.experiments.catalogue import CATALOGUE, CatalogueMetric
from assay.experiments.catalogue_scoring import score_catalogue
from assay.experiments.store import experiment_tasks_of
from assay.llm import GeneratorSettings, make_generator
from assay.search.embeddings import make_embedder
from assay.store.settings import Settings
from assay.store.workspace import Workspace

RAGAS_NAMES = {
    "faithfulness": "faithfulness",
    "answer_relevancy": "answer_relevancy",
    "context_precision": "llm_context_precision_with_reference",
    "context_recall": "context_recall",
    "answer_correctness": "answer_correctness",
}
Sample = dict[str, Any]


def samples(ws: Workspace, k: int) -> list[Sample]:
    """The demo project's tasks answered by the keyword pipeline."""
    project, _ = open_demo(ws, with_items=True)
    spec = {"name": "keyword", "retriever": {"kind": "keyword", "k": k}}
    made = create_experiment(ws, project, "answers", pipelines=[spec], mode="rag", metrics=["R@5"])
    run_experiment(ws, project, made.id)
    tasks = {t.task_id: t for t in experiment_tasks_of(ws, made.id)}
    found = []
    for result in iter_results(ws, project, made.id):
        task = tasks[result.task_id]
        if result.error is None and task.references and result.answer.strip():
            found.append(
                {
                    "task": task,
                    "question": task.turns[-1],
                    "answer": result.answer,
                    "contexts": list(result.contexts),
                    "reference": task.references[0],
                }
            )
    return found


def assay_scores(rows: list[Sample], judge: GeneratorSettings) -> dict[str, list[float | None]]:
    embed = make_embedder("minilm").embed
    generator = make_generator(judge)
    scores: dict[str, list[float | None]] = {}
    for name in CATALOGUE:
        metric = CatalogueMetric(name, judge)
        values = []
        for row in rows:
            found = score_catalogue(
                metric, generator, row["task"], row["answer"], row["contexts"], embed
            )
            if found.value == "error":
                raise SystemExit(f"Assay's {name} failed: {found.details.get('error')}")
            values.append(found.value if isinstance(found.value, float) else None)
        scores[name] = values
    return scores


class MiniLM:
    """Assay's packaged MiniLM embedder in LangChain's ``Embeddings`` shape, for Ragas."""

    def __init__(self) -> None:
        from langchain_core.embeddings import Embeddings

        embedder = make_embedder("minilm")

        class _Wrapped(Embeddings):
            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                return np.asarray(embedder.embed(texts), dtype=np.float64).tolist()

            def embed_query(self, text: str) -> list[float]:
                return self.embed_documents([text])[0]

        self.embeddings = _Wrapped()


def ragas_scores(rows: list[Sample], url: str, workers: int) -> dict[str, list[float | None]]:
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, SingleTurnSample, evaluate
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import (
        AnswerCorrectness,
        AnswerRelevancy,
        Faithfulness,
        LLMContextPrecisionWithReference,
        LLMContextRecall,
    )
    from ragas.run_config import RunConfig

    chat = ChatOpenAI(base_url=url, api_key="not-used", model="rule-judge", temperature=0)  # type: ignore[arg-type]
    dataset = EvaluationDataset(
        samples=[
            SingleTurnSample(
                user_input=row["question"],
                response=row["answer"],
                retrieved_contexts=row["contexts"],
                reference=row["reference"],
            )
            for row in rows
        ]
    )
    metrics = [
        Faithfulness(),
        AnswerRelevancy(strictness=3),
        LLMContextPrecisionWithReference(),
        LLMContextRecall(),
        AnswerCorrectness(),
    ]
    result = evaluate(
        dataset,
        metrics=metrics,  # type: ignore[arg-type]
        llm=LangchainLLMWrapper(chat),
        embeddings=MiniLM().embeddings,
        run_config=RunConfig(max_workers=workers, max_retries=1),
        show_progress=False,
        raise_exceptions=True,
    )
    frame = result.to_pandas()
    return {
        ours: [None if _nan(v) else float(v) for v in frame[theirs].tolist()]
        for ours, theirs in RAGAS_NAMES.items()
    }


class FewerGenerations(logging.Handler):
    """Counts Ragas's warnings that a call asking for n completions got fewer."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "generations instead of requested" in record.getMessage():
            self.count += 1


def _nan(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def agreement(ours: list[float | None], theirs: list[float | None]) -> dict[str, Any]:
    pairs = [(a, b) for a, b in zip(ours, theirs, strict=True) if a is not None and b is not None]
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    spread = len(pairs) > 1 and a.std() > 0 and b.std() > 0
    return {
        "n": len(pairs),
        "only_one": sum(1 for x, y in zip(ours, theirs, strict=True) if (x is None) != (y is None)),
        "assay": float(a.mean()) if pairs else None,
        "ragas": float(b.mean()) if pairs else None,
        "pearson": float(np.corrcoef(a, b)[0, 1]) if spread else None,
        "mad": float(np.abs(a - b).mean()) if pairs else None,
        "equal": float(np.mean(np.abs(a - b) < 1e-6)) if pairs else None,
    }


def _fmt(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--k", type=int, default=5, help="passages per answer")
    parser.add_argument("--workers", type=int, default=4, help="Ragas's max_workers")
    args = parser.parse_args()
    fewer = FewerGenerations()
    ragas_log = logging.getLogger("ragas")
    ragas_log.addHandler(fewer)
    ragas_log.propagate = False  # counted, not printed
    with (
        tempfile.TemporaryDirectory() as home,
        Workspace.open(Settings(home=Path(home))) as ws,
        FakeOpenAI([Computed(rule_judge.answer, model="rule-judge")]) as fake,
    ):
        rows = samples(ws, args.k)
        judge = GeneratorSettings(kind="openai", base_url=fake.url, model="rule-judge")
        print(f"{len(rows)} demo tasks with an answer and a reference, top {args.k} passages")
        times: dict[str, list[float]] = {"assay": [], "ragas": []}
        first: dict[str, dict[str, list[float | None]]] = {}
        calls: dict[str, int] = {}
        changed = {"assay": 0, "ragas": 0}
        for _ in range(args.rounds):
            for tool in ("assay", "ragas"):
                before = fake.count
                began = time.perf_counter()
                if tool == "assay":
                    found = assay_scores(rows, judge)
                else:
                    found = ragas_scores(rows, fake.url, args.workers)
                times[tool].append(time.perf_counter() - began)
                calls[tool] = fake.count - before
                if tool in first and found != first[tool]:
                    changed[tool] += 1  # the table shows the first round's scores
                first.setdefault(tool, found)
        print(f"judge settings: {asdict(judge)['model']} at {fake.url} (rule judge)")
        print("\nmetric               n  only1  Assay mean  Ragas mean  Pearson  mean|diff|  equal")
        for name in CATALOGUE:
            got = agreement(first["assay"][name], first["ragas"][name])
            print(
                f"{name:<19} {got['n']:>3} {got['only_one']:>6} {_fmt(got['assay']):>11} "
                f"{_fmt(got['ragas']):>11} {_fmt(got['pearson']):>8} {_fmt(got['mad']):>11} "
                f"{_fmt(got['equal'], 2):>6}"
            )
        print("\nseconds per round (all five metrics, all tasks):")
        for tool, measured in times.items():
            print(
                f"  {tool:<6} min {min(measured):.2f}  median {statistics.median(measured):.2f}  "
                f"judge calls {calls[tool]}  (Assay: one call at a time; Ragas: "
                f"{args.workers} workers)"
                if tool == "assay"
                else f"  {tool:<6} min {min(measured):.2f}  median "
                f"{statistics.median(measured):.2f}  judge calls {calls[tool]}"
            )
        print(
            f"Ragas calls that asked for 3 questions and got fewer (shared n, concurrent "
            f"workers): {fewer.count} over {args.rounds} round(s)"
        )
        print(f"rounds whose scores differ from the first: {changed}")
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
