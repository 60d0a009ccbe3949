"""docs/judging.md's import example, run as written on a fresh workspace: `assay judge
import-runs -p NAME` creates the project the way `assay ingest` and `assay import` do, and a
refused import leaves no empty project behind."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from tests.conftest import SHARED

ROOT = Path(__file__).resolve().parents[1]
KIDDIE = SHARED / "fixtures" / "autojudge" / "kiddie"


def _docs_commands() -> list[list[str]]:
    """The `assay judge import-runs` lines of docs/judging.md's import example."""
    text = (ROOT / "docs" / "judging.md").read_text(encoding="utf-8")
    block = text.split("### Import topics and runs", 1)[1].split("```", 2)[1]
    return [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("assay ")]


def test_the_docs_import_example_works_on_a_fresh_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not KIDDIE.is_dir():
        pytest.skip("../shared/fixtures/autojudge/kiddie is absent (a plain clone)")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "topics.jsonl").symlink_to(KIDDIE / "topics" / "kiddie-topics.jsonl")
    (tmp_path / "runs").symlink_to(KIDDIE / "runs")
    runner = CliRunner()
    home = ["--home", str(tmp_path / "ws")]
    assert runner.invoke(make_app(), [*home, "init"]).exit_code == 0
    first, *_ = _docs_commands()
    assert first == ["judge", "import-runs", "--topics", "topics.jsonl", "runs/", "-p", "kiddie"]
    done = runner.invoke(make_app(), [*home, *first])
    assert done.exit_code == 0, done.output
    assert "topics: 5 added" in done.output
    listed = runner.invoke(make_app(), [*home, "projects", "--json"])
    assert [p["name"] for p in json.loads(listed.output)] == ["kiddie"]
    # --json stays JSON when the project is created by the same call
    again = runner.invoke(make_app(), [*home, *first[:-1], "fresh", "--language", "de", "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["reports_added"] == 20
    shown = runner.invoke(make_app(), [*home, "projects", "--json"])
    languages = {p["name"]: p["language"] for p in json.loads(shown.output)}
    assert languages == {"kiddie": "en", "fresh": "de"}


def test_a_refused_import_leaves_no_new_project(tmp_path: Path) -> None:
    bad = tmp_path / "topics.jsonl"
    bad.write_text('{"request_id": "t1"}\n', encoding="utf-8")  # no title: refused
    runner = CliRunner()
    home = ["--home", str(tmp_path / "ws")]
    assert runner.invoke(make_app(), [*home, "init"]).exit_code == 0
    refused = runner.invoke(make_app(), [*home, "judge", "import-runs", "-t", str(bad), "-p", "x"])
    assert refused.exit_code != 0
    assert "title" in refused.output
    listed = runner.invoke(make_app(), [*home, "projects", "--json"])
    assert json.loads(listed.output) == []
