"""InspectorRAGet: version 2 export from an experiment, versions 1 and 2 read, checks."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.corpus.documents import iter_documents
from assay.errors import InvalidInput
from assay.experiments import (
    create_experiment,
    get_experiment,
    list_experiments,
    run_experiment,
    task_results,
)
from assay.formats import get_format
from assay.formats.inspectorraget_v1 import migrate, validate
from assay.formats.inspectorraget_write import as_json, build
from assay.gold.item_lists import iter_items
from assay.gold.items import delete_item, editable_copy, save_item
from assay.records import Project
from assay.store.projects import create_project, get_project, list_projects
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.transfer import export_bundle, import_bundle
from assay.transfer.experiment_file import experiment_to_inspectorraget
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
    # messages keep their shape, as InspectorRAGet's migration keeps them (its qa view
    # reads utterance.speaker and utterance.text)
    assert t1["input"] == [{"speaker": "user", "text": "When does the ferry leave?"}]
    assert t1["targets"] == [{"type": "text", "value": "At 22:40."}]
    assert t2["task_type"] == "generation"
    result = migrated["results"][0]
    assert result["output"] == [{"role": "assistant", "content": "22:40"}]
    assert validate(migrated) == []

    path = tmp_path / "old.json"
    path.write_text(json.dumps(V1))
    bundle = get_format("inspectorraget").read(path)
    (evaluation,) = bundle.evaluations
    (result,) = evaluation.results
    assert (result.task_id, result.model_id, result.answer) == ("t1", "m1", "22:40")
    faithfulness = result.scores["faithfulness"][0]
    assert (faithfulness.annotator, faithfulness.value, faithfulness.timestamp) == (
        "46542882",
        "4",
        1.0,
    )
    assert result.scores["rougeL"][0].annotator == "system"
    items = list(bundle.items)
    assert [i.id for i in items] == ["t1", "t2"]
    turn = items[0].turns[0]
    assert (turn.query, turn.answer) == ("When does the ferry leave?", "At 22:40.")
    (evidence,) = turn.evidence
    assert (evidence.doc_id, evidence.start, evidence.end) == ("d1", 0, 26)
    assert evidence.text == ""  # the whole passage: the stored document gives the text
    (document,) = bundle.documents
    assert (document.ref, document.text) == ("d1", "The ferry leaves at 22:40.")
    assert as_json(bundle) == migrate(V1)  # read as version 2, written as version 2


def test_checks_name_the_record(tmp_path: Path) -> None:
    bad = migrate(json.loads(json.dumps(V1)))  # migrate copies only the top level
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
    read = get_format("inspectorraget").read
    with pytest.raises(InvalidInput, match="models\\[1\\]: owner is required"):
        read(path)
    path.write_text(json.dumps({"schema_version": 7}))
    with pytest.raises(InvalidInput, match="schema_version 7"):
        read(path)
    path.write_text("{not json")
    with pytest.raises(InvalidInput, match="malformed JSON at line 1"):
        read(path)


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
    (back,) = get_format("inspectorraget").read(path).evaluations
    assert {m.model_id for m in back.models} == {"keyword", "dense"}
    first = next(r for r in data["results"] if "nDCG@10" in r["scores"])
    read_back = next(
        r for r in back.results if (r.model_id, r.task_id) == (first["model_id"], first["task_id"])
    )
    value = first["scores"]["nDCG@10"]["system"]["value"]
    assert read_back.scores["nDCG@10"][0].value == value


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


# ---------------------------------------------------------------- whole files in and out


def rich_file() -> dict[str, Any]:
    """Two models, an algorithmic and a human metric (two annotators with timestamps and
    durations), filters, titled documents, a single-turn and a multi-turn task."""
    faithfulness = {
        "46542882": {"value": "4", "timestamp": 1728569383.0, "duration": 467.0},
        "51100234": {"value": "3", "timestamp": 1728570001.5, "duration": 95.0},
    }
    return {
        "schema_version": 2,
        "name": "Ferry answers",
        "description": "two systems on the ferry handbook",
        "models": [
            {"model_id": "m1", "name": "Model one", "owner": "lab", "description": "small"},
            {"model_id": "m2", "name": "Model two", "owner": "lab", "base_model": "m1"},
        ],
        "metrics": [
            {
                "name": "rougeL",
                "display_name": "ROUGE-L",
                "author": "algorithm",
                "type": "numerical",
                "aggregator": "average",
                "range": [0, 1, 0.1],
            },
            {
                "name": "faithfulness",
                "display_name": "Faithfulness",
                "author": "human",
                "type": "categorical",
                "aggregator": "median",
                "values": [
                    {"value": str(n), "display_value": label, "numeric_value": n}
                    for n, label in enumerate(["No", "Mostly No", "Mostly Yes", "Yes"], start=1)
                ],
            },
        ],
        "filters": ["category"],
        "documents": [
            {
                "document_id": "d1",
                "text": "The night ferry leaves Kiel at 22:40 and reaches Oslo at 10:00.",
                "title": "Timetable",
                "url": "https://example.org/timetable",
            },
            {"document_id": "d2", "text": "Cabins must be left by 09:30.", "title": "Cabins"},
        ],
        "tasks": [
            {
                "task_id": "t1",
                "task_type": "qa",
                "input": [{"role": "user", "content": "When does the night ferry leave?"}],
                "contexts": [{"document_id": "d1"}],
                "targets": [{"type": "text", "value": "At 22:40."}],
                "category": "timetable",
            },
            {
                "task_id": "c7::2",
                "task_type": "rag",
                "input": [
                    {"role": "user", "content": "When do we arrive in Oslo?"},
                    {"role": "assistant", "content": "At 10:00."},
                    {"role": "user", "content": "And when must we leave the cabin?"},
                ],
                "contexts": [{"document_id": "d2"}, {"document_id": "d1"}],
                "targets": [
                    {"type": "text", "value": "By 09:30."},
                    {"type": "text", "value": "Half past nine."},
                ],
                "category": "cabins",
            },
        ],
        "results": [
            {
                "task_id": task,
                "model_id": model,
                "output": [{"role": "assistant", "content": f"{model} says {task}"}],
                "scores": {
                    "rougeL": {"system": {"value": score}},
                    "faithfulness": faithfulness,
                },
                **extra,
            }
            for task, model, score, extra in [
                ("t1", "m1", 0.5, {"comments": [{"author": "ann", "text": "fine"}]}),
                ("t1", "m2", 0.25, {"contexts": [{"document_id": "d1", "score": 0.9}]}),
                ("c7::2", "m1", 1.0, {}),
                ("c7::2", "m2", 0.0, {"metadata": {"latency": 3}}),
            ]
        ],
    }


def ragaphene_file() -> dict[str, Any]:
    """What RAGAPHENE's experiment mode writes: the version 1 shape, speaker/text messages,
    agent messages as targets, ``displayName``, ``model_response`` and ``annotations``."""
    return {
        "name": "ferry experiment",
        "created_at": "2024-10-10T12:00:00Z",
        "models": [{"model_id": "granite_3", "name": "Granite 3", "owner": "ragaphene"}],
        "metrics": [
            {
                "name": "f1",
                "displayName": "F1",
                "description": "token overlap",
                "author": "algorithm",
                "type": "numerical",
                "aggregator": "average",
                "range": [0, 1, 0.1],
            }
        ],
        "documents": [{"document_id": "p1", "text": "Pets travel in the car deck kennels."}],
        "tasks": [
            {
                "conversation_id": "5f0c",
                "task_id": "5f0c::1",
                "task_type": "rag",
                "turn": "1",
                "collection": "ferry",
                "input": [{"speaker": "user", "text": "Where do pets travel?"}],
                "contexts": [{"document_id": "p1"}],
                "targets": [{"speaker": "agent", "text": "In kennels on the car deck."}],
            },
            {  # no passage was voted relevant: RAGAPHENE's unanswerable task
                "conversation_id": "5f0c",
                "task_id": "5f0c::2",
                "task_type": "rag",
                "turn": "2",
                "collection": "ferry",
                "input": [
                    {"speaker": "user", "text": "Where do pets travel?"},
                    {"speaker": "agent", "text": "In kennels on the car deck."},
                    {"speaker": "user", "text": "Can my parrot stay in the cabin?"},
                ],
                "contexts": [],
                "targets": [{"speaker": "agent", "text": "The documents do not say."}],
            },
        ],
        "evaluations": [
            {
                "task_id": "5f0c::1",
                "model_id": "granite_3",
                "model_response": "On the car deck.",
                "contexts": [{"document_id": "p1", "score": 12.5, "query": "pets"}],
                "annotations": {"f1": {"system": {"value": 0.67, "duration": 0.01}}},
            }
        ],
    }


def write_file(tmp_path: Path, data: dict[str, Any], name: str = "in.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_reading_and_writing_a_file_gives_it_back(tmp_path: Path) -> None:
    spec = get_format("inspectorraget")
    rich = rich_file()
    assert as_json(spec.read(write_file(tmp_path, rich))) == rich
    ragaphene = ragaphene_file()
    assert as_json(spec.read(write_file(tmp_path, ragaphene))) == migrate(ragaphene)


@pytest.mark.parametrize("make", [rich_file, ragaphene_file, lambda: json.loads(json.dumps(V1))])
def test_import_keeps_everything_and_export_gives_the_file_back(
    make: Any, any_ws: Workspace, tmp_path: Path
) -> None:
    data = make()
    report = import_bundle(
        any_ws, "eval", get_format("inspectorraget").read(write_file(tmp_path, data))
    )
    project = get_project(any_ws, "eval")
    assert not [o for o in report.outcomes if o.status != "imported"], report.outcomes
    documents = {d.metadata["source_id"]: d for d in iter_documents(any_ws, project)}
    assert set(documents) == {d["document_id"] for d in data["documents"]}
    for entry in data["documents"]:
        if entry.get("title"):
            assert documents[entry["document_id"]].name == entry["title"] + ".txt"
    for item in iter_items(any_ws, project, statuses=None):
        for evidence in item.turns[-1].evidence:  # anchored in the imported documents
            assert evidence.anchor == "ok" and evidence.doc_id is not None
            stored = next(d for d in documents.values() if d.id == evidence.doc_id)
            assert stored.text[evidence.start : evidence.end] == evidence.text
    (experiment,) = list_experiments(any_ws, project)
    assert [p["kind"] for p in experiment.pipelines] == ["imported"] * len(data["models"])
    back = experiment_to_inspectorraget(any_ws, project, experiment.name)
    assert back == migrate(data)
    whole = tmp_path / "project.json"  # the project's export carries its evaluation too
    assert get_format("inspectorraget").write(export_bundle(any_ws, project), whole) == []
    assert json.loads(whole.read_text(encoding="utf-8")) == migrate(data)
    path = tmp_path / "out.json"
    result = CliRunner().invoke(
        make_app(),
        ["--home", str(any_ws.settings.home), "experiments", "export-inspectorraget",
         experiment.name, str(path), "--project", "eval"],
    )  # fmt: skip
    if any_ws.settings.database_url is None:  # the CLI opens the SQLite workspace itself
        assert result.exit_code == 0, result.output
        assert json.loads(path.read_text()) == migrate(data)


def test_annotators_are_kept_per_task(ws: Workspace, tmp_path: Path) -> None:
    import_bundle(ws, "eval", get_format("inspectorraget").read(write_file(tmp_path, rich_file())))
    project = get_project(ws, "eval")
    experiment = get_experiment(ws, project, "Ferry answers")
    assert experiment.status == "done" and experiment.task_count == 2
    overall = experiment.aggregates["m1"]["overall"]
    assert overall["rougeL"]["mean"] == 0.75
    assert overall["faithfulness"]["mean"] == 3.5  # two annotators, 4 and 3
    task, results = task_results(ws, project, experiment.id, "c7::2")
    assert task.turns[-1] == "And when must we leave the cabin?"
    scores = results["m2"].details["scores"]["faithfulness"]
    assert scores["46542882"] == {"value": "4", "timestamp": 1728569383.0, "duration": 467.0}
    assert results["m2"].answer == "m2 says c7::2"
    with pytest.raises(InvalidInput, match="imported from a file; nothing to run"):
        run_experiment(ws, project, experiment.id)


def bad(change: Any) -> dict[str, Any]:
    data = rich_file()
    change(data)
    return data


BAD = {
    "unknown model": (
        lambda d: d["results"][1].update(model_id="m9"),
        r"results\[2\] \(task 't1', model 'm9'\): model_id 'm9' is not among the models",
    ),
    "unknown task": (
        lambda d: d["results"][2].update(task_id="t9"),
        r"results\[3\] \(task 't9', model 'm1'\): task_id 't9' is not among the tasks",
    ),
    "model id too long": (
        lambda d: d["models"][1].update(model_id="m" * 201),
        r"models\[2\]: model_id is over 200 characters",
    ),
    "unknown document": (
        lambda d: d["tasks"][0]["contexts"].append({"document_id": "d9"}),
        r"tasks\[1\] \(t1\): contexts\[2\] names document 'd9', which the file lacks",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_records_are_named_and_nothing_is_stored(
    case: str, any_ws: Workspace, tmp_path: Path
) -> None:
    change, message = BAD[case]
    path = write_file(tmp_path, bad(change))
    with pytest.raises(InvalidInput, match=message):
        import_bundle(any_ws, "eval", get_format("inspectorraget").read(path))
    assert "eval" not in {p.name for p in list_projects(any_ws)}
    report = import_bundle(any_ws, "eval", get_format("inspectorraget").read(path), lenient=True)
    skipped = [o for o in report.outcomes if o.status == "skipped"]
    assert skipped and all(o.ref.startswith(("results[", "tasks[", "models[")) for o in skipped)
    project = get_project(any_ws, "eval")
    (experiment,) = list_experiments(any_ws, project)
    exported = experiment_to_inspectorraget(any_ws, project, experiment.id)
    assert len(exported["results"]) == 4 - len([o for o in skipped if "result" in o.ref])


DOUBTFUL = {
    "below the range": (
        lambda d: d["results"][0]["scores"]["rougeL"]["system"].update(value=-1.07),
        r"'rougeL' by 'system': value -1.07 is outside the range 0 to 1",
    ),
    "a hair past the bound": (
        lambda d: d["results"][1]["scores"]["rougeL"]["system"].update(value=1.0000002),
        r"value 1.0000002 is outside the range 0 to 1",
    ),
    "not a category": (
        lambda d: d["results"][3]["scores"]["faithfulness"]["51100234"].update(value="5"),
        r"'faithfulness' by '51100234': value '5' is not one of",
    ),
    "undeclared metric": (
        lambda d: d["results"][0]["scores"].update(recall={"system": {"value": 1}}),
        r"metric 'recall' is not among the metrics",
    ),
}


@pytest.mark.parametrize("case", sorted(DOUBTFUL))
def test_what_inspectorraget_loads_is_kept_and_warned_about(
    case: str, any_ws: Workspace, tmp_path: Path
) -> None:
    """A value outside a display range, outside the categories, or of an undeclared metric:
    InspectorRAGet loads the file, so the import keeps it, flags it, and writes it back."""
    change, message = DOUBTFUL[case]
    data = json.loads(json.dumps(rich_file()))  # its results share one dict of scores
    change(data)
    report = import_bundle(
        any_ws, "eval", get_format("inspectorraget").read(write_file(tmp_path, data))
    )
    flagged = [o for o in report.outcomes if o.status == "flagged"]
    assert len(flagged) == 1 and flagged[0].ref.startswith("results[")
    assert re.search(message, flagged[0].message) and "kept as read" in flagged[0].message
    assert not [o for o in report.outcomes if o.status == "skipped"]
    project = get_project(any_ws, "eval")
    assert experiment_to_inspectorraget(any_ws, project, "Ferry answers") == data


def test_edits_to_items_show_in_the_exported_file(any_ws: Workspace, tmp_path: Path) -> None:
    """The item wins over the file: an edited query and answer are written, a deleted item
    takes its task and results with it; everything else comes back as it was."""
    data = rich_file()
    import_bundle(any_ws, "eval", get_format("inspectorraget").read(write_file(tmp_path, data)))
    project = get_project(any_ws, "eval")
    items = {i.extra["source_id"]: i for i in iter_items(any_ws, project, statuses=None)}
    edited = editable_copy(items["c7::2"])
    edited.turns[0].query = "When must the cabin be empty?"
    edited.turns[0].answer = "09:30"
    edited.turns[0].alternatives = []
    save_item(any_ws, project, items["c7::2"].id, edited, items["c7::2"].version)
    delete_item(any_ws, project, items["t1"].id)
    back = experiment_to_inspectorraget(any_ws, project, "Ferry answers")
    (task,) = back["tasks"]
    assert task["input"][:2] == data["tasks"][1]["input"][:2]
    assert task["input"][2] == {"role": "user", "content": "When must the cabin be empty?"}
    assert task["targets"] == [{"type": "text", "value": "09:30"}]
    assert task["contexts"] == data["tasks"][1]["contexts"]
    assert back["results"] == data["results"][2:]
    assert back["documents"] == data["documents"] and back["metrics"] == data["metrics"]


def test_passages_come_back_as_the_file_had_them(ws: Workspace, tmp_path: Path) -> None:
    """A passage whose text the import normalises (line ends) is anchored in the stored
    text and written back from the stored file; a repeated title gets a new name."""
    data = rich_file()
    data["documents"][0]["text"] = "Dada ( / ˈdɑːdɑː / ) was\r\nan art movement . "
    data["documents"][1]["title"] = "Timetable"
    report = import_bundle(
        ws, "eval", get_format("inspectorraget").read(write_file(tmp_path, data))
    )
    noted = {o.ref: o.message for o in report.noted()}
    assert "normalised" in noted["d1"] and "Timetable-1.txt" in noted["d2"]
    assert not [o for o in report.outcomes if o.kind == "item" and o.status != "imported"]
    project = get_project(ws, "eval")
    item = next(i for i in iter_items(ws, project, statuses=None) if i.extra["source_id"] == "t1")
    (evidence,) = item.turns[0].evidence
    assert (
        evidence.anchor == "ok" and evidence.text == "Dada ( / ˈdɑːdɑː / ) was\nan art movement . "
    )
    assert experiment_to_inspectorraget(ws, project, "Ferry answers") == data


def test_real_files_come_back_as_they_were(shared_fixtures: Path, ws: Workspace) -> None:
    """Every InspectorRAGet file among the shared fixtures (IBM's sample, MTRAG's human
    evaluations) imports with its contexts anchored and exports as it came (as version 2)."""
    folder = shared_fixtures / "inspectorraget"
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        pytest.skip("no InspectorRAGet file among the shared fixtures (inspectorraget/*.json)")
    for number, path in enumerate(files):
        data = json.loads(path.read_text(encoding="utf-8"))
        report = import_bundle(ws, f"real {number}", get_format("inspectorraget").read(path))
        assert not [o for o in report.outcomes if o.kind == "item" and o.status != "imported"]
        project = get_project(ws, f"real {number}")
        (experiment,) = list_experiments(ws, project)
        assert experiment_to_inspectorraget(ws, project, experiment.id) == migrate(data), path.name


def test_gold_only_export_carries_the_gold_passages(ws: Workspace, tmp_path: Path) -> None:
    """Items made in Assay (no imported evaluation): each turn a task whose contexts are its
    relevant passages, each passage a document with its text, so InspectorRAGet shows them;
    a conversation's earlier turns come before the query; what is left out is noted."""
    from tests.test_transfer import rich_project

    project = create_project(ws, "gold", "en")
    rich_project(ws, project)
    out = tmp_path / "gold.json"
    notes = get_format("inspectorraget").write(export_bundle(ws, project, statuses=None), out)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert validate(data) == [] and not [n for n in notes if "not valid" in n]
    assert any("2 distracting or irrelevant passage(s) left out" in n for n in notes)
    documents = {d["document_id"]: d for d in data["documents"]}
    hotel = next(t for t in data["tasks"] if t["input"][-1]["content"].startswith("How much"))
    texts = [documents[c["document_id"]]["text"] for c in hotel["contexts"]]
    assert texts == [
        "Hotels are refunded up to 140 euros per night.",
        "30 days of paid leave",
        "Taxis only at night.",
    ]
    assert {documents[c["document_id"]]["title"] for c in hotel["contexts"]} == {
        "policy.txt",
        "leave.md",
    }
    assert hotel["targets"] == [
        {"type": "text", "value": "Up to 140 euros."},
        {"type": "text", "value": "140 euros"},
    ]
    second = next(t for t in data["tasks"] if t["task_id"].endswith("::2"))
    assert second["input"] == [
        {"role": "user", "content": "Leave?"},
        {"role": "assistant", "content": "30 days."},
        {"role": "user", "content": "And trains?"},
    ]
    assert second["contexts"] == []
    assert len(data["tasks"]) == 4  # one per turn
    # read back, the passages are the evidence of the tasks
    back = get_format("inspectorraget").read(out)
    item = next(i for i in back.items if i.id == hotel["task_id"])
    wanted = [c["document_id"] for c in hotel["contexts"]]
    assert [e.doc_id for e in item.turns[0].evidence] == wanted
