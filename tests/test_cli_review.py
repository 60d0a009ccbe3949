"""``assay review``: accept, reject with a reason, an item's verdicts and the review queue,
from the terminal, on a real workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from assay.cli import make_app
from assay.gold.items import create_item, get_item, set_status
from assay.records import Item, Turn
from assay.store.projects import create_project, get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace


def invoke(home: Path, *args: str) -> Result:
    return CliRunner().invoke(make_app(), ["--home", str(home), *args])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "ws"
    assert invoke(home, "init").exit_code == 0
    return home


def make_items(home: Path) -> list[str]:
    """Two submitted items and a draft, in project p."""
    ws = Workspace.open(Settings(home=home))
    try:
        project = create_project(ws, "p")
        ids = []
        for query, status in (("First?", "submitted"), ("Second?", "submitted"), ("Draft?", "")):
            item = create_item(ws, project, Item(turns=[Turn(query=query, answer="A.")]))
            if status:
                item = set_status(ws, project, item.id, status, item.version)
            ids.append(item.id)
        return ids
    finally:
        ws.close()


def stored_status(home: Path, item_id: str) -> str:
    ws = Workspace.open(Settings(home=home))
    try:
        return get_item(ws, get_project(ws, "p"), item_id).status
    finally:
        ws.close()


def test_accept_reject_history_and_queue(home: Path) -> None:
    first, second, draft = make_items(home)

    queue = invoke(home, "review", "p", "--queue")
    assert queue.exit_code == 0, queue.output
    assert "0 of 2 reviewed, 2 waiting" in queue.output
    assert queue.output.index("First?") < queue.output.index("Second?")

    accepted = invoke(home, "review", "p", first, "--accept")
    assert accepted.exit_code == 0, accepted.output
    assert f"Item {first}: accepted by Local user" in accepted.output
    assert stored_status(home, first) == "accepted"

    empty = invoke(home, "review", "p", second, "--reject", "  ")
    assert empty.exit_code == 1
    assert "reason: a reject needs a reason" in empty.output
    rejected = invoke(home, "review", "p", second, "--reject", "Cite the rule.", "--json")
    assert rejected.exit_code == 0, rejected.output
    assert json.loads(rejected.output)["verdict"] == "reject"
    assert stored_status(home, second) == "rejected"

    history = invoke(home, "review", "p", second)
    assert history.exit_code == 0
    assert "(rejected): 1 review(s)" in history.output
    assert "rejected by Local user" in history.output and ": Cite the rule." in history.output

    refused = invoke(home, "review", "p", draft, "--accept")
    assert refused.exit_code == 1
    assert "it is a draft: its author submits it first" in refused.output
    again = invoke(home, "review", "p", first, "--accept")
    assert again.exit_code == 1 and "it was accepted already" in again.output

    listed = json.loads(invoke(home, "review", "p", "--queue", "--json").output)
    assert listed["progress"] == {"reviewed": 2, "total": 2, "waiting": 0, "by_you": 2}
    assert listed["items"] == []


def test_wrong_combinations_are_refused(home: Path) -> None:
    make_items(home)
    for args, message in (
        (["p"], "give an ITEM"),
        (["p", "x", "--queue"], "--queue lists the whole queue"),
        (["p", "x", "--accept", "--reject", "no"], "not both"),
    ):
        result = invoke(home, "review", *args)
        assert result.exit_code == 1 and message in result.output, result.output
