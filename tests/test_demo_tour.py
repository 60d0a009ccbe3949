"""The inputs the README's CLI tour names: the shipped samples fit together, and the demo's
keyword-search run (``assay demo --sample-run``) passes the tour's CI gate."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from typer.testing import CliRunner

from assay.cli import make_app
from assay.demo import open_demo
from assay.demo.tour import RUN_DEPTH, write_keyword_run
from assay.experiments.runfiles import read_qrels, read_run
from assay.experiments.tasks import build_tasks
from assay.store.workspace import Workspace

SAMPLES = Path(str(resources.files("assay.demo") / "samples"))


def test_the_samples_name_each_other() -> None:
    beir = SAMPLES / "mtrag-cloud"
    corpus = {json.loads(line)["_id"] for line in (beir / "corpus.jsonl").read_text().splitlines()}
    queries = {
        json.loads(line)["_id"] for line in (beir / "queries.jsonl").read_text().splitlines()
    }
    qrels = read_qrels(SAMPLES / "qrels.tsv")
    assert qrels == read_qrels(beir / "qrels" / "test.tsv")  # qrels.tsv: the folder's qrels
    run = read_run(SAMPLES / "run.trec")
    assert set(qrels) == set(run) == queries
    assert {doc for docs in [*qrels.values(), *run.values()] for doc in docs} <= corpus
    for name in ("notes.txt", "minutes.txt", "memo.pdf"):
        assert (SAMPLES / name).stat().st_size > 0, name
    assert (SAMPLES / "memo.pdf").read_bytes().startswith(b"%PDF-")


def test_the_keyword_run_ranks_every_demo_task(ws: Workspace, tmp_path: Path) -> None:
    project, _ = open_demo(ws, with_items=True)
    path = tmp_path / "my-system.trec"
    assert write_keyword_run(ws, project, path) == len(build_tasks(ws, project))
    run = read_run(path)
    assert set(run) == {task.task_id for task in build_tasks(ws, project)}
    assert all(0 < len(ranked) <= RUN_DEPTH for ranked in run.values())
    gate = CliRunner().invoke(
        make_app(),
        ["--home", str(ws.settings.home), "eval", "--project", "demo", "--run", str(path),
         "--metric", "nDCG@10", "--fail-under", "nDCG@10=0.6", "--json"],
    )  # fmt: skip
    assert gate.exit_code == 0, gate.output
    assert json.loads(gate.output)["metrics"]["nDCG@10"] >= 0.6
