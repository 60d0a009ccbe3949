"""The LLM metric catalogue on hand-made cases, through a scripted judge over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.errors import InvalidInput
from assay.experiments import create_experiment, get_experiment, iter_results, run_experiment
from assay.experiments.catalogue import CatalogueMetric
from assay.experiments.catalogue_prompts import ReplyError, read_claims, read_verdicts
from assay.experiments.catalogue_scoring import average_precision, claims_f1, score_catalogue
from assay.experiments.costs import cost_totals
from assay.experiments.judge_agreement import judge_agreement
from assay.experiments.scoring import metric_plan
from assay.experiments.tasks import Task, build_tasks
from assay.gold.project_config import update_settings
from assay.llm import GeneratorSettings, make_generator
from assay.records import Project
from assay.search.embeddings import make_embedder
from assay.store.projects import create_project, get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from tests.experiments_corpus import build_corpus
from tests.fakes import rule_judge
from tests.fakes.openai_server import Computed, FakeOpenAI, Reply
from tests.test_web_experiment_compare import client_for

QUESTION = "How long must passwords be?"
REFERENCE = "Passwords must have at least 14 characters."
PASSWORDS = "Passwords must have at least 14 characters and are changed after a leak."
HOTELS = "Hotel costs are refunded up to 120 euros per night in large cities."


@pytest.fixture
def judge_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI([Computed(rule_judge.answer, model="rule-judge")]) as server:
        yield server


def settings(url: str) -> GeneratorSettings:
    return GeneratorSettings(kind="openai", base_url=url, model="rule-judge", retries=0)


def judged_project(ws: Workspace, project: Project, server: FakeOpenAI) -> Project:
    """The experiments corpus, its generator (the judge) the scripted server."""
    corpus = build_corpus(ws, project)
    return update_settings(ws, corpus.project, {"generator": asdict(settings(server.url))})


def task(reference: str = REFERENCE) -> Task:
    return Task(
        task_id="t::1",
        item_id="t",
        turn=1,
        turns=(QUESTION,),
        rewrite="",
        history=(),
        query_type="",
        evidence=(),
        answer=reference,
        alternatives=(),
    )


def score(
    server: FakeOpenAI, name: str, answer: str, contexts: list[str], reference: str = REFERENCE
) -> tuple[object, dict[str, object]]:
    metric = CatalogueMetric(name, settings(server.url))
    embed = make_embedder("hashing").embed
    found = score_catalogue(
        metric, make_generator(metric.generator), task(reference), answer, contexts, embed
    )
    return found.value, found.details


def test_faithfulness_counts_supported_claims(judge_server: FakeOpenAI) -> None:
    supported = "Passwords must have at least 14 characters."
    invented = "Passwords expire every ninety days by default."
    value, details = score(judge_server, "faithfulness", f"{supported} {invented}", [PASSWORDS])
    claims = details["claims"]
    assert isinstance(claims, list)
    assert [c.rstrip(".") for c in claims] == [supported.rstrip("."), invented.rstrip(".")]
    assert details["verdicts"] == [1, 0]
    assert value == 0.5
    assert judge_server.count == 2  # claims, then one verification of all of them
    usage = details["usage"]
    assert isinstance(usage, list) and len(usage) == 2 and usage[0]["model"] == "rule-judge"
    value, _ = score(judge_server, "faithfulness", supported, [PASSWORDS])
    assert value == 1.0
    assert score(judge_server, "faithfulness", supported, [])[0] is None  # nothing to check


def test_context_precision_ranks_relevant_before_irrelevant(judge_server: FakeOpenAI) -> None:
    value, details = score(judge_server, "context_precision", "", [PASSWORDS, HOTELS])
    assert details["verdicts"] == [1, 0] and value == 1.0
    value, details = score(judge_server, "context_precision", "", [HOTELS, PASSWORDS])
    assert details["verdicts"] == [0, 1] and value == pytest.approx(0.5)  # precision@2 = 1/2
    assert score(judge_server, "context_precision", "", [HOTELS])[0] == 0.0
    assert average_precision([1, 0, 1]) == pytest.approx((1 + 2 / 3) / 2)


def test_context_recall_is_the_share_of_reference_sentences_found(
    judge_server: FakeOpenAI,
) -> None:
    reference = f"{REFERENCE} Hotels are refunded up to 120 euros per night."
    value, details = score(judge_server, "context_recall", "", [PASSWORDS], reference)
    assert details["verdicts"] == [1, 0] and value == 0.5
    value, _ = score(judge_server, "context_recall", "", [PASSWORDS, HOTELS], reference)
    assert value == 1.0
    assert score(judge_server, "context_recall", "", [], reference)[0] == 0.0


def test_answer_correctness_is_claim_f1_blended_with_similarity(
    judge_server: FakeOpenAI,
) -> None:
    answer = "Passwords must have at least 14 characters. Laptops are painted blue."
    reference = f"{REFERENCE} Hotels are refunded up to 120 euros per night."
    value, details = score(judge_server, "answer_correctness", answer, [], reference)
    assert (details["tp"], details["fp"], details["fn"]) == (1, 1, 1)
    assert details["f1"] == pytest.approx(0.5)
    similarity = details["similarity"]
    assert isinstance(similarity, float)
    assert value == pytest.approx(0.75 * 0.5 + 0.25 * similarity, abs=1e-6)
    assert claims_f1(0, 3, 2) == 0.0 and claims_f1(2, 0, 0) == 1.0


def test_answer_relevancy_uses_generated_questions_and_noncommittal(
    judge_server: FakeOpenAI,
) -> None:
    value, details = score(judge_server, "answer_relevancy", REFERENCE, [])
    assert len(details["questions"]) == 3 and details["noncommittal"] == 0
    off_topic, _ = score(judge_server, "answer_relevancy", HOTELS, [])
    assert isinstance(value, float) and isinstance(off_topic, float)
    assert value > off_topic  # the question asked resembles the relevant answer's questions
    evasive, details = score(judge_server, "answer_relevancy", "I don't know that.", [])
    assert details["noncommittal"] == 1 and evasive == 0.0
    assert judge_server.count == 3  # one call per answer


def test_a_malformed_reply_is_an_error_with_the_reply(judge_server: FakeOpenAI) -> None:
    judge_server.reset([Reply("Sure! The claims are: passwords are long.")])
    value, details = score(judge_server, "faithfulness", REFERENCE, [PASSWORDS])
    assert value == "error"
    assert "not a JSON object" in str(details["error"])
    assert details["reply"] == "Sure! The claims are: passwords are long."
    # a verdict list that does not cover every statement is refused too
    judge_server.reset([Reply('{"claims": ["a", "b"]}'), Reply('{"verdicts": []}')])
    value, details = score(judge_server, "faithfulness", REFERENCE, [PASSWORDS])
    assert value == "error" and "must list 2 statement(s), got 0" in str(details["error"])


def test_strict_readers() -> None:
    assert read_claims('```json\n{"claims": ["x"]}\n```') == ["x"]
    assert read_claims('{"claims": []}') == []
    for bad in ('{"claims": "x"}', '{"claims": [""]}', "claims: x", "[1]"):
        with pytest.raises(ReplyError):
            read_claims(bad)
    good = '{"verdicts": [{"statement": 1, "verdict": 1}, {"statement": 2, "verdict": 0}]}'
    assert read_verdicts(good, 2) == [1, 0]
    for bad in (
        '{"verdicts": [{"statement": 1, "verdict": 2}]}',
        '{"verdicts": [{"statement": 2, "verdict": 1}]}',
        '{"verdicts": [{"statement": 1, "verdict": true}]}',
    ):
        with pytest.raises(ReplyError):
            read_verdicts(bad, 1)


def test_catalogue_names_are_checked_against_mode_and_judge() -> None:
    judge = GeneratorSettings(kind="openai", base_url="http://127.0.0.1:9/v1", model="j")
    plan = metric_plan(["Faithfulness", "context-recall", "nDCG@10"], "rag", judge)
    assert plan.names == ["nDCG@10", "faithfulness", "context_recall"]
    stored = plan.to_json()[1]
    assert stored["kind"] == "llm" and stored["generator"]["model"] == "j"
    assert metric_plan(plan.to_json(), "rag").names == plan.names  # stored: judge inside
    with pytest.raises(InvalidInput, match="offline one"):
        metric_plan(["faithfulness"], "rag", GeneratorSettings())
    with pytest.raises(InvalidInput, match="mode 'retrieval' makes none"):
        metric_plan(["answer_relevancy"], "retrieval", judge)
    with pytest.raises(InvalidInput, match="gives the gold passages"):
        metric_plan(["context_precision"], "generation", judge)
    assert metric_plan(["context_precision"], "retrieval", judge).names == ["context_precision"]
    renamed = {"kind": "llm", "metric": "faithfulness", "name": "faith_big"}
    assert metric_plan(["faithfulness", renamed], "rag", judge).names == [
        "faithfulness",
        "faith_big",
    ]
    with pytest.raises(InvalidInput, match="unknown field"):
        metric_plan([{"kind": "llm", "metric": "faithfulness", "model": "x"}], "rag", judge)


def test_catalogue_metrics_in_an_experiment(
    ws: Workspace, project: Project, judge_server: FakeOpenAI
) -> None:
    judged = judged_project(ws, project, judge_server)
    created = create_experiment(
        ws,
        judged,
        "catalogue",
        mode="rag",
        pipelines=["keyword"],
        metrics=["faithfulness", "context_precision", "context_recall"],
    )
    done = run_experiment(ws, judged, created.id)
    assert done.status == "done" and done.error_count == 0
    results = list(iter_results(ws, judged, created.id))
    for result in results:
        for name in ("faithfulness", "context_precision", "context_recall"):
            value = result.metrics[name]
            assert value is None or 0.0 <= value <= 1.0, (name, value)
    overall = done.aggregates["keyword"]["overall"]
    assert overall["context_recall"]["count"] > 0
    assert overall["context_recall"]["mean"] is not None
    totals = cost_totals(((r.pipeline, r.details) for r in results), prices={})
    calls = sum(len(r.details["judges"][n]["calls"]) for r in results for n in r.details["judges"])
    assert totals["total"]["by_model"]["rule-judge"]["calls"] == calls == judge_server.count


def test_llm_metrics_by_name_in_eval_and_experiments_create(
    tmp_path: Path, judge_server: FakeOpenAI
) -> None:
    home = tmp_path / "ws"
    with Workspace.open(Settings(home=home)) as ws:
        project = create_project(ws, "handbook", "en")
        build_corpus(ws, project)
        tasks = build_tasks(ws, project)

    def cli(*args: str) -> Any:
        return CliRunner().invoke(make_app(), ["--home", str(home), *args])

    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"task_id": t.task_id, "answer": t.answer, "contexts": [t.answer]}) + "\n"
            for t in tasks
        )
    )
    refused = cli("eval", "--answers", str(answers), "-m", "faithfulness")
    assert refused.exit_code != 0 and "offline one" in refused.output
    judge = json.dumps(asdict(settings(judge_server.url)))
    assert cli("projects", "settings", "--project", "handbook", "--generator", judge).exit_code == 0
    scored = cli(
        "eval", "--answers", str(answers), "--json", "-m", "faithfulness", "-m", "context_recall"
    )
    assert scored.exit_code == 0, scored.output
    means = json.loads(scored.output)["metrics"]
    assert means["faithfulness"] == 1.0 and means["context_recall"] == 1.0  # answer = context
    gate = cli(
        "eval", "--answers", str(answers), "-m", "token_f1", "--fail-under", "Faithfulness=2"
    )
    assert gate.exit_code == 3 and "faithfulness" in gate.output
    created = cli("experiments", "create", "judged", "--mode", "rag", "-m", "answer_correctness")
    assert created.exit_code == 0, created.output
    with Workspace.open(Settings(home=home)) as ws:
        stored = get_experiment(ws, get_project(ws, "handbook"), "judged").metrics
    assert stored[0]["kind"] == "llm" and stored[0]["generator"]["base_url"] == judge_server.url


def test_judge_against_human_reads_llm_scores_as_yes_or_no(
    ws: Workspace, project: Project, judge_server: FakeOpenAI
) -> None:
    judged = judged_project(ws, project, judge_server)
    created = create_experiment(
        ws, judged, "agree", mode="rag", pipelines=["keyword"], metrics=["context_recall"]
    )
    run_experiment(ws, judged, created.id)
    report = judge_agreement(ws, judged, created.id)
    assert report["judge_metrics"] == ["context_recall"]
    found = {r["source"]: r for r in report["reports"]}
    assert set(found) == {"gold:answerable", "gold:relevant_context"}
    expected = {
        r.task_id: "yes" if r.metrics["context_recall"] >= 0.5 else "no"
        for r in iter_results(ws, judged, created.id)
        if isinstance(r.metrics["context_recall"], float)
    }
    relevant = found["gold:relevant_context"]
    assert relevant["judged"] == len(expected) and relevant["pairs"] > 0
    shown = {d["task_id"]: d["judge"] for d in relevant["disagreements"]}
    assert all(expected[task_id] == label for task_id, label in shown.items())


def test_a_reply_the_judge_got_wrong_is_shown_on_the_task_page(
    ws: Workspace, project: Project, judge_server: FakeOpenAI
) -> None:
    judged = judged_project(ws, project, judge_server)
    judge_server.reset([Reply("The answer is faithful, I think.")])
    created = create_experiment(
        ws, judged, "broken", mode="rag", pipelines=["keyword"], metrics=["faithfulness"]
    )
    done = run_experiment(ws, judged, created.id)
    assert done.status == "done"
    summary = done.aggregates["keyword"]["overall"]["faithfulness"]
    assert summary["errors"] > 0 and summary["mean"] is None  # no silent 0
    failed = next(r for r in iter_results(ws, judged, created.id) if r.metrics["faithfulness"])
    assert failed.metrics["faithfulness"] == "error"
    client = client_for(ws)
    page = client.get(f"/projects/{judged.name}/experiments/{created.id}/tasks/{failed.task_id}")
    assert page.status_code == 200
    assert "is not a JSON object" in page.text
    assert "The answer is faithful, I think." in page.text
    assert "The judge&#39;s reply (faithfulness)" in page.text


def test_llm_metrics_through_the_api(
    ws: Workspace, project: Project, judge_server: FakeOpenAI
) -> None:
    corpus = build_corpus(ws, project)
    client = client_for(ws)
    url = f"/api/projects/{corpus.project.name}/experiments"
    body = {"name": "api", "mode": "retrieval", "pipelines": ["keyword"], "start": False}
    refused = client.post(url, json={**body, "metrics": ["context_recall"]})
    assert refused.status_code == 422 and "offline one" in refused.text
    update_settings(ws, corpus.project, {"generator": asdict(settings(judge_server.url))})
    made = client.post(url, json={**body, "metrics": ["context_recall", "R@10"]})
    assert made.status_code in (200, 201), made.text
    stored = made.json()["metrics"]
    assert stored[0] == "R@10" and stored[1]["metric"] == "context_recall"
    wrong_mode = client.post(url, json={**body, "name": "x", "metrics": ["faithfulness"]})
    assert wrong_mode.status_code == 422 and "mode 'retrieval' makes none" in wrong_mode.text
