"""LLM-as-judge: verdict parsing, failures as "error", and judge metrics in a run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from assay.errors import InvalidInput
from assay.experiments import create_experiment, iter_results, run_experiment
from assay.experiments.judge import JudgeMetric, judge, parse_verdict, render_judge_prompt
from assay.experiments.tasks import build_tasks
from assay.llm import GeneratorSettings, make_generator
from assay.records import Project
from assay.store.workspace import Workspace
from tests.experiments_corpus import build_corpus
from tests.fakes.openai_server import FakeOpenAI, Reply, Status

VALUES = ("Yes", "Partially", "No")


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI([Reply("<verdict>yes</verdict>")]) as server:
        yield server


def metric(url: str, **extra: Any) -> JudgeMetric:
    settings = GeneratorSettings(kind="openai", base_url=url, model="judge", retries=0)
    return JudgeMetric(name="faithful", values=VALUES, generator=settings, **extra)


def test_verdict_from_tags_case_insensitive() -> None:
    assert parse_verdict("I think so.\n<verdict>YES</verdict>", VALUES) == "Yes"
    assert parse_verdict("<VERDICT> partially. </VERDICT>", VALUES) == "Partially"
    assert parse_verdict("<verdict>\nNo\n</verdict> and more", VALUES) == "No"


def test_verdict_falls_back_to_first_non_empty_line() -> None:
    assert parse_verdict("\n\n  No.\nBecause the answer invents a date.", VALUES) == "No"
    assert parse_verdict("**Yes**", VALUES) == "Yes"


def test_unparseable_verdicts() -> None:
    assert parse_verdict("<verdict>maybe</verdict>", VALUES) is None
    assert parse_verdict("The answer is mostly right.", VALUES) is None
    assert parse_verdict("", VALUES) is None


def test_judge_metric_is_checked() -> None:
    with pytest.raises(InvalidInput, match="offline generator cannot judge"):
        JudgeMetric("j", VALUES, GeneratorSettings())
    online = GeneratorSettings(kind="openai", base_url="http://127.0.0.1:9/v1", model="m")
    with pytest.raises(InvalidInput, match=r"unknown placeholder\(s\) ANSWER"):
        JudgeMetric("j", VALUES, online, template="${ANSWER}")
    with pytest.raises(InvalidInput, match="reserved"):
        JudgeMetric("j", ("ok", "Error"), online)
    with pytest.raises(InvalidInput, match="values must be"):
        JudgeMetric("j", (), online)
    same = JudgeMetric("j", VALUES, online)
    assert JudgeMetric.from_json(same.to_json()) == same


def test_judge_calls_render_placeholders(ws: Workspace, project: Project, fake: FakeOpenAI) -> None:
    corpus = build_corpus(ws, project)
    task = build_tasks(ws, corpus.project)[3]
    judged = metric(fake.url)
    prompt = render_judge_prompt(judged, task, "By encryption.", ["ctx one", "ctx two"])
    assert "[DOCUMENT]\nctx one\n[END]\n[DOCUMENT]\nctx two\n[END]" in prompt
    assert "user: How long must passwords be?" in prompt
    assert "assistant: At least 14 characters." in prompt
    assert "By encryption." in prompt and "With full disk encryption." in prompt
    assert "Allowed values: Yes, Partially, No." in prompt
    verdict = judge(make_generator(judged.generator), judged, task, "By encryption.", [])
    assert verdict.value == "Yes" and verdict.error == ""
    fake.reset([Reply("I cannot decide.")])
    verdict = judge(make_generator(judged.generator), judged, task, "x", [])
    assert verdict.value == "error" and "no allowed value" in verdict.error
    fake.reset([Status(500)])
    verdict = judge(make_generator(judged.generator), judged, task, "x", [])
    assert verdict.value == "error" and "failed" in verdict.error


def test_judge_metric_in_an_experiment(ws: Workspace, project: Project, fake: FakeOpenAI) -> None:
    corpus = build_corpus(ws, project)
    fake.reset([Reply("<verdict>Yes</verdict>"), Reply("hmm"), Reply("<verdict>No</verdict>")])
    judged = metric(fake.url).to_json()
    created = create_experiment(
        ws,
        corpus.project,
        "judged",
        mode="rag",
        pipelines=["keyword"],
        metrics=["token_f1", judged],
        concurrency=1,  # the scripted replies follow the order of the tasks
    )
    done = run_experiment(ws, corpus.project, created.id)
    assert done.status == "done" and done.error_count == 0
    values = [r.metrics["faithful"] for r in iter_results(ws, corpus.project, created.id)]
    assert values == ["Yes", "error", "No", "No", "No"]
    summary = done.aggregates["keyword"]["overall"]["faithful"]
    assert summary["counts"] == {"Yes": 1, "error": 1, "No": 3}
    assert summary["errors"] == 1 and summary["mean"] is None
    second = list(iter_results(ws, corpus.project, created.id))[1]
    assert second.details["judges"]["faithful"]["reply"] == "hmm"
    with pytest.raises(InvalidInput, match="needs answers"):
        create_experiment(ws, corpus.project, "r", pipelines=["keyword"], metrics=[judged])
