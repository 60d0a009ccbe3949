"""Experiments end to end on a small project: every mode, snapshots, cancel and resume."""

from __future__ import annotations

import pytest

from assay.errors import Conflict, InvalidInput
from assay.experiments import (
    cancel_experiment,
    create_experiment,
    get_experiment,
    iter_results,
    list_experiments,
    run_experiment,
    shard_run,
    task_results,
)
from assay.gold.items import editable_copy, get_item, save_item
from assay.metrics import retrieval_scores, token_f1
from assay.records import Project
from assay.store.workspace import Workspace
from tests.experiments_corpus import Corpus, build_corpus

HYBRID = {"name": "hybrid", "retriever": {"kind": "hybrid", "embedder": "hashing", "k": 5}}


@pytest.fixture
def corpus(ws: Workspace, project: Project) -> Corpus:
    return build_corpus(ws, project)


def test_retrieval_mode_keyword_and_hybrid(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    created = create_experiment(
        ws,
        project,
        "retrieval",
        pipelines=["keyword", HYBRID],
        metrics=["retrieval_recall", "retrieval_ndcg@3", "nDCG@10", "substring_hit"],
    )
    assert created.status == "pending" and created.task_count == 5 and created.total == 10
    seen: list[tuple[int, int]] = []
    done = run_experiment(ws, project, created.id, progress=lambda d, t: seen.append((d, t)))
    assert done.status == "done" and done.done_count == 10 and done.error_count == 0
    assert seen[0] == (0, 10) and seen[-1] == (10, 10)
    assert set(done.aggregates) == {"keyword", "hybrid"}
    for name in ("keyword", "hybrid"):
        overall = done.aggregates[name]["overall"]
        assert overall["retrieval_recall"]["count"] == 4  # the unanswerable task is skipped
        assert overall["retrieval_recall"]["skipped"] == 1
        assert 0 < overall["nDCG@10"]["mean"] <= 1
    by_type = done.aggregates["keyword"]["by_query_type"]
    assert set(by_type) == {"fact_single", "fact_multi", "unanswerable"}
    assert by_type["unanswerable"]["retrieval_recall"]["mean"] is None
    for result in iter_results(ws, project, created.id, pipeline="hybrid"):
        assert len(result.retrieved) <= 5 and result.answer == ""
        assert {"chunk_id", "doc_id", "start", "end", "score", "rank"} <= set(result.retrieved[0])
        assert result.timings["retrieve_ms"] >= 0


def test_stored_metrics_equal_the_metric_functions(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    metrics = ["retrieval_recall@2", "token_f1"]
    created = create_experiment(
        ws, project, "check", pipelines=["keyword"], mode="rag", metrics=metrics
    )
    run_experiment(ws, project, created.id)
    first = next(iter_results(ws, project, created.id))
    task, results = task_results(ws, project, created.id, first.task_id)
    result = results["keyword"]
    ids = [r["chunk_id"] for r in result.retrieved]
    expected = retrieval_scores(task.chunk_groups(), ids, 2)
    assert expected is not None
    assert result.metrics["retrieval_recall@2"] == expected.recall
    assert result.metrics["token_f1"] == token_f1(result.answer, task.references)
    assert result.contexts[0] in result.answer or result.answer  # offline answer quotes them


def test_generation_mode_answers_from_gold_passages(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    created = create_experiment(ws, project, "gen", pipelines=["keyword"], mode="generation")
    done = run_experiment(ws, project, created.id)
    assert done.status == "done"
    first = next(iter_results(ws, project, created.id))
    task, _ = task_results(ws, project, created.id, first.task_id)
    assert first.retrieved == []
    assert first.contexts == [e.text for e in task.relevant]
    assert "120 euros" in first.answer
    assert set(first.metrics) == {"token_f1", "exact_match", "rouge_l", "trigram_support"}
    with pytest.raises(InvalidInput, match="scores retrieval"):
        create_experiment(
            ws, project, "bad", pipelines=["keyword"], mode="generation", metrics=["nDCG@10"]
        )
    with pytest.raises(InvalidInput, match="scores answers"):
        create_experiment(ws, project, "bad", pipelines=["keyword"], metrics=["rouge_l"])


def test_tasks_are_a_snapshot(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    created = create_experiment(ws, project, "snap", pipelines=["keyword"])
    item = get_item(ws, project, corpus.items[0].id)
    data = editable_copy(item)
    data.turns[0].answer = "changed later"
    save_item(ws, project, item.id, data, item.version)
    task, _ = task_results(ws, project, created.id, f"{item.id}::1")
    assert task.answer == "Up to 120 euros per night."


def test_names_unique_and_lookup_by_name(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    create_experiment(ws, project, "one", pipelines=["keyword"])
    with pytest.raises(Conflict, match="already has an experiment named 'one'"):
        create_experiment(ws, project, "one", pipelines=["keyword"])
    with pytest.raises(InvalidInput, match="pipeline names must differ"):
        create_experiment(ws, project, "two", pipelines=["keyword", "keyword"])
    with pytest.raises(InvalidInput, match="no tasks"):
        create_experiment(ws, project, "three", pipelines=["keyword"], statuses=["rejected"])
    assert get_experiment(ws, project, "one").name == "one"
    assert [e.name for e in list_experiments(ws, project)] == ["one"]


def test_cancel_then_resume_runs_only_missing_tasks(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    created = create_experiment(ws, project, "resume", pipelines=["keyword", HYBRID])
    calls = {"n": 0}

    def stop_after_two() -> bool:
        calls["n"] += 1
        return calls["n"] > 2

    stopped = run_experiment(ws, project, created.id, should_stop=stop_after_two)
    assert stopped.status == "cancelled"
    assert stopped.done_count == 4  # two tasks × two pipelines
    before = {(r.pipeline, r.task_id): r.created_at for r in iter_results(ws, project, "resume")}
    seen: list[int] = []
    resumed = run_experiment(ws, project, "resume", progress=lambda d, t: seen.append(d))
    assert resumed.status == "done" and resumed.done_count == 10
    assert seen == [4, 5, 6, 7, 8, 9, 10]  # started from the stored four
    after = {(r.pipeline, r.task_id): r.created_at for r in iter_results(ws, project, "resume")}
    assert all(after[key] == stamp for key, stamp in before.items())  # kept, not re-run
    again = run_experiment(ws, project, "resume")
    assert again.done_count == 10


def test_cancel_flag_in_the_database_stops_a_run(ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    pending = create_experiment(ws, project, "pending", pipelines=["keyword"])
    assert cancel_experiment(ws, project, "pending").status == "cancelled"
    assert pending.status == "pending"

    created = create_experiment(ws, project, "flag", pipelines=["keyword"])

    def progress(done: int, total: int) -> None:
        if done == 2:
            cancel_experiment(ws, project, created.id)  # as another process would

    stopped = run_experiment(ws, project, created.id, progress=progress)
    assert stopped.status == "cancelled" and stopped.done_count == 2
    assert not stopped.stop_requested
    assert run_experiment(ws, project, created.id).status == "done"


def test_counts_follow_the_run(
    ws: Workspace, corpus: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another reader (a page showing progress) sees the counts grow batch by batch, while
    the run reports every unit as it finishes."""
    monkeypatch.setattr(shard_run, "BATCH", 2)
    monkeypatch.setattr(shard_run, "FLUSH_S", 3600.0)  # batches by count only, however slow
    project = corpus.project
    created = create_experiment(ws, project, "watched", pipelines=["keyword"])
    seen: list[tuple[int, str, int]] = []

    def progress(done: int, total: int) -> None:
        current = get_experiment(ws, project, created.id, with_aggregates=False)
        seen.append((done, current.status, current.done_count))

    run_experiment(ws, project, created.id, progress=progress)
    assert [done for done, _, _ in seen] == list(range(6))
    assert {status for _, status, _ in seen} == {"running"}
    stored = [count for _, _, count in seen]
    assert stored == sorted(stored) and 0 < stored[3] < 5  # written in batches of two
    assert get_experiment(ws, project, created.id).done_count == 5
