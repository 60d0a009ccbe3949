"""Per-task metrics, aggregates, and reading run files, qrels and JSONL answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import InvalidInput
from assay.experiments import create_experiment, iter_results, run_experiment
from assay.experiments.runfiles import ranking, read_answers, read_qrels, read_run
from assay.experiments.scoring import (
    DEFAULT_METRICS,
    Outcome,
    aggregate,
    metric_plan,
    score_task,
    summarise,
)
from assay.experiments.tasks import Task
from assay.metrics import evaluate, retrieval_scores
from assay.records import Evidence, Project
from assay.store.workspace import Workspace
from tests.experiments_corpus import build_corpus


def make_task(groups: list[list[str]], answer: str = "Paris", query_type: str = "fact") -> Task:
    evidence = tuple(
        Evidence(f"doc-{c}", 0, 5, f"text of {c}", group=number + 1, chunk_ids=(c,))
        for number, group in enumerate(groups)
        for c in group
    )
    return Task(
        task_id="i::1",
        item_id="i",
        turn=1,
        turns=("Where?",),
        rewrite="",
        history=(),
        query_type=query_type,
        evidence=evidence,
        answer=answer,
        alternatives=(),
        unanswerable=not groups,
    )


def hits(*ids: str) -> tuple[dict[str, object], ...]:
    return tuple(
        {"chunk_id": i, "doc_id": f"doc-{i}", "rank": n, "text": f"text of {i}"}
        for n, i in enumerate(ids, start=1)
    )


def test_score_task_matches_the_metric_functions() -> None:
    task = make_task([["a"], ["b"]])
    outcome = Outcome(retrieved=hits("x", "a", "y", "b"), answer="Paris.")
    plan = metric_plan(
        ["retrieval_recall@2", "retrieval_map", "nDCG@3", "substring_rank", "token_f1"], "rag"
    )
    scores = score_task(plan, task, outcome)
    reference = retrieval_scores([["a"], ["b"]], ["x", "a", "y", "b"])
    assert reference is not None
    assert scores["retrieval_recall@2"] == 0.5
    assert scores["retrieval_map"] == reference.map
    run = {"q": {"x": 4.0, "a": 3.0, "y": 2.0, "b": 1.0}}
    assert scores["nDCG@3"] == evaluate({"q": {"a": 1, "b": 1}}, run, ["nDCG@3"])["nDCG@3"]
    assert scores["substring_rank"] == 2.0
    assert scores["token_f1"] == 1.0


def test_unanswerable_skips_retrieval_but_not_answers() -> None:
    task = make_task([], answer="The documents do not say.")
    plan = metric_plan(["retrieval_recall", "nDCG@10", "substring_hit", "exact_match"], "rag")
    scores = score_task(plan, task, Outcome(retrieved=hits("a"), answer="The documents do not say"))
    assert scores == {
        "retrieval_recall": None,
        "nDCG@10": None,
        "substring_hit": None,
        "exact_match": 1.0,
    }


def test_document_level_scoring() -> None:
    task = make_task([["a"]])
    outcome = Outcome(retrieved=({"chunk_id": None, "doc_id": "doc-a", "rank": 1},))
    plan = metric_plan(["retrieval_recall", "RR"], "retrieval")
    assert score_task(plan, task, outcome, level="doc") == {"retrieval_recall": 1.0, "RR": 1.0}
    assert score_task(plan, task, outcome, level="chunk")["retrieval_recall"] == 0.0


def test_aggregate_means_and_labels() -> None:
    rows = [
        ("fact", {"m": 1.0, "j": "Yes"}),
        ("fact", {"m": 0.0, "j": "No"}),
        ("multi", {"m": None, "j": "Yes"}),
    ]
    summary = aggregate(rows, ["m", "j"])
    assert summary["tasks"] == 3
    assert summary["overall"]["m"] == {"count": 2, "skipped": 1, "mean": 0.5}
    assert summary["overall"]["j"]["counts"] == {"Yes": 2, "No": 1}
    assert summary["by_query_type"]["multi"]["m"]["mean"] is None
    assert summarise(["4", "5", "error"])["mean"] == 4.5  # a numeric scale gets a mean


def test_metric_plan_defaults_and_checks() -> None:
    assert metric_plan(None, "generation").names == list(DEFAULT_METRICS["generation"])
    assert metric_plan(["ndcg@10", "nDCG@10"], "retrieval").names == ["nDCG@10"]
    with pytest.raises(InvalidInput, match="unknown mode"):
        metric_plan(None, "offline")
    with pytest.raises(InvalidInput, match="unknown metric"):
        metric_plan(["accuracy"], "rag")


def test_read_run_and_qrels(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 2.5 t\n\nq2 Q0 d3 1 1 t\n")
    assert read_run(run) == {"q1": {"d1": 2.5, "d2": 2.5}, "q2": {"d3": 1.0}}
    assert ranking(read_run(run)["q1"]) == [("d2", 2.5), ("d1", 2.5)]  # trec_eval's tie order
    run.write_text("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 high t\n")
    with pytest.raises(InvalidInput, match=r"run.txt, line 2: the score \(field 5\) is not a") as e:
        read_run(run)
    assert "high" not in str(e.value)  # what a file holds is never repeated
    run.write_text("q1 Q0 d1 1 2.5 t\nq1 Q0 d1 2 2.0 t\n")
    with pytest.raises(InvalidInput, match=r"line 2: the docid was already listed .* line 1"):
        read_run(run)
    run.write_text("q1 d1 1\n")
    with pytest.raises(InvalidInput, match="line 1: a run line has 6 fields"):
        read_run(run)
    trec = tmp_path / "qrels.txt"
    trec.write_text("q1 0 d1 2\nq1 0 d2 0\n")
    assert read_qrels(trec) == {"q1": {"d1": 2, "d2": 0}}
    beir = tmp_path / "qrels.tsv"
    beir.write_text("query-id\tcorpus-id\tscore\nq1\td 1\t1\n")
    assert read_qrels(beir) == {"q1": {"d 1": 1}}
    beir.write_text("query-id\tcorpus-id\tscore\nq1\td1\n")
    with pytest.raises(InvalidInput, match="line 2: expected query-id, corpus-id, score"):
        read_qrels(beir)
    with pytest.raises(InvalidInput, match="file not found"):
        read_run(tmp_path / "missing.txt")


def test_read_answers(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text('{"query_id": "q1", "answer": "a", "contexts": ["one", {"doc_id": "d"}]}\n')
    assert read_answers(path) == {
        "q1": {"answer": "a", "contexts": [{"text": "one"}, {"doc_id": "d"}]}
    }
    path.write_text('{"task_id": "q1", "answer": "a"}\n{"answer": "b"}\n')
    with pytest.raises(InvalidInput, match="line 2: needs a task_id"):
        read_answers(path)
    path.write_text('{"task_id": "q1", "answer": 3}\n')
    with pytest.raises(InvalidInput, match="'answer' must be text"):
        read_answers(path)


def test_file_pipeline_with_document_ids(ws: Workspace, project: Project, tmp_path: Path) -> None:
    corpus = build_corpus(ws, project)
    item = corpus.items[0]
    run = tmp_path / "run.txt"
    run.write_text(f"{item.id} Q0 leave.txt 1 2 t\n{item.id} Q0 {corpus.travel.id} 2 1 t\n")
    spec = {"name": "files", "kind": "file", "run_file": run}  # a Path: the local user's file
    created = create_experiment(
        ws, project, "docs", pipelines=[spec], metrics=["retrieval_recall", "RR"]
    )
    done = run_experiment(ws, project, created.id)
    assert done.done_count == 1 and done.error_count == 4  # only one task is in the file
    (result,) = [r for r in iter_results(ws, project, created.id) if not r.error]
    assert result.details["level"] == "doc"
    assert result.retrieved[0]["doc_id"] == corpus.leave.id  # found by name
    assert result.metrics == {"retrieval_recall": 1.0, "RR": 0.5}
