"""``assay experiments compare`` and ``assay experiments judge-agreement`` in-process."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from assay.cli import make_app
from assay.experiments import create_experiment, run_experiment
from assay.experiments.compare import compare_experiments
from assay.store.projects import create_project, get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from tests.experiments_corpus import build_corpus
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.test_cli_remote import Team, team  # noqa: F401 - the team server fixture
from tests.test_web_experiment_compare import judge_metric


def invoke(home: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(make_app(), ["--home", str(home), *args])


def test_compare_and_judge_agreement(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    replies = [Reply(f"<verdict>{v}</verdict>") for v in ("yes", "no", "yes", "yes", "no")]
    with FakeOpenAI(replies) as fake, Workspace.open(Settings(home=home)) as ws:
        project = create_project(ws, "handbook", "en")
        build_corpus(ws, project)
        judge = judge_metric(fake.url)
        hybrid = {"name": "hybrid", "retriever": {"kind": "hybrid", "embedder": "hashing"}}
        for name, pipeline in (("kw", "keyword"), ("hy", hybrid)):
            made = create_experiment(
                ws,
                project,
                name,
                pipelines=[pipeline],
                mode="rag",
                metrics=["R@10", judge],
                concurrency=1,  # the scripted replies go to the tasks in their order
            )
            run_experiment(ws, project, made.id)
            fake.reset(replies)
        expected = compare_experiments(ws, project, "kw", "hy")

    shown = invoke(home, "experiments", "compare", "kw", "hy", "--project", "handbook", "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output) == json.loads(json.dumps(expected))
    table = invoke(home, "experiments", "compare", "kw", "hy", "--project", "handbook")
    assert table.exit_code == 0 and "R@10" in table.output and "B - A" in table.output
    row = next(r for r in expected["metrics"] if r["metric"] == "R@10")
    test = row["test"]  # the 4 answerable tasks, both scored: no difference is sure
    assert test["n"] == row["a_n"] == 4 and not test["significant"]
    assert "not significant" in table.output and "randomisation test" in table.output

    agreement = invoke(
        home, "experiments", "judge-agreement", "kw", "--project", "handbook", "--json"
    )
    assert agreement.exit_code == 0, agreement.output
    report = next(
        r for r in json.loads(agreement.output)["reports"] if r["source"] == "gold:answerable"
    )
    assert report["confusion"] == [[1, 0], [1, 3]]
    text = invoke(home, "experiments", "judge-agreement", "kw", "--project", "handbook")
    assert "answerable against gold:answerable: 5 tasks" in text.output
    bad = invoke(
        home, "experiments", "judge-agreement", "kw", "--project", "handbook", "--map", "x"
    )
    assert bad.exit_code != 0 and "HUMAN_LABEL=JUDGE_LABEL" in bad.output


def test_compare_and_judge_agreement_against_a_server(team: Team) -> None:  # noqa: F811
    """With ASSAY_URL the commands read the server's JSON twins (SQLite and PostgreSQL)."""
    ws = team.ws
    project = get_project(ws, "handbook")
    build_corpus(ws, project)
    hybrid = {"name": "hybrid", "retriever": {"kind": "hybrid", "embedder": "hashing"}}
    for name, pipeline in (("kw", "keyword"), ("hy", hybrid)):
        made = create_experiment(ws, project, name, pipelines=[pipeline], mode="retrieval")
        run_experiment(ws, project, made.id)
    expected = compare_experiments(ws, project, "kw", "hy", metric="R@10")
    shown = team.assay(
        "experiments", "compare", "kw", "hy", "--metric", "R@10", "--project", "handbook", "--json"
    )
    assert shown.code == 0, shown.err
    data = json.loads(shown.out)
    assert {k: data[k] for k in expected} == json.loads(json.dumps(expected))
    assert set(data["judge_agreement"]) == {"a", "b"}
    agreement = team.assay("experiments", "judge-agreement", "kw", "--project", "handbook")
    assert agreement.code == 0, agreement.err
    assert "has no LLM judge metric" in agreement.out
    missing = team.assay("experiments", "compare", "kw", "nope", "--project", "handbook")
    assert missing.code != 0 and "no experiment 'nope'" in missing.err
