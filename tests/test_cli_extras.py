"""Without an optional extra: what still works, and the hint that names the extra correctly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from assay.store.projects import create_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from tests.experiments_corpus import build_corpus

# A child interpreter where onnxruntime cannot be imported (a None entry in sys.modules makes
# the import fail), as on an install without the embeddings extra.
WITHOUT_EMBEDDINGS = (
    "import sys; sys.modules['onnxruntime'] = None\nfrom assay.cli import main\nmain()"
)
HINT = "pip install -e '.[embeddings]' in the Assay folder"


def test_keyword_runs_and_hybrid_fails_per_task_with_the_hint(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    with Workspace.open(Settings(home=home)) as ws:
        build_corpus(ws, create_project(ws, "handbook", "en"))
    run = [sys.executable, "-c", WITHOUT_EMBEDDINGS, "--home", str(home)]
    created = subprocess.run(
        [*run, "experiments", "create", "kvh", "--pipeline", "keyword", "--pipeline", "hybrid"],
        capture_output=True,
        text=True,
    )
    assert created.returncode == 0, created.stderr

    done = subprocess.run(
        [*run, "experiments", "run", "kvh", "--json"], capture_output=True, text=True
    )
    # a pipeline that failed on every task fails the run, naming it; the results are kept
    assert done.returncode == 1, done.stderr
    assert "pipeline(s) hybrid of 'kvh' failed on every task (5 of 5)" in done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "done"
    assert result["done_count"] == result["error_count"] == 5  # 5 keyword results, 5 failures
    keyword, hybrid = result["aggregates"]["keyword"], result["aggregates"]["hybrid"]
    assert keyword["errors"] == 0 and keyword["overall"]["R@10"]["mean"] is not None
    assert hybrid["errors"] == 5
    assert "pipeline 'hybrid' cannot run" in result["message"] and HINT in result["message"]

    shown = subprocess.run([*run, "experiments", "show", "kvh"], capture_output=True, text=True)
    assert HINT in shown.stdout  # rich markup does not eat "[embeddings]"


def test_an_error_that_names_an_extra_keeps_its_brackets(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    with Workspace.open(Settings(home=home)) as ws:
        build_corpus(ws, create_project(ws, "handbook", "en"))
    run = [sys.executable, "-c", WITHOUT_EMBEDDINGS, "--home", str(home)]
    dense = json.dumps({"name": "dense", "retriever": {"kind": "dense"}})
    subprocess.run([*run, "experiments", "create", "d", "--pipeline", dense], check=True)
    settings = subprocess.run(
        [*run, "projects", "settings", "--retriever", "dense"], capture_output=True, text=True
    )
    assert settings.returncode == 0, settings.stderr
    chat = subprocess.run([*run, "chat"], input="hotel costs\n", capture_output=True, text=True)
    assert HINT in chat.stdout + chat.stderr
