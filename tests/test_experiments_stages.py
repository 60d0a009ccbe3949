"""Pipeline stages in experiments (rerank, rewrite, expansion, filters) and cost totals, on
SQLite and PostgreSQL, with the fake OpenAI server and the fake rerank server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay.errors import InvalidInput
from assay.experiments import create_experiment, get_experiment, iter_results, run_experiment
from assay.experiments.costs import cost_totals, parse_prices
from assay.records import Project
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.experiments_corpus import Corpus, build_corpus
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rerank_server import FakeReranker, Overlap, Raw


@pytest.fixture
def corpus(any_ws: Workspace) -> Corpus:
    return build_corpus(any_ws, create_project(any_ws, "stages", "en"))


@pytest.fixture(scope="module")
def reranker() -> Iterator[FakeReranker]:
    with FakeReranker() as server:
        yield server


def _texts(any_ws: Workspace, project: Project) -> dict[str, str]:
    from assay.corpus.documents import get_document, list_documents

    return {d.id: get_document(any_ws, project, d.id).text for d in list_documents(any_ws, project)}


def test_rerank_pipelines_and_a_failing_reranker(
    any_ws: Workspace, corpus: Corpus, reranker: FakeReranker
) -> None:
    project = corpus.project
    reranker.reset([Overlap()])
    with FakeReranker([Raw('{"results": [{"index": 99, "relevance_score": 1}]}')]) as broken:
        created = create_experiment(
            any_ws,
            project,
            "rerank",
            pipelines=[
                "keyword",
                {"name": "keyword+rerank", "reranker": {"url": reranker.url, "retries": 0}},
                {"name": "broken", "reranker": {"url": broken.url, "retries": 0}},
            ],
        )
        done = run_experiment(any_ws, project, created.id)
    tasks, searched = 5, 4  # "lunch on the moon" finds nothing: nothing to rerank
    assert done.status == "done"
    assert done.aggregates["keyword+rerank"]["errors"] == 0
    assert done.aggregates["broken"]["errors"] == searched
    assert done.error_count == searched and done.done_count == 3 * tasks - searched
    results = list(iter_results(any_ws, project, created.id))
    failed = [r for r in results if r.pipeline == "broken" and r.error]
    assert len(failed) == searched
    assert all(f"reranker {broken.url}" in (r.error or "") for r in failed)
    assert "index is 99" in (failed[0].error or "")
    reranked = [r for r in results if r.pipeline == "keyword+rerank"]
    assert all(r.error is None for r in reranked)
    assert sum(1 for r in reranked if r.retrieved) == searched
    assert len(reranker.requests) == searched
    # the reranker's scores are the stored scores, best first
    for result in reranked:
        scores = [e["score"] for e in result.retrieved]
        assert scores == sorted(scores, reverse=True)


def test_rewrite_expand_filters_usage_and_costs(
    any_ws: Workspace, corpus: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = corpus.project
    monkeypatch.setenv("ASSAY_LLM_PRICES", '{"fake-model": {"input": 1000, "output": 2000}}')
    with FakeOpenAI([Reply("hotel refund night")]) as server:
        generator = {"kind": "openai", "base_url": server.url, "model": "m", "retries": 0}
        created = create_experiment(
            any_ws,
            project,
            "stages",
            mode="rag",
            pipelines=[
                {"name": "plain", "generator": generator},
                {
                    "name": "rewritten",
                    "generator": generator,
                    "rewrite": "rephrase",
                    "expand": 1,
                    "filters": {"missing-key": "x"},
                },
            ],
        )
        # every call counted and billed: no reply from the response cache (two tasks ask
        # the same prompt)
        done = run_experiment(any_ws, project, created.id, cache=False)
        calls = server.count
    tasks = 5
    assert done.status == "done" and done.error_count == 0
    assert calls == 3 * tasks  # plain: answer; rewritten: rewrite + answer
    results = {(r.pipeline, r.task_id): r for r in iter_results(any_ws, project, created.id)}
    one = next(r for (p, _), r in results.items() if p == "rewritten")
    assert one.details["rewrite"]["query"] == "hotel refund night"
    assert set(one.details["usage"]) == {"rewrite", "generate"}
    assert one.retrieved == []  # no document has the key: the filter keeps nothing
    plain = next(r for (p, _), r in results.items() if p == "plain")
    assert set(plain.details["usage"]) == {"generate"}
    costs = done.costs
    # every fake reply reports 11 prompt and 5 completion tokens
    assert costs["pipelines"]["plain"]["calls"] == tasks
    assert costs["pipelines"]["rewritten"]["calls"] == 2 * tasks
    total = costs["total"]
    assert (total["input_tokens"], total["output_tokens"]) == (11 * 3 * tasks, 5 * 3 * tasks)
    assert total["cost_usd"] == pytest.approx((165 * 1000 + 75 * 2000) / 1e6)
    assert costs["pipelines"]["plain"]["cost_usd"] == pytest.approx((55 * 1000 + 25 * 2000) / 1e6)
    assert get_experiment(any_ws, project, created.id).costs == costs


def test_expansion_in_an_experiment_keeps_exact_offsets(any_ws: Workspace, corpus: Corpus) -> None:
    project = corpus.project
    created = create_experiment(
        any_ws,
        project,
        "expand",
        pipelines=["keyword", {"name": "wide", "expand": 1, "filters": "year in 1 | 2"}],
    )
    assert created.pipelines[1]["filters"] == {"year": ["1", "2"]}
    created = create_experiment(
        any_ws, project, "expand2", pipelines=["keyword", {"name": "wide", "expand": 1}]
    )
    done = run_experiment(any_ws, project, created.id)
    assert done.error_count == 0
    texts = _texts(any_ws, project)
    wide = [r for r in iter_results(any_ws, project, created.id) if r.pipeline == "wide"]
    merged = 0
    for result in wide:
        for entry, context in zip(result.retrieved, result.contexts, strict=True):
            assert texts[entry["doc_id"]][entry["start"] : entry["end"]] == context
            merged += len(entry.get("chunk_ids", [])) > 1
    assert merged > 0
    # the chunk the search found is what is scored: the same as without expansion
    assert (
        done.aggregates["wide"]["overall"]["nDCG@10"]
        == done.aggregates["keyword"]["overall"]["nDCG@10"]
    )


def test_options_are_checked_when_the_experiment_is_created(
    any_ws: Workspace, corpus: Corpus
) -> None:
    project = corpus.project
    with pytest.raises(
        InvalidInput, match="pipeline 'x': reranker settings: kind 'http' needs url"
    ):
        create_experiment(
            any_ws, project, "bad", pipelines=[{"name": "x", "reranker": {"kind": "http"}}]
        )
    with pytest.raises(InvalidInput, match="apply to kind 'search' only"):
        create_experiment(
            any_ws,
            project,
            "bad",
            pipelines=[
                {"name": "x", "kind": "external", "endpoint": "http://127.0.0.1:9/", "expand": 1}
            ],
        )
    with pytest.raises(InvalidInput, match="pipeline 'x': rewrite 'hyde' needs a generator"):
        create_experiment(any_ws, project, "bad", pipelines=[{"name": "x", "rewrite": "hyde"}])
    with pytest.raises(InvalidInput, match="'x': the LLM reranker needs a generator"):
        create_experiment(
            any_ws, project, "bad", pipelines=[{"name": "x", "reranker": {"kind": "llm"}}]
        )
    private = {"kind": "openai", "base_url": "http://10.0.0.1/v1", "model": "m"}
    with pytest.raises(InvalidInput, match="'x': rewrite generator base_url: outgoing request"):
        create_experiment(
            any_ws,
            project,
            "bad",
            pipelines=[{"name": "x", "rewrite": "hyde", "rewrite_generator": private}],
        )
    with pytest.raises(InvalidInput, match="reranker url: outgoing request refused"):
        create_experiment(
            any_ws,
            project,
            "bad",
            pipelines=[{"name": "x", "reranker": {"url": "http://169.254.169.254/rerank"}}],
        )


def test_cost_totals_without_prices_and_with_bad_prices() -> None:
    rows = [
        ("a", {"usage": {"generate": {"model": "m", "prompt_tokens": 10, "completion_tokens": 4}}}),
        ("a", {"usage": {"rerank": {"model": "r", "total_tokens": 7}}}),
        (
            "b",
            {
                "judges": {
                    "ok": {"usage": {"model": "j", "prompt_tokens": 3, "completion_tokens": 1}}
                }
            },
        ),
        ("b", {}),
    ]
    totals = cost_totals(rows, ["a", "b", "c"], prices={"m": (1.0, 2.0)})
    a = totals["pipelines"]["a"]
    assert (a["calls"], a["input_tokens"], a["output_tokens"]) == (2, 17, 4)
    assert a["cost_usd"] is None and a["unpriced"] == ["r"]
    assert a["by_model"]["m"]["cost_usd"] == pytest.approx(18 / 1e6)
    assert totals["pipelines"]["c"]["calls"] == 0 and totals["pipelines"]["c"]["cost_usd"] == 0.0
    assert totals["total"]["total_tokens"] == 25
    with pytest.raises(InvalidInput, match="'m' input must be a number >= 0"):
        parse_prices('{"m": {"input": -1}}')
    with pytest.raises(InvalidInput, match="ASSAY_LLM_PRICES is not JSON"):
        parse_prices("{")
