"""InspectorRAGet: version 2 export from an experiment, versions 1 and 2 read, checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.errors import InvalidInput
from assay.experiments import create_experiment, run_experiment
from assay.formats import get_format
from assay.formats.inspectorraget import (
    build,
    experiment_to_inspectorraget,
    migrate,
    read_results,
    validate,
)
from assay.models import Project
from assay.projects import create_project
from assay.settings import Settings
from assay.workspace import Workspace
from tests.experiments_corpus import build_corpus

V1: dict[str, Any] = {
    "name": "old",
    "models": [{"model_id": "m1", "name": "Model one", "owner": "lab"}],
    "metrics": [
        {
            "name": "faithfulness",
            "author": "human",
            "type": "categorical",
            "aggregator": "median",
            "values": [
                {"value": "1", "display_value": "No", "numeric_value": 1},
                {"value": "4", "display_value": "Yes", "numeric_value": 4},
            ],
        },
        {"name": "rougeL", "author": "algorithm", "type": "numerical"},
    ],
    "documents": [{"document_id": "d1", "text": "The ferry leaves at 22:40."}],
    "tasks": [
        {
            "task_id": "t1",
            "task_type": "rag",
            "input": [{"speaker": "user", "text": "When does the ferry leave?"}],
            "contexts": [{"document_id": "d1"}],
            "targets": [{"text": "At 22:40."}],
        },
        {"task_id": "t2", "task_type": "text_generation", "input": "Write a haiku."},
    ],
    "evaluations": [
        {
            "task_id": "t1",
            "model_id": "m1",
            "model_response": "22:40",
            "annotations": {
                "faithfulness": {"46542882": {"value": "4", "timestamp": 1.0}},
                "rougeL": {"system": {"value": 0.5}},
            },
        }
    ],
}


def test_v1_is_migrated_and_read(tmp_path: Path) -> None:
    migrated = migrate(V1)
    assert migrated["schema_version"] == 2 and "evaluations" not in migrated
    t1, t2 = migrated["tasks"]
    assert t1["task_type"] == "qa"  # rag with speaker/text input
    assert t1["input"] == [{"role": "user", "content": "When does the ferry leave?"}]
    assert t1["targets"] == [{"type": "text", "value": "At 22:40."}]
    assert t2["task_type"] == "generation"
    result = migrated["results"][0]
    assert result["output"] == [{"role": "assistant", "content": "22:40"}]
    assert validate(migrated) == []

    path = tmp_path / "old.json"
    path.write_text(json.dumps(V1))
    results = read_results(path)
    assert results.scores == {"m1": {"t1": {"faithfulness": "4", "rougeL": 0.5}}}
    assert results.answers == {"m1": {"t1": "22:40"}}
    bundle = get_format("inspectorraget").read(path)
    items = list(bundle.items)
    assert [i.id for i in items] == ["t1", "t2"]
    turn = items[0].turns[0]
    assert (turn.query, turn.answer) == ("When does the ferry leave?", "At 22:40.")
    assert [e.text for e in turn.evidence] == ["The ferry leaves at 22:40."]


def test_checks_name_the_record(tmp_path: Path) -> None:
    bad = migrate(V1)
    bad["models"][0].pop("owner")
    bad["metrics"][0]["values"][1].pop("numeric_value")
    bad["metrics"][1]["aggregator"] = "majority"
    bad["metrics"][1]["author"] = "robot"
    bad["tasks"][0]["task_type"] = "chitchat"
    problems = validate(bad)
    assert "models[1]: owner is required" in problems
    assert "metrics[1] (faithfulness): values[2] needs a numeric numeric_value" in problems
    assert "metrics[2] (rougeL): a numerical metric cannot use the majority aggregator" in problems
    assert any(p.startswith("metrics[2] (rougeL): author must be one of") for p in problems)
    assert any(p.startswith("tasks[1] (t1): task_type must be one of") for p in problems)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(InvalidInput, match="models\\[1\\]: owner is required"):
        read_results(path)
    path.write_text(json.dumps({"schema_version": 7}))
    with pytest.raises(InvalidInput, match="schema_version 7"):
        read_results(path)
    path.write_text("{not json")
    with pytest.raises(InvalidInput, match="malformed JSON at line 1"):
        read_results(path)


def test_experiment_export_round_trips(ws: Workspace, project: Project, tmp_path: Path) -> None:
    build_corpus(ws, project)
    experiment = create_experiment(
        ws,
        project,
        "e",
        pipelines=["keyword", "dense"],
        mode="rag",
        metrics=["nDCG@10", "token_f1"],
    )
    run_experiment(ws, project, experiment.id)
    data = experiment_to_inspectorraget(ws, project, "e")
    assert validate(data) == []
    assert data["schema_version"] == 2
    assert [m["model_id"] for m in data["models"]] == ["keyword", "dense"]
    assert {m["name"] for m in data["metrics"]} >= {"nDCG@10", "token_f1"}
    assert len(data["tasks"]) == experiment.task_count
    assert len(data["results"]) == 2 * experiment.task_count
    task = data["tasks"][0]
    assert task["task_type"] == "rag" and task["input"][-1]["role"] == "user"
    documents = {d["document_id"] for d in data["documents"]}
    for result in data["results"]:
        assert {c["document_id"] for c in result["contexts"]} <= documents
        score = result["scores"].get("nDCG@10")  # left out where the metric skipped the task
        assert score is None or isinstance(score["system"]["value"], float)
    assert sum("nDCG@10" in r["scores"] for r in data["results"]) >= experiment.task_count
    for context in task["contexts"]:
        assert context["document_id"] in documents

    path = tmp_path / "e.json"
    path.write_text(json.dumps(data))
    back = read_results(path)
    assert set(back.scores) == {"keyword", "dense"}
    first = next(r for r in data["results"] if "nDCG@10" in r["scores"])
    assert (
        back.scores[first["model_id"]][first["task_id"]]["nDCG@10"]
        == (first["scores"]["nDCG@10"]["system"]["value"])
    )


def test_cli_export(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    with Workspace.open(Settings(home=home)) as ws:
        project = create_project(ws, "handbook", "en")
        build_corpus(ws, project)
        experiment = create_experiment(ws, project, "e", pipelines=["keyword"])
        run_experiment(ws, project, experiment.id)
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        make_app(),
        [
            "--home",
            str(home),
            "experiments",
            "export-inspectorraget",
            "e",
            str(out),
            "--project",
            "handbook",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "1 model(s)" in result.output
    assert validate(json.loads(out.read_text())) == []


def test_judge_metrics_become_categorical() -> None:
    judge = {"kind": "judge", "name": "faithful", "values": ["yes", "partly", "no"]}
    task = {
        "task_id": "t",
        "query_type": "fact_single",
        "messages": [],
        "gold": [],
        "references": ["x"],
    }
    result = {
        "task_id": "t",
        "pipeline": "p",
        "answer": "x",
        "retrieved": [],
        "metrics": {"faithful": "partly", "f1": 1.0, "gone": None},
        "error": None,
    }
    data = build("n", [{"name": "p"}], [judge, "f1"], [task], [result], {})
    faithful, f1 = data["metrics"]
    assert faithful["type"] == "categorical"
    assert [v["numeric_value"] for v in faithful["values"]] == [0, 1, 2]
    assert f1["type"] == "numerical" and f1["aggregator"] == "average"
    assert data["results"][0]["scores"] == {
        "faithful": {"system": {"value": "partly"}},
        "f1": {"system": {"value": 1.0}},
    }
    assert validate(data) == []
