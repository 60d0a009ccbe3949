"""``assay items history|restore`` and ``assay versions create|list|show|diff|export`` on a
real SQLite workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from assay.cli import make_app
from assay.corpus.documents import list_documents
from assay.gold.items import create_item, editable_copy, save_item, set_status
from assay.records import Evidence, Item, Turn
from assay.store.projects import get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace

LEAVE = "Every employee has 30 days of annual leave. Leave must be requested in advance.\n"


def invoke(home: Path, *args: str) -> Result:
    return CliRunner().invoke(make_app(), ["--home", str(home), *args])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "leave.txt").write_text(LEAVE)
    home = tmp_path / "ws"
    assert invoke(home, "init").exit_code == 0
    assert invoke(home, "ingest", str(corpus), "--project", "handbook").exit_code == 0
    return home


def _accepted_then_edited(home: Path) -> str:
    """An accepted item whose answer is then changed; returns its id."""
    with Workspace.open(Settings(home=home)) as ws:
        project = get_project(ws, "handbook")
        doc = list_documents(ws, project)[0]
        passage = Evidence(doc_id=doc.id, start=0, end=43, text=LEAVE[:43])
        turn = Turn(query="How many days of leave?", answer="30", evidence=[passage])
        item = create_item(ws, project, Item(turns=[turn]))
        item = set_status(ws, project, item.id, "accepted", item.version)
        edited = editable_copy(item)
        edited.turns[0].answer = "30 days"
        save_item(ws, project, item.id, edited, item.version)
        return item.id


def test_items_history_and_restore(home: Path) -> None:
    item_id = _accepted_then_edited(home)

    shown = invoke(home, "items", "history", item_id)
    assert shown.exit_code == 0, shown.output
    assert "turn 1 answer: '30' → '30 days'" in shown.output
    assert "status: 'draft' → 'accepted'" in shown.output
    events = json.loads(invoke(home, "items", "history", item_id, "--json").output)
    assert [e["action"] for e in events] == ["create", "status", "save"]
    statuses = json.loads(invoke(home, "items", "history", item_id, "--status", "--json").output)
    assert [(s["from"], s["to"]) for s in statuses] == [("draft", "accepted")]

    restored = invoke(home, "items", "restore", item_id, str(events[0]["event"]))
    assert restored.exit_code == 0, restored.output
    assert "now version 4" in restored.output
    wrong = invoke(home, "items", "restore", item_id, str(events[1]["event"]))
    assert wrong.exit_code == 1 and "changed no content" in wrong.output
    unknown = invoke(home, "items", "history", "nope")
    assert unknown.exit_code == 1 and "has no item 'nope'" in unknown.output


def test_versions_commands(home: Path, tmp_path: Path) -> None:
    empty = invoke(home, "versions", "create", "v0")
    assert empty.exit_code == 1 and "nothing to freeze" in empty.output
    item_id = _accepted_then_edited(home)
    made = json.loads(invoke(home, "versions", "create", "v1", "--json").output)
    assert made["item_count"] == 1 and len(made["hash"]) == 64
    again = invoke(home, "versions", "create", "v1")
    assert again.exit_code == 1 and "already has a dataset version named 'v1'" in again.output
    with Workspace.open(Settings(home=home)) as ws:
        project = get_project(ws, "handbook")
        more = create_item(ws, project, Item(turns=[Turn(query="Ask first?", answer="yes")]))
        set_status(ws, project, more.id, "accepted", more.version)
    assert invoke(home, "versions", "create", "v2").exit_code == 0

    listed = invoke(home, "versions")
    assert "v1" in listed.output and made["hash"][:12] in listed.output
    show = json.loads(invoke(home, "versions", "show", "v1", "--json").output)
    assert [i["id"] for i in show["items"]] == [item_id]
    diff = invoke(home, "versions", "diff", "v1", "v2")
    assert "1 added, 0 removed, 0 changed item(s)" in diff.output
    unknown = invoke(home, "versions", "diff", "v1", "nope")
    assert unknown.exit_code == 1 and "no dataset version 'nope'" in unknown.output

    out = tmp_path / "v1.zip"
    exported = invoke(home, "versions", "export", "v1", "native", str(out))
    assert exported.exit_code == 0, exported.output
    assert f"sha256 {made['hash']}" in exported.output
    hf = invoke(home, "versions", "export", "v1", "hf", str(tmp_path / "hf"))
    assert hf.exit_code == 0, hf.output
    assert made["hash"] in (tmp_path / "hf" / "README.md").read_text()

    experiment = invoke(home, "experiments", "create", "e1", "--version", "v1")
    assert experiment.exit_code == 0, experiment.output
    assert "1 tasks" in experiment.output
    assert f"On dataset version 'v1', sha256 {made['hash']}" in experiment.output
    shown = invoke(home, "experiments", "show", "e1")
    assert f"On dataset version 'v1', sha256 {made['hash']}" in shown.output
