"""The CLI against a team server (ASSAY_URL + ASSAY_TOKEN): the real ``assay`` in a
subprocess, a real uvicorn server on loopback, accounts and tokens made by the people
functions; on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import assay
from assay.experiments.tasks import build_tasks
from assay.formats import get_format
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.tokens import create_token
from assay.store.projects import create_project, get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.transfer import export_bundle
from tests.conftest import LiveServer, free_port
from tests.experiments_corpus import build_corpus

PASSWORD = "correct horse battery"
SRC = str(Path(assay.__file__).resolve().parents[1])
"""This checkout's sources, for the subprocesses (which run in another folder)."""


@dataclass
class Team:
    ws: Workspace
    url: str
    write: str
    read: str
    admin: str
    tmp: Path

    def assay(self, *args: str, token: str | None = None, url: str | None = None) -> Result:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
        env.update(ASSAY_URL=self.url if url is None else url, ASSAY_HOME=str(self.tmp / "none"))
        env["ASSAY_TOKEN"] = self.write if token is None else token
        env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])
        done = subprocess.run(
            [sys.executable, "-m", "assay", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.tmp,
            timeout=180,
        )
        return Result(done.returncode, done.stdout, done.stderr)


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def handbook_file(tmp_path: Path) -> Path:
    """The small experiments corpus as a native file, made in a workspace of its own."""
    path = tmp_path / "handbook.zip"
    with Workspace.open(Settings(home=tmp_path / "source")) as ws:
        project = create_project(ws, "handbook", "en")
        build_corpus(ws, project)
        get_format("native").write(export_bundle(ws, project), path)
    return path


@pytest.fixture
def team(any_ws: Workspace, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A team server: an admin with a write token, and a lead of the (empty) project
    handbook with a write and a read token."""
    root = create_account(any_ws, "root", PASSWORD, admin=True)
    set_team_mode(any_ws, True)
    lead = create_account(any_ws, "lena", PASSWORD)
    project = create_project(any_ws, "handbook", "en")
    set_role(any_ws, project.id, lead.id, "lead")
    write, _ = create_token(any_ws, lead.id, "ci", "write")
    read, _ = create_token(any_ws, lead.id, "dashboard", "read")
    admin, _ = create_token(any_ws, root.id, "admin", "write")
    with LiveServer(any_ws) as server:
        yield Team(any_ws, server.url, write, read, admin, tmp_path)


def _run_file(ws: Workspace, path: Path) -> None:
    """A run naming the server's chunk ids (of the file's chunking ``para``; the project
    keeps its own default): every gold chunk, at rank 2 for later turns."""
    lines = []
    for task in build_tasks(ws, get_project(ws, "handbook"), chunking="para"):
        gold = [c for group in task.chunk_groups() for c in group]
        if not gold:
            continue
        ids = [*gold, "unknown-chunk"] if task.turn == 1 else ["unknown-chunk", *gold]
        for rank, chunk_id in enumerate(ids, start=1):
            lines.append(f"{task.task_id} Q0 {chunk_id} {rank} {10 - rank} sys")
    path.write_text("\n".join(lines) + "\n")


def test_import_export_eval_and_experiments_against_a_server(
    team: Team, handbook_file: Path
) -> None:
    imported = team.assay("import", "native", str(handbook_file), "--project", "handbook")
    assert imported.code == 0, imported.err
    assert "Imported into project 'handbook'" in imported.out
    assert re.search(r"│ item +│ 4 +│ 0 +│ 0 +│", imported.out), imported.out

    out = team.tmp / "back.zip"
    exported = team.assay("export", "native", str(out), "--status", "all")
    assert exported.code == 0, exported.err
    assert f"Wrote 4 item(s) to {out}" in exported.out
    sent, back = (get_format("native").read(p) for p in (handbook_file, out))
    assert sorted(d.name for d in back.documents) == sorted(d.name for d in sent.documents)
    assert sorted(i.id for i in back.items) == sorted(i.id for i in sent.items)
    assert sorted(t.query for i in back.items for t in i.turns) == sorted(
        t.query for i in sent.items for t in i.turns
    )

    beir = team.tmp / "beir"
    beir.mkdir()
    (beir / "notes.txt").write_text("mine")
    folder = team.assay("export", "beir", str(beir), "--json")
    assert folder.code == 0, folder.err
    assert json.loads(folder.out)["items"] == 3  # accepted only, as locally
    assert {"corpus.jsonl", "queries.jsonl"} <= {p.name for p in beir.iterdir()}
    assert (beir / "notes.txt").read_text() == "mine"  # written into, as locally
    into_folder = team.assay("export", "native", str(beir))
    assert into_folder.code == 1 and "is a folder; the native format writes one file" in (
        into_folder.err
    )

    run_path = team.tmp / "run.txt"
    _run_file(team.ws, run_path)
    scored = team.assay(
        "eval", "-c", "para", "--run", str(run_path), "--json", "-m", "R@10", "-m", "RR"
    )
    assert scored.code == 0, scored.err
    got = json.loads(scored.out)
    assert (got["project"], got["tasks"], got["errors"]) == ("handbook", 5, 1)
    assert got["metrics"]["R@10"] == 1.0
    assert got["metrics"]["RR"] == pytest.approx((1 + 1 + 1 + 0.5) / 4)
    gate = team.assay("eval", "-c", "para", "--run", str(run_path), "--fail-under", "RR=0.95")
    assert gate.code == 3, gate.err
    assert "RR = 0.8750 is under the threshold 0.95" in gate.err

    created = team.assay("experiments", "create", "baseline", "--pipeline", "keyword")
    assert created.code == 0, created.err
    assert "Created experiment 'baseline'" in created.out and "5 tasks" in created.out
    listed = team.assay("experiments", "--json")
    assert [e["name"] for e in json.loads(listed.out)] == ["baseline"]
    ran = team.assay("experiments", "run", "baseline")
    assert ran.code == 0, ran.err
    assert "baseline" in ran.out and "done, 5/5 done" in ran.out and "nDCG@10" in ran.out
    shown = team.assay("experiments", "show", "baseline", "--json")
    assert json.loads(shown.out)["status"] == "done"
    team.assay("experiments", "create", "later", "--pipeline", "keyword")
    queued = team.assay("experiments", "run", "later", "--background")
    assert queued.code == 0, queued.err
    assert "'later' is queued" in queued.out  # the server runs it


def test_an_import_into_a_new_project_creates_it(team: Team, handbook_file: Path) -> None:
    lead = team.assay("import", "native", str(handbook_file), "--project", "fresh")
    assert lead.code == 1 and "lena may not create projects" in lead.err
    admin = team.assay("import", "native", str(handbook_file), "-p", "fresh", token=team.admin)
    assert admin.code == 0, admin.err
    assert "Imported into project 'fresh'" in admin.out
    listed = team.assay("experiments", "-p", "fresh", token=team.admin)
    assert listed.code == 0 and "No experiments yet" in listed.out


def test_refusals_say_why(team: Team, handbook_file: Path) -> None:
    read_only = team.assay("import", "native", str(handbook_file), token=team.read)
    assert read_only.code == 1
    assert "lena may not import data in project 'handbook'" in read_only.err
    assert "this API token may only read" in read_only.err
    assert team.read[:10] in read_only.err and "--scope write" in read_only.err

    wrong = team.assay("experiments", token="assay_" + "x" * 43)
    assert wrong.code == 1
    assert "did not accept the token in ASSAY_TOKEN" in wrong.err
    assert "unknown API token" in wrong.err and "assay tokens create" in wrong.err

    none = team.assay("experiments", token="")
    assert none.code == 1 and "ASSAY_TOKEN is empty" in none.err
    assert "assay tokens create" in none.err

    clear = team.assay("experiments", url="http://assay.example.org")
    assert clear.code == 1 and "would travel in clear" in clear.err and "--insecure" in clear.err

    gone = f"http://127.0.0.1:{free_port()}"
    down = team.assay("experiments", url=gone)
    assert down.code == 1 and f"cannot reach the Assay server at {gone}" in down.err

    insecure = team.assay("--insecure", "experiments", url="http://assay.invalid")
    assert insecure.code == 1 and "cannot reach the Assay server at http://assay.invalid" in (
        insecure.err
    )

    bad = team.tmp / "bad.csv"
    bad.write_text("answer\nno query here\n")
    failed = team.assay("import", "csv", str(bad))
    assert failed.code == 1 and "the import job on" in failed.err and "failed:" in failed.err

    local_only = team.assay("--url", team.url, "items", "list")
    assert local_only.code == 1 and "works on the local workspace only" in local_only.err
