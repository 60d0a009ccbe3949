"""Experiment pages and their JSON API: create and run in the background, progress as
server-sent events, cancel and resume, compare, drill-down, downloads."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.experiments import create_experiment, get_experiment, iter_results, run_experiment
from assay.experiments.store import experiment_tasks_of
from assay.experiments.tasks import build_tasks
from assay.jobs import EXPERIMENT, Jobs
from assay.records import Project
from assay.store.workspace import Workspace
from assay.web import create_app
from assay.web.experiment_task import word_diff
from assay.web.experiments_view import histogram
from tests.experiments_corpus import Corpus, build_corpus

HYBRID = {"name": "hybrid", "retriever": {"kind": "hybrid", "embedder": "hashing"}}
PAYLOAD = "<img src=x onerror=alert(1)>"


@pytest.fixture
def corpus(ws: Workspace, project: Project) -> Corpus:
    return build_corpus(ws, project)


@pytest.fixture
def client(ws: Workspace) -> TestClient:
    client = TestClient(create_app(ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def wait_for_run(client: TestClient, experiment_id: int) -> None:
    registry = client.app.state.jobs  # type: ignore[attr-defined]
    assert isinstance(registry, Jobs)
    assert registry.wait(EXPERIMENT, {"experiment": experiment_id}, timeout=60)


def events(client: TestClient, url: str) -> list[tuple[str, dict[str, Any]]]:
    """The events of a finished stream, as (event name, data)."""
    seen: list[tuple[str, dict[str, Any]]] = []
    name = ""
    with client.stream("GET", url) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                seen.append((name, json.loads(line[6:])))
    return seen


def test_create_run_watch_and_compare(client: TestClient, corpus: Corpus) -> None:
    created = client.post(
        "/api/projects/test/experiments",
        json={"name": "kw-vs-hybrid", "mode": "rag", "pipelines": ["keyword", HYBRID]},
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert [p["name"] for p in body["pipelines"]] == ["keyword", "hybrid"]
    assert body["progress"]["total"] == 2 * body["task_count"]

    stream = events(client, f"/api/projects/test/experiments/{body['id']}/events")
    names = [name for name, _ in stream]
    assert names[-1] == "end" and set(names[:-1]) == {"progress"}
    final = stream[-1][1]
    assert final["status"] == "done" and final["done"] == final["total"] and final["percent"] == 100
    dones = [data["done"] for _, data in stream]
    assert dones == sorted(dones)

    shown = client.get("/api/projects/test/experiments/kw-vs-hybrid").json()
    assert [(c["experiment"], c["pipeline"]) for c in shown["columns"]] == [
        ("kw-vs-hybrid", "keyword"),
        ("kw-vs-hybrid", "hybrid"),
    ]
    overall = shown["columns"][0]["summary"]["overall"]
    assert set(overall) == {"retrieval_recall", "retrieval_ndcg", "nDCG@10", "token_f1", "rouge_l"}

    page = client.get(f"/projects/test/experiments/{body['id']}")
    assert page.status_code == 200
    assert 'id="aggregate-table"' in page.text and "<svg" in page.text
    assert page.text.count('class="exp-plot"') >= 10  # 5 histograms × 2 pipelines, plus bars
    listing = client.get("/projects/test/experiments")
    assert "kw-vs-hybrid" in listing.text


def test_drill_down_marks_hits_and_diffs_the_answer(
    ws: Workspace, project: Project, client: TestClient, corpus: Corpus
) -> None:
    experiment = create_experiment(ws, project, "e", pipelines=["keyword"], mode="rag")
    run_experiment(ws, project, experiment.id)
    tasks = client.get("/api/projects/test/experiments/e/tasks?limit=2").json()
    assert tasks["total"] == experiment.task_count and len(tasks["tasks"]) == 2
    task_id = tasks["tasks"][0]["task_id"]
    data = client.get(f"/api/projects/test/experiments/e/tasks/{task_id}").json()
    assert data["task"]["query"] == tasks["tasks"][0]["query"]
    keyword = data["pipelines"][0]
    gold = set(data["gold_chunk_ids"])
    assert gold
    for hit in keyword["retrieved"]:
        assert hit["hit"] == (hit["chunk_id"] in gold)
        assert hit["text"]  # the passage text, read back from the document
    assert any(h["hit"] for h in keyword["retrieved"])
    assert {piece["op"] for piece in keyword["diff"]} <= {"equal", "insert", "delete"}
    page = client.get(f"/projects/test/experiments/e/tasks/{task_id}")
    assert page.status_code == 200 and 'class="hit"' in page.text
    missing = client.get("/api/projects/test/experiments/e/tasks/nope::1")
    assert missing.status_code == 404


def test_cancel_then_resume_keeps_results(
    ws: Workspace, project: Project, client: TestClient, corpus: Corpus
) -> None:
    created = client.post(
        "/api/projects/test/experiments",
        json={"name": "later", "pipelines": ["keyword", "dense"], "start": False},
    ).json()
    assert created["status"] == "pending" and created["progress"]["running"] is False
    cancelled = client.post("/api/projects/test/experiments/later/cancel").json()
    assert cancelled["status"] == "cancelled"

    # a partial run: stop after the first task
    calls = iter([False, True])
    partial = run_experiment(ws, project, created["id"], should_stop=lambda: next(calls, True))
    assert partial.status == "cancelled" and partial.done_count == 2
    first = {(r.pipeline, r.task_id): r.created_at for r in iter_results(ws, project, "later")}

    resumed = client.post("/api/projects/test/experiments/later/run")
    assert resumed.status_code == 202
    wait_for_run(client, created["id"])
    done = get_experiment(ws, project, "later")
    assert done.status == "done" and done.done_count == done.total
    after = {(r.pipeline, r.task_id): r.created_at for r in iter_results(ws, project, "later")}
    assert all(after[key] == stamp for key, stamp in first.items())  # kept, not re-run
    # the stream of a finished experiment ends at once
    stream = events(client, "/api/projects/test/experiments/later/events")
    assert [name for name, _ in stream] == ["progress", "end"]


def test_errors_are_clear(client: TestClient, corpus: Corpus) -> None:
    url = "/api/projects/test/experiments"
    bad = client.post(url, json={"name": "x", "pipelines": ["bm99"]})
    assert bad.status_code == 422 and "unknown pipeline preset 'bm99'" in bad.json()["detail"]
    none = client.post(url, json={"name": "x", "pipelines": ["keyword"], "statuses": ["rejected"]})
    assert none.status_code == 422 and "no tasks" in none.json()["detail"]
    assert client.post(url, json={"name": "x", "pipelines": ["keyword"], "start": False}).is_success
    again = client.post(url, json={"name": "x", "pipelines": ["keyword"]})
    assert again.status_code == 409
    assert client.get("/api/projects/test/experiments/nope").status_code == 404
    assert client.get("/projects/test/experiments/nope").status_code == 404
    assert client.delete(f"{url}/x").status_code == 204
    assert client.get(f"{url}/x").status_code == 404


def test_names_are_escaped_and_downloads(
    ws: Workspace, project: Project, client: TestClient, corpus: Corpus
) -> None:
    spec = {"name": PAYLOAD, "retriever": {"kind": "keyword"}}
    experiment = create_experiment(ws, project, "=cmd", pipelines=[spec], mode="retrieval")
    run_experiment(ws, project, experiment.id)
    page = client.get(f"/projects/test/experiments/{experiment.id}").text
    assert PAYLOAD not in page and "&lt;img src=x onerror=alert(1)&gt;" in page

    raw = client.get(f"/api/projects/test/experiments/{experiment.id}/results.csv")
    assert raw.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(raw.text)))
    assert len(rows) == experiment.task_count
    assert rows[0]["experiment"] == "'=cmd"  # no spreadsheet formula
    tasks = {t.task_id: t for t in experiment_tasks_of(ws, experiment.id)}
    assert all(row["query_id"] == tasks[row["task_id"]].query_id for row in rows)
    assert {row["query_id"] for row in rows} <= {t.query_id for t in build_tasks(ws, project)}
    assert float(rows[0]["nDCG@10"]) >= 0

    data = client.get(f"/api/projects/test/experiments/{experiment.id}/results.json").json()
    assert data["experiment"]["name"] == "=cmd"
    assert len(data["results"]) == experiment.task_count
    assert set(data["aggregates"]) == {PAYLOAD}


def test_histogram_and_word_diff() -> None:
    h = histogram([0.0, 0.5, 0.5, 1.0], bins=4)
    assert (h["lo"], h["hi"], h["counts"], h["peak"]) == (0.0, 1.0, [1, 0, 2, 1], 2)
    assert h["box"] == [0.0, 0.375, 0.5, 0.625, 1.0]
    wide = histogram([2.0, 4.0], bins=2)
    assert (wide["lo"], wide["hi"], wide["counts"]) == (2.0, 4.0, [1, 1])
    assert histogram([])["box"] is None
    assert word_diff("the ferry leaves at 22:40", "the night ferry leaves at 21:15") == [
        ("equal", "the"),
        ("delete", "night"),
        ("equal", "ferry leaves at"),
        ("delete", "21:15"),
        ("insert", "22:40"),
    ]


# --- run and answers files: uploads only ------------------------------------------------------

FILES = "/api/projects/test/experiment-files"
SECRET = "root:x:0:0:secret-line"


def test_paths_in_a_pipeline_are_refused_and_nothing_is_read(
    ws: Workspace, client: TestClient, corpus: Corpus
) -> None:
    """The attack of issue 9: a pipeline naming /etc/passwd or the workspace's own database
    once made the server open it and echo its first bad line."""
    database = str((ws.settings.home / "assay.db").resolve())
    for field in ("run_file", "answers_file"):
        for path in ("/etc/passwd", "/proc/self/environ", database, "assay.db"):
            pipeline = {"name": "files", "kind": "file", field: path}
            body = {"name": "attack", "pipelines": [pipeline, "keyword"]}
            refused = client.post("/api/projects/test/experiments", json=body)
            assert refused.status_code == 422, refused.text
            assert "files are not read from paths on the server" in refused.json()["detail"]
            assert "root:" not in refused.text and database not in refused.text
    assert client.get("/api/projects/test/experiments").json() == []


def test_upload_a_run_file_then_create_and_run(client: TestClient, corpus: Corpus) -> None:
    item = corpus.items[0]
    run = f"{item.id} Q0 leave.txt 1 2 t\n{item.id} Q0 {corpus.travel.id} 2 1 t\n"
    uploaded = client.post(
        FILES, data={"kind": "run"}, files={"file": ("../../etc/system-a.run", run.encode())}
    )
    assert uploaded.status_code == 201, uploaded.text
    ref = uploaded.json()
    assert ref["name"] == "system-a.run" and ref["kind"] == "run" and ref["queries"] == 1
    pipeline = {"name": "system-a", "kind": "file", "run_file": ref}
    body = {"name": "uploaded", "pipelines": [pipeline, "keyword"], "start": False}
    created = client.post("/api/projects/test/experiments", json=body)
    assert created.status_code == 422 and "extra" in created.text.lower()  # only sha256, name
    pipeline["run_file"] = {"sha256": ref["sha256"], "name": ref["name"]}
    created = client.post("/api/projects/test/experiments", json=body)
    assert created.status_code == 201, created.text
    assert created.json()["pipelines"][0]["run_file"] == pipeline["run_file"]
    started = client.post(f"/api/projects/test/experiments/{created.json()['id']}/run")
    assert started.status_code == 202
    wait_for_run(client, created.json()["id"])
    shown = client.get("/api/projects/test/experiments/uploaded").json()["experiment"]
    assert shown["status"] == "done", shown["message"]
    assert shown["aggregates"]["system-a"]["errors"] == 4  # one task is in the file


def test_a_bad_upload_is_refused_without_echoing_it(
    ws: Workspace, client: TestClient, corpus: Corpus
) -> None:
    answers = f'{{"task_id": "a", "answer": "x"}}\n{{"answer": "{SECRET}"}}\n'.encode()
    bad = client.post(FILES, data={"kind": "answers"}, files={"file": ("a.jsonl", answers)})
    assert bad.status_code == 422
    assert bad.json()["detail"] == "a.jsonl, line 2: needs a task_id (or query_id)"
    run = client.post(FILES, data={"kind": "run"}, files={"file": ("r.txt", SECRET.encode())})
    assert run.status_code == 422 and "r.txt, line 1" in run.text and "root" not in run.text
    kindless = client.post(FILES, files={"file": ("r.txt", b"q Q0 d 1 1 t\n")})
    assert kindless.status_code == 422 and "kinds: run, answers" in kindless.text
    big = b"q Q0 d 1 1 t\n" * (ws.settings.max_file_bytes // 10)
    too_large = client.post(FILES, data={"kind": "run"}, files={"file": ("big.txt", big)})
    assert too_large.status_code == 413 and "big.txt" in too_large.text


def test_an_imported_evaluation_is_compared_with_its_annotators(
    client: TestClient, ws: Workspace, tmp_path: Path
) -> None:
    from assay.formats import get_format
    from assay.transfer import import_bundle
    from tests.test_formats_inspectorraget import rich_file, write_file

    data = rich_file()
    import_bundle(ws, "eval", get_format("inspectorraget").read(write_file(tmp_path, data)))
    listed = client.get("/api/projects/eval/experiments").json()
    (summary,) = listed["experiments"] if isinstance(listed, dict) else listed
    page = client.get(f"/projects/eval/experiments/{summary['id']}")
    assert page.status_code == 200
    assert "m1" in page.text and "m2" in page.text and "faithfulness" in page.text
    assert "rougeL" in page.text and 'id="imported-note"' in page.text
    drill = client.get(f"/projects/eval/experiments/{summary['id']}/tasks/c7::2")
    assert drill.status_code == 200
    assert "46542882" in drill.text and "51100234" in drill.text
    assert "2024-10-10 14:09:43" in drill.text and "467 s" in drill.text
    body = client.get(f"/api/projects/eval/experiments/{summary['id']}/tasks/c7::2").json()
    m1 = next(p for p in body["pipelines"] if p["pipeline"] == "m1")
    assert {(a["metric"], a["annotator"], a["value"]) for a in m1["annotators"]} == {
        ("faithfulness", "46542882", "4"),
        ("faithfulness", "51100234", "3"),
    }
    assert m1["metrics"]["rougeL"] == 1.0
    refused = client.post(f"/api/projects/eval/experiments/{summary['id']}/run")
    assert refused.status_code == 422 and "nothing to run" in refused.text
    exported = client.get(f"/api/projects/eval/experiments/{summary['id']}/inspectorraget")
    assert exported.json() == data
