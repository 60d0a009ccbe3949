"""``assay assign`` and ``assay queue`` on a workspace (personal mode: any account may get
tasks), and their refusals."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner

from assay.cli import make_app
from assay.gold.items import create_item
from assay.people.accounts import create_account
from assay.records import Item, Turn
from assay.store.projects import create_project, get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace


def invoke(home: Path, *args: str) -> Result:
    return CliRunner().invoke(make_app(), ["--home", str(home), *args])


def test_assign_with_overlap_then_list_a_queue(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    assert invoke(home, "init").exit_code == 0
    ws = Workspace.open(Settings(home=home))
    project = create_project(ws, "ferries")
    for name in ("ada", "bob"):
        create_account(ws, name, "a long password")
    for n in range(4):
        create_item(ws, project, Item(turns=[Turn(query=f"Question {n}?")]))
    ws.close()

    done = invoke(home, "assign", "ferries", "--to", "ada,bob", "--overlap", "2", "--blind",
                  "--status", "draft")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "Assigned 4 item(s): ada 4, bob 4." in done.output
    again = invoke(home, "assign", "ferries", "--to", "ada", "--status", "draft", "--json")
    assert json.loads(again.output) == {"items": 0, "tasks": {"ada": 0}, "already_assigned": 4}
    shown = invoke(home, "queue", "ferries", "--user", "ada")
    assert shown.exit_code == 0 and "ada: 0 of 4 done" in shown.output
    data = json.loads(invoke(home, "queue", "ferries", "--user", "bob", "--json").output)
    assert (data["done"], data["total"], len(data["tasks"])) == (0, 4, 4)
    ws = Workspace.open(Settings(home=home))
    assert get_project(ws, "ferries").settings["blind"] is True
    ws.close()
    listed = invoke(home, "items", "list", "-p", "ferries", "--copies", "only", "--json")
    assert json.loads(listed.output)["total"] == 8


def test_refusals_name_the_problem(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    assert invoke(home, "init").exit_code == 0
    ws = Workspace.open(Settings(home=home))
    project = create_project(ws, "ferries")
    create_account(ws, "ada", "a long password")
    create_item(ws, project, Item(turns=[Turn(query="Question?")]))
    ws.close()
    too_many = invoke(
        home, "assign", "ferries", "--to", "ada", "--overlap", "2", "--status", "draft"
    )
    assert too_many.exit_code == 1
    assert "overlap 2 needs at least 2 annotators; 1 named (ada)" in " ".join(
        too_many.output.split()
    )
    unknown = invoke(home, "assign", "ferries", "--to", "zed", "--status", "draft")
    assert unknown.exit_code == 1 and "zed" in unknown.output
    nothing = invoke(home, "assign", "ferries", "--to", "ada")
    assert nothing.exit_code == 1 and "say which items to assign" in nothing.output
