"""Two experiments compared (page and JSON, on SQLite and PostgreSQL), counts that agree, the
metric list of the form, and an LLM judge against people's labels (gold, imported scores)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.experiments import create_experiment, get_experiment, iter_results, run_experiment
from assay.experiments.catalogue import CATALOGUE
from assay.experiments.judge_agreement import judge_agreement
from assay.metrics import METRICS
from assay.metrics.judge_agreement import label_agreement
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.experiments_corpus import build_corpus
from tests.fakes.openai_server import FakeOpenAI, Reply

HYBRID = {"name": "hybrid", "retriever": {"kind": "hybrid", "embedder": "hashing"}}


def client_for(ws: Workspace) -> TestClient:
    client = TestClient(create_app(ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def two_runs(ws: Workspace) -> tuple[Any, int, int]:
    project = create_project(ws, "test", "en")
    build_corpus(ws, project)
    first = create_experiment(ws, project, "kw", pipelines=["keyword"], mode="retrieval")
    second = create_experiment(ws, project, "hy", pipelines=[HYBRID, "keyword"], mode="retrieval")
    run_experiment(ws, project, first.id)
    run_experiment(ws, project, second.id)
    return project, first.id, second.id


def judge_metric(url: str, name: str = "answerable") -> dict[str, Any]:
    """A yes/no judge metric whose generator is the fake OpenAI-compatible server."""
    generator = {"kind": "openai", "base_url": url, "model": "j"}
    return {"kind": "judge", "name": name, "values": ["Yes", "No"], "generator": generator}


def _sorted_by_size(rows: list[dict[str, Any]]) -> bool:
    sizes = [abs(r["diff"]) for r in rows if r["diff"] is not None]
    tail = [r["diff"] for r in rows[len(sizes) :]]
    return sizes == sorted(sizes, reverse=True) and all(d is None for d in tail)


def test_compare_two_experiments_page_and_json(any_ws: Workspace) -> None:
    project, first, second = two_runs(any_ws)
    client = client_for(any_ws)
    data = client.get(f"/api/projects/test/compare-experiments?a={first}&b=hy").json()
    assert data["a"]["name"] == "kw" and data["b"]["pipeline"] == "hybrid"
    assert data["b"]["pipelines"] == ["hybrid", "keyword"]
    a = get_experiment(any_ws, project, first).aggregates["keyword"]
    b = get_experiment(any_ws, project, second).aggregates["hybrid"]
    assert {r["metric"] for r in data["metrics"]} == set(a["overall"])
    for row in data["metrics"]:
        mean_a, mean_b = a["overall"][row["metric"]]["mean"], b["overall"][row["metric"]]["mean"]
        assert row["a"] == mean_a and row["b"] == mean_b
        assert row["diff"] == pytest.approx(mean_b - mean_a)
        assert row["a_n"] == a["overall"][row["metric"]]["count"]
    assert _sorted_by_size(data["metrics"])
    assert _sorted_by_size(data["by_query_type"])
    tasks = data["tasks"]
    assert tasks["metric"] == next(r["metric"] for r in data["metrics"] if r["diff"] is not None)
    assert tasks["shared"] == a["tasks"] and tasks["only_a"] == tasks["only_b"] == 0
    assert _sorted_by_size(tasks["rows"])
    assert data["judge_agreement"]["a"]["judge_metrics"] == []

    # the same pipeline on both sides: no difference anywhere
    same = client.get(
        "/api/projects/test/compare-experiments?a=kw&b=hy&pb=keyword&metric=R@10"
    ).json()
    assert all(r["diff"] in (0, None) for r in same["metrics"])
    assert same["tasks"]["metric"] == "R@10" and same["tasks"]["differing"] == 0

    page = client.get(f"/projects/test/compare-experiments?a={first}&b={second}")
    assert page.status_code == 200
    assert 'id="compare-metrics"' in page.text and 'id="compare-tasks"' in page.text
    shown = [r["metric"] for r in data["metrics"]]
    positions = [page.text.index(f'<th scope="row">{m}</th>') for m in shown]
    assert positions == sorted(positions)  # the page lists them in the JSON's order
    listing = client.get("/projects/test/experiments")
    assert 'id="compare-link"' in listing.text and "/compare-experiments?a=" in listing.text
    assert "/compare-experiments?a=" in client.get(f"/projects/test/experiments/{first}").text

    wrong = client.get("/api/projects/test/compare-experiments?a=kw&b=hy&pb=dense")
    assert wrong.status_code == 422 and "its pipelines: hybrid, keyword" in wrong.text
    unknown = client.get("/api/projects/test/compare-experiments?a=kw&b=hy&metric=token_f1")
    assert unknown.status_code == 422 and "not measured by both" in unknown.text
    missing = client.get("/api/projects/test/compare-experiments?a=kw&b=nope")
    assert missing.status_code == 404


def test_compare_gives_a_paired_test_per_metric(ws: Workspace) -> None:
    project, first, second = two_runs(ws)
    client = client_for(ws)
    data = client.get(f"/api/projects/test/compare-experiments?a={first}&b={second}").json()
    assert data["significance"] == {
        "alpha": 0.05,
        "rounds": 10_000,
        "seed": 0,
        "decided_by": "p_randomisation",
    }
    a = get_experiment(ws, project, first).aggregates["keyword"]["overall"]
    for row in data["metrics"]:
        test = row["test"]
        assert test["n"] == a[row["metric"]]["count"]  # every scored task is paired here
        assert test["mean_difference"] == pytest.approx(row["diff"])
        assert not test["significant"]  # 4 or 5 tasks cannot make a difference sure
    differing = sum(1 for r in data["metrics"] if r["diff"])
    page = client.get(f"/projects/test/compare-experiments?a={first}&b={second}").text
    assert 'id="significance-help"' in page and "paired randomisation test" in page
    assert page.count('class="tag sig-no"') == differing
    client.cookies.set("assay_lang", "de")
    german = client.get(f"/projects/test/compare-experiments?a={first}&b={second}").text
    assert "nicht signifikant" in german and "p ≥ 0,05" in german


def test_counts_agree_and_unanswerable_tasks_are_explained(any_ws: Workspace) -> None:
    project, first, _ = two_runs(any_ws)
    client = client_for(any_ws)
    experiment = get_experiment(any_ws, project, first)
    summary = experiment.aggregates["keyword"]
    recall = summary["overall"]["retrieval_recall"]
    unanswerable = 1  # the corpus's question about lunch on the moon
    assert summary["tasks"] == experiment.task_count
    assert recall["count"] + recall["skipped"] == summary["tasks"]
    assert recall["skipped"] == unanswerable
    page = client.get(f"/projects/test/experiments/{first}").text
    # the mean's n is the plots' n
    assert f"n={recall['count']}</span>" in page
    assert f"(n={recall['count']})" in page
    assert "skip the 1 unanswerable task(s)" in page
    assert page.count('class="tag" title="No relevant gold passage') == unanswerable


def test_the_form_lists_the_registry_metrics_with_descriptions(ws: Workspace) -> None:
    create_project(ws, "test", "de")
    client = client_for(ws)
    english = client.get("/projects/test/experiments").text
    assert english.count('x-model="picked"') == len(METRICS) + len(CATALOGUE)
    # the LLM metrics need a judge: the project's generator is the offline one
    assert english.count('x-model="picked" aria-describedby') == len(METRICS) + len(CATALOGUE)
    assert english.count("disabled>") >= len(CATALOGUE) and "cannot judge" in english
    assert "claims that its passages support (claims split, then checked)" in english
    assert 'value="nDCG"' in english and "Share of the gold passage groups" in english
    client.cookies.set("assay_lang", "de")
    german = client.get("/projects/test/experiments").text
    assert "Anteil der Gold-Passagengruppen" in german
    assert "LLM-Richter: die Antwort" in german and "Aufrufe je Aufgabe: einer je Passage" in german


@pytest.fixture
def judge_server() -> Iterator[FakeOpenAI]:
    # tasks in order: hotel, leave, passwords, laptops, lunch on the moon (unanswerable)
    replies = ["yes", "no", "yes", "yes", "no"]
    with FakeOpenAI([Reply(f"<verdict>{r}</verdict>") for r in replies]) as server:
        yield server


def test_judge_against_gold_labels(any_ws: Workspace, judge_server: FakeOpenAI) -> None:
    project = create_project(any_ws, "test", "en")
    build_corpus(any_ws, project)
    judge = judge_metric(judge_server.url)
    experiment = create_experiment(  # one at a time: the scripted verdicts follow the tasks
        any_ws,
        project,
        "judged",
        pipelines=["keyword"],
        mode="rag",
        metrics=["token_f1", judge],
        concurrency=1,
    )
    run_experiment(any_ws, project, experiment.id)
    client = client_for(any_ws)
    data = client.get(f"/api/projects/test/experiments/{experiment.id}/judge-agreement").json()
    assert data["judge_metrics"] == ["answerable"]
    report = next(r for r in data["reports"] if r["source"] == "gold:answerable")
    results = list(iter_results(any_ws, project, experiment.id))
    judged = [str(r.metrics["answerable"]).lower() for r in results]
    truth = ["no" if r.task_id.endswith("::3") else "yes" for r in results]
    expected = label_agreement(zip(range(len(judged)), judged, truth, strict=True))
    assert report["pairs"] == 5 and report["labels"] == ["no", "yes"]
    assert report["confusion"] == [list(row) for row in expected.confusion] == [[1, 0], [1, 3]]
    assert report["kappa"] == pytest.approx(expected.kappa)
    assert [(d["judge"], d["human"]) for d in report["disagreements"]] == [("no", "yes")]
    assert "paid leave" in report["disagreements"][0]["query"]
    assert any(r["source"] == "gold:relevant_context" for r in data["reports"])

    mapped = client.get(
        f"/api/projects/test/experiments/{experiment.id}/judge-agreement?map=yes=no&map=no=yes"
    ).json()
    flipped = next(r for r in mapped["reports"] if r["source"] == "gold:answerable")
    assert flipped["agreed"] == 1
    bad = client.get(f"/api/projects/test/experiments/{experiment.id}/judge-agreement?map=yes")
    assert bad.status_code == 422 and "HUMAN_LABEL=JUDGE_LABEL" in bad.text

    page = client.get(f"/projects/test/experiments/{experiment.id}").text
    assert 'id="judge-agreement"' in page and "answerable against gold: answerable" in page
    other = create_experiment(any_ws, project, "plain", pipelines=["keyword"], mode="retrieval")
    run_experiment(any_ws, project, other.id)
    both = client.get(
        f"/projects/test/compare-experiments?a={experiment.id}&b={other.id}&metric=token_f1"
    )
    assert both.status_code == 422  # token_f1 is not measured by "plain"
    both = client.get(f"/projects/test/compare-experiments?a={experiment.id}&b={other.id}")
    assert "This experiment has no LLM judge metric." in both.text
    twin = client.get(f"/api/projects/test/compare-experiments?a=judged&b={other.id}").json()
    side_a = twin["judge_agreement"]["a"]
    assert side_a["pipeline"] == "keyword" and side_a["reports"] == data["reports"]
    none = judge_agreement(any_ws, project, experiment.id, pipeline="hybrid")
    assert none["pipeline"] == "hybrid" and none["reports"] == []
    assert both.text.count('class="jh-report"') == len(data["reports"])


def test_judge_against_imported_human_scores(any_ws: Workspace, tmp_path: Path) -> None:
    from assay.formats import get_format
    from assay.transfer import import_bundle
    from tests.test_formats_inspectorraget import rich_file, write_file

    data = rich_file()
    values = copy.deepcopy(data["metrics"][1]["values"])
    data["metrics"].append(
        {"name": "faithful_llm", "author": "algorithm", "type": "categorical", "values": values}
    )
    judge = {("t1", "m1"): "4", ("t1", "m2"): "2", ("c7::2", "m1"): "3", ("c7::2", "m2"): "1"}
    people = {
        ("t1", "m1"): ["4", "4", "3"],
        ("t1", "m2"): ["3", "3"],
        ("c7::2", "m1"): ["3", "2"],  # a tie: no label
        ("c7::2", "m2"): ["1"],
    }
    for result in data["results"]:
        key = (result["task_id"], result["model_id"])
        result["scores"]["faithful_llm"] = {"system": {"value": judge[key]}}
        result["scores"]["faithfulness"] = {
            f"a{n}": {"value": v} for n, v in enumerate(people[key])
        }
    import_bundle(any_ws, "eval", get_format("inspectorraget").read(write_file(tmp_path, data)))
    project_ref = "eval"
    client = client_for(any_ws)
    experiment = client.get(f"/api/projects/{project_ref}/experiments").json()[0]
    found = client.get(
        f"/api/projects/{project_ref}/experiments/{experiment['id']}/judge-agreement"
    ).json()
    assert found["judge_metrics"] == ["faithful_llm"]
    report = next(r for r in found["reports"] if r["source"] == "imported:faithfulness")
    # pairs: t1/m1 4-4, t1/m2 2-3, c7/m2 1-1 (the tie is left out)
    assert report["pairs"] == 3 and report["agreed"] == 2
    assert report["labels"] == ["1", "2", "3", "4"]
    assert report["confusion"][2] == [0, 1, 0, 0]  # people said 3, the judge 2
    from assay.store.projects import get_project

    direct = judge_agreement(any_ws, get_project(any_ws, project_ref), experiment["id"])
    assert json.loads(json.dumps(direct)) == found


def test_judge_against_judged_reports(
    any_ws: Workspace, judge_server: FakeOpenAI, tmp_path: Path
) -> None:
    """Judged reports whose topic is a task (here by the conversation's source id) and whose
    run is named like the pipeline: their consensus rating, mapped onto the judge's values."""
    from assay.judging.judgments import Unit, save_judgment
    from assay.judging.run_import import import_judging_inputs
    from assay.people.actors import account_for

    project = create_project(any_ws, "test", "en")
    build_corpus(any_ws, project)
    topics = ["conv-7::1", "conv-7::2", "conv-7::3"]
    (tmp_path / "topics.jsonl").write_text(
        "".join(json.dumps({"request_id": t, "title": t}) + "\n" for t in topics)
    )
    runs = [
        {
            "metadata": {"team_id": "us", "run_id": "keyword", "topic_id": t},
            "responses": [{"text": "Some answer.", "citations": []}],
            "documents": {},
        }
        for t in topics
    ]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    import_judging_inputs(
        any_ws, project, topics=tmp_path / "topics.jsonl", runs=[tmp_path / "runs.jsonl"]
    )
    ada, bo = account_for(any_ws, "ada"), account_for(any_ws, "bo")
    # consensus: the lower median (Perfect + Bad gives Bad)
    ratings = {"conv-7::1": ["Perfect"], "conv-7::2": ["Perfect", "Bad"], "conv-7::3": ["So-so"]}
    for topic, given in ratings.items():
        for judge_id, rating in zip((ada, bo), given, strict=False):
            unit = Unit.report(topic, "keyword")
            save_judgment(any_ws, project, unit, judge_id=judge_id, version=0, rating=rating)
    judge = judge_metric(judge_server.url, "good")
    experiment = create_experiment(  # one at a time: the scripted verdicts follow the tasks
        any_ws, project, "judged", pipelines=["keyword"], mode="rag", metrics=[judge], concurrency=1
    )
    run_experiment(any_ws, project, experiment.id)
    mapping = {"Perfect": "yes", "Mostly Good": "yes", "So-so": "no", "Bad": "no"}
    found = judge_agreement(any_ws, project, experiment.id, mapping=mapping)
    report = next(r for r in found["reports"] if r["source"] == "judging:report")
    # judge said yes, yes, no for the conversation's three turns (replies 3 to 5)
    assert found["sources"]["judging:report"] == 3
    assert report["pairs"] == 3 and report["agreed"] == 2
    assert [
        (d["task_id"].endswith("::2"), d["judge"], d["human"]) for d in report["disagreements"]
    ] == [(True, "yes", "no")]
    unmapped = judge_agreement(any_ws, project, experiment.id)
    assert all(r["source"] != "judging:report" for r in unmapped["reports"])
