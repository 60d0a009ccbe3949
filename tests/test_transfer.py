"""Bundles into and out of projects: one transaction, lenient reports, replace, overlap policy."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from assay.cli import make_app
from assay.corpus.chunkings import count_chunks, create_chunking, import_chunking, list_chunkings
from assay.corpus.documents import count_documents
from assay.corpus.ingest import ingest_bytes, replace_document
from assay.errors import Conflict, DatabaseBusy, ImportRunning, InvalidInput
from assay.experiments.tasks import build_tasks, skipped_items
from assay.formats import Bundle, DocumentRecord, Issue, get_format
from assay.formats.groups import retrieval_groups
from assay.gold.item_lists import list_items
from assay.gold.items import create_item, save_item
from assay.records import Evidence, Item, Project, Turn
from assay.store.db import utcnow
from assay.store.import_lock import EXPIRES, acquire, journal, last_asked, turns_file
from assay.store.projects import create_project, get_project, list_projects
from assay.store.schema import documents, import_journal, projects
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.transfer import (
    BatchPolicy,
    chunks_for_span,
    export_bundle,
    export_scope,
    import_bundle,
)
from assay.transfer.batches import pause_after

POLICY = (
    "Travel policy 2025.\n\nHotels are refunded up to 140 euros per night.\n"
    "Trains: second class, first class from four hours.\nTaxis only at night.\n"
)
LEAVE = (
    "Leave policy.\n\nEmployees get 30 days of paid leave per year.\nCarry-over ends in March.\n"
)


def counts(ws: Workspace, name: str) -> tuple[int, int, int, int]:
    """Documents, items, chunkings and chunks of a project: what must not change on failure."""
    project = get_project(ws, name)
    chunkings = list_chunkings(ws, project)
    return (
        count_documents(ws, project),
        list_items(ws, project, limit=1)[0],
        len(chunkings),
        sum(count_chunks(ws, c) for c in chunkings),
    )


def rich_project(ws: Workspace, project: Project) -> None:
    """Two documents, a generated and an imported chunking, items with groups and statuses."""
    policy = ingest_bytes(ws, project, "policy.txt", POLICY.encode())
    leave = ingest_bytes(ws, project, "leave.md", LEAVE.encode(), metadata={"path": "hr/leave.md"})
    create_chunking(ws, project, "small", "recursive", {"max_length": 60})
    import_chunking(
        ws,
        project,
        "paragraphs",
        [
            ("p-1", policy.id, 0, 19),
            ("p-2", policy.id, 21, len(POLICY)),
            ("l-1", leave.id, 0, len(LEAVE)),
        ],
    )
    hotel = "Hotels are refunded up to 140 euros per night."
    create_item(
        ws,
        project,
        Item(
            turns=[
                Turn(
                    query="How much is refunded per hotel night?",
                    answer="Up to 140 euros.",
                    alternatives=["140 euros"],
                    evidence=[
                        Evidence(doc_id=policy.id, text=hotel, group=1),
                        Evidence(doc_id=leave.id, text="30 days of paid leave", group=1),
                        Evidence(doc_id=policy.id, text="Taxis only at night.", group=2),
                        Evidence(
                            doc_id=leave.id, text="Carry-over ends in March.", label="distracting"
                        ),
                    ],
                )
            ],
            extra={"note": "kept"},
        ),
        status="accepted",
    )
    create_item(
        ws,
        project,
        Item(
            kind="conversation",
            turns=[
                Turn(
                    query="Leave?",
                    answer="30 days.",
                    evidence=[Evidence(doc_id=leave.id, text="30 days")],
                ),
                Turn(query="And trains?", rewrite="Which train class?", answer="Second class."),
            ],
        ),
    )
    create_item(
        ws,
        project,
        Item(
            turns=[
                Turn(
                    query="Who pays the parking?",
                    query_type="unanswerable",
                    answer="The policy does not say.",
                    evidence=[
                        Evidence(text="Parking is free.", origin="imported", label="distracting")
                    ],
                )
            ]
        ),
        status="submitted",
    )


def test_overlap_policy() -> None:
    chunks = [("a", 0, 100), ("b", 100, 200), ("c", 200, 300)]
    assert chunks_for_span(10, 40, chunks) == ("a",)  # inside one chunk
    assert chunks_for_span(80, 130, chunks) == ("b",)  # 20 + 30: only b covers half
    assert chunks_for_span(90, 110, chunks) == ("a", "b")  # split evenly: both
    assert chunks_for_span(60, 300, chunks) == ("b", "c")  # a: 40 of 100, under half of each
    assert chunks_for_span(40, 260, chunks) == ("a", "b", "c")
    assert chunks_for_span(99, 180, [("a", 0, 100), ("b", 100, 1000)]) == ("b",)
    assert chunks_for_span(0, 10, [("x", 5, 1000), ("y", 8, 2000)]) == ("x",)  # best overlap
    assert chunks_for_span(400, 410, chunks) == ()


def test_groups_become_retrieval_gt() -> None:
    turn = Turn(
        evidence=[
            Evidence(chunk_ids=("a",), group=1),
            Evidence(chunk_ids=("b", "a"), group=1),
            Evidence(chunk_ids=("c",), group=2),
            Evidence(chunk_ids=("d",)),
            Evidence(chunk_ids=("e",), label="distracting"),
            Evidence(),
        ]
    )
    assert retrieval_groups(turn) == ([["a", "b"], ["c"], ["d"]], 1)
    turn.query_type = "unanswerable"
    assert retrieval_groups(turn) == ([], 0)


def test_export_maps_evidence_to_the_chosen_chunking(ws: Workspace, project: Project) -> None:
    rich_project(ws, project)
    bundle = export_bundle(ws, project, chunking="paragraphs")
    first = next(i for i in bundle.items if i.status == "accepted")
    groups, _ = retrieval_groups(first.turns[0])
    assert groups == [["p-2", "l-1"], ["p-2"]]
    small = export_bundle(ws, project, chunking="small", statuses=["accepted"])
    items = list(small.items)
    assert len(items) == 1
    ids = [c for e in items[0].turns[0].evidence for c in e.chunk_ids]
    assert ids and all("#" in c for c in ids)


def test_strict_import_writes_nothing_on_error(ws: Workspace, project: Project) -> None:
    rich_project(ws, project)
    before = counts(ws, "test")
    bad = Bundle(
        documents=[DocumentRecord(ref="d", name="new.txt", data=b"Fresh text about trains.")],
        items=[
            Item(id="ok", turns=[Turn(query="fine")]),
            Item(
                id="bad",
                turns=[
                    Turn(
                        query="q",
                        evidence=[Evidence(doc_id="d", start=0, end=999, text="x")],
                    )
                ],
            ),
        ],
    )
    with pytest.raises(InvalidInput, match="outside the document"):
        import_bundle(ws, "test", bad)
    assert counts(ws, "test") == before
    with pytest.raises(InvalidInput, match="row 3"):
        import_bundle(ws, "test", Bundle(issues=[Issue("file.csv row 3", "bad")]))
    assert counts(ws, "test") == before


def test_lenient_import_reports_each_record(ws: Workspace, project: Project) -> None:
    bundle = Bundle(
        documents=[
            DocumentRecord(ref="d", name="new.txt", data=b"Fresh text about trains."),
            DocumentRecord(ref="e", name="empty.txt", data=b""),
        ],
        items=[
            Item(
                id="ok",
                turns=[Turn(query="q", evidence=[Evidence(doc_id="d", text="trains")])],
            ),
            Item(
                id="lost",
                turns=[
                    Turn(
                        query="q",
                        evidence=[Evidence(doc_id="d", text="planes", origin="imported")],
                    )
                ],
            ),
            Item(
                id="bad",
                turns=[
                    Turn(
                        query="q",
                        evidence=[Evidence(doc_id="d", start=0, end=999, text="x")],
                    )
                ],
            ),
        ],
        issues=[Issue("file row 9", "field 'qid' is empty")],
    )
    report = import_bundle(ws, "test", bundle, lenient=True)
    by_ref = {(o.kind, o.ref): o for o in report.outcomes}
    assert by_ref[("document", "d")].status == "imported"
    assert by_ref[("document", "e")].status == "skipped"
    assert by_ref[("item", "ok")].status == "imported"
    assert by_ref[("item", "lost")].status == "flagged"
    assert "not found" in by_ref[("item", "lost")].message
    assert by_ref[("item", "bad")].status == "skipped"
    assert by_ref[("record", "file row 9")].status == "skipped"
    assert counts(ws, "test")[:2] == (1, 2)


def test_existing_items_are_not_overwritten_without_replace(
    any_ws: Workspace, tmp_path: Path
) -> None:
    ws = any_ws
    project = create_project(ws, "test", "en")
    rich_project(ws, project)
    native = get_format("native")
    native.write(export_bundle(ws, project), tmp_path / "p.zip")
    before = counts(ws, "test")
    with pytest.raises(Conflict, match="already has a chunking"):
        import_bundle(ws, "test", native.read(tmp_path / "p.zip"))
    assert counts(ws, "test") == before
    report = import_bundle(ws, "test", native.read(tmp_path / "p.zip"), replace=True)
    assert report.count("skipped") == 0
    assert counts(ws, "test") == before
    # the same ids in another project of the workspace: new ids, noted (not a warning)
    other = import_bundle(ws, "copy", native.read(tmp_path / "p.zip"))
    assert other.count("imported", "item") == 3
    assert other.count("flagged", "item") == 1  # its passage without a document
    assert all("stored as" in o.message for o in other.outcomes if o.kind == "item")
    assert counts(ws, "copy")[:2] == (2, 3)


def test_cli_import_and_export(tmp_path: Path, shared_fixtures: Path) -> None:
    runner = CliRunner()
    home = str(tmp_path / "ws")
    app = make_app()
    runner.invoke(app, ["--home", home, "init"])
    listed = runner.invoke(app, ["--home", home, "formats", "--json"])
    assert listed.exit_code == 0
    assert {f["name"] for f in json.loads(listed.output)} >= {"native", "ragold", "autorag"}
    imported = runner.invoke(
        app,
        [
            "--home",
            home,
            "import",
            "autorag",
            str(shared_fixtures / "autorag"),
            "-p",
            "a",
            "--json",
        ],
    )
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.output)["summary"]["item"]["imported"] == 10
    out = tmp_path / "out"
    exported = runner.invoke(
        app,
        [
            *("--home", home, "export", "autorag", str(out)),
            "--chunking",
            "autorag",
            "--json",
            "--status",
            "all",
        ],
    )
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.output)["items"] == 10
    assert (out / "qa.parquet").is_file()
    wrong = runner.invoke(app, ["--home", home, "export", "nope", str(out)])
    assert wrong.exit_code == 1
    assert "unknown format" in wrong.output
    bad_status = runner.invoke(app, ["--home", home, "export", "csv", "x.csv", "--status", "done"])
    assert bad_status.exit_code == 1


def test_import_status_gives_every_item_that_status(any_ws: Workspace) -> None:
    """A gold set reviewed elsewhere (BEIR has no status) can come in as accepted gold."""
    report = import_bundle(any_ws, "gold", many_items(3), status="accepted")
    assert report.summary()["item"]["imported"] == 3
    _, rows = list_items(any_ws, get_project(any_ws, "gold"))
    assert sorted(r.status for r in rows) == ["accepted"] * 3
    import_bundle(any_ws, "kept", many_items(2))
    _, rows = list_items(any_ws, get_project(any_ws, "kept"))
    assert [r.status for r in rows] == ["draft", "draft"]
    with pytest.raises(InvalidInput, match="unknown status 'gold'"):
        import_bundle(any_ws, "other", many_items(1), status="gold")
    assert "other" not in {p.name for p in list_projects(any_ws)}


# ---------------------------------------------------------------- batches and the import lock


def many_items(n: int, bad_at: int | None = None) -> Bundle:
    """A document and ``n`` items citing it; item ``bad_at`` (1-based) points outside it."""
    items = []
    for number in range(1, n + 1):
        end = 999 if number == bad_at else 6
        evidence = [Evidence(doc_id="d", start=0, end=end, text="Fresh " if end == 6 else "x")]
        items.append(Item(id=f"q{number}", turns=[Turn(query=f"q {number}", evidence=evidence)]))
    return Bundle(
        documents=[DocumentRecord(ref="d", name="fresh.txt", data=b"Fresh text about trains.")],
        items=items,
    )


def lock_rows(ws: Workspace) -> tuple[int, int]:
    """Projects still locked and journal rows left: both 0 once an import has ended."""
    with ws.engine.connect() as conn:
        locked = conn.scalar(sa.select(sa.func.count()).where(projects.c.import_token.is_not(None)))
        journal = conn.scalar(sa.select(sa.func.count()).select_from(import_journal))
    return int(locked or 0), int(journal or 0)


def test_import_commits_in_batches_behind_the_project_lock(any_ws: Workspace) -> None:
    ws = any_ws
    other = create_project(ws, "other")
    mine = create_item(ws, other, Item(turns=[Turn(query="mine")]))
    create_project(ws, "test")
    seen: list[str] = []

    def midway(stage: str, done: int, total: int | None) -> None:
        if stage != "items" or done != 100:  # after the first group of items
            return
        # the batches so far are committed: other projects are writable right now ...
        saved = save_item(ws, other, mine.id, Item(turns=[Turn(query="edited")]), 1)
        seen.append(saved.turns[0].query)
        # ... the project being imported into shows the lock and refuses edits
        target = get_project(ws, "test")
        assert target.importing_since is not None
        with pytest.raises(ImportRunning, match="locked by an import running since"):
            create_item(ws, target, Item(turns=[Turn(query="sneaked in")]))
        with pytest.raises(ImportRunning):
            export_scope(ws, target, None)

    report = import_bundle(
        ws, "test", many_items(120), progress=midway, batching=BatchPolicy(records=2, pause=0)
    )
    assert seen == ["edited"]
    assert report.count("imported", "item") == 120
    assert counts(ws, "test")[:2] == (1, 120)
    assert get_project(ws, "test").importing_since is None
    assert lock_rows(ws) == (0, 0)


def test_a_failure_at_a_late_record_undoes_every_batch(any_ws: Workspace) -> None:
    ws = any_ws
    project = create_project(ws, "test")
    rich_project(ws, project)
    before = counts(ws, "test")
    policy = BatchPolicy(records=2, pause=0)
    with pytest.raises(InvalidInput, match="outside the document"):
        import_bundle(ws, "test", many_items(20, bad_at=19), batching=policy)
    assert counts(ws, "test") == before
    assert lock_rows(ws) == (0, 0)
    # into a new project: the project itself goes again
    with pytest.raises(InvalidInput, match="outside the document"):
        import_bundle(ws, "fresh", many_items(20, bad_at=19), batching=policy)
    assert [p.name for p in list_projects(ws)] == ["test"]
    # replacing: the old content stays until the very end
    with pytest.raises(InvalidInput, match="outside the document"):
        import_bundle(ws, "test", many_items(20, bad_at=19), replace=True, batching=policy)
    assert counts(ws, "test") == before
    assert [p.name for p in list_projects(ws)] == ["test"]
    assert lock_rows(ws) == (0, 0)
    # the edits refused during the import are allowed again
    create_item(ws, get_project(ws, "test"), Item(turns=[Turn(query="after")]))


KILLED_IMPORT = """
import os, sys, time
from assay.formats import Bundle, DocumentRecord
from assay.records import Item, Turn
from assay.store.settings import Settings
from assay.transfer import BatchPolicy, import_bundle
from assay.store.workspace import Workspace

ws = Workspace.open(Settings(home=sys.argv[1], database_url=sys.argv[2]))
items = [Item(id=f"k{n}", turns=[Turn(query=f"q{n}")]) for n in range(200)]
bundle = Bundle(
    documents=[DocumentRecord(ref="d", name="killed.txt", data=b"Written by a killed import.")],
    items=items,
)

def progress(stage, done, total):
    if stage == "items" and done == 100:  # the first group of items
        print("midway", flush=True)
        time.sleep(600)

import_bundle(ws, sys.argv[3], bundle, progress=progress, batching=BatchPolicy(records=5, pause=0))
"""


@pytest.mark.parametrize("target", ["test", "new"])
def test_a_killed_import_is_undone_when_the_workspace_opens(
    any_ws: Workspace, tmp_path: Path, target: str
) -> None:
    ws = any_ws
    project = create_project(ws, "test")
    rich_project(ws, project)
    before = counts(ws, "test")
    url = ws.engine.url.render_as_string(hide_password=False)
    script = tmp_path / "killed.py"
    script.write_text(KILLED_IMPORT)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(ws.settings.home), url, target],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "midway"
        # what it committed so far is visible, under the lock
        half = get_project(ws, target)
        assert half.importing_since is not None
        assert list_items(ws, half, limit=0)[0] >= 100
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    reopened = Workspace.open(ws.settings)
    try:
        assert counts(reopened, "test") == before
        assert [p.name for p in list_projects(reopened)] == ["test"]
        assert get_project(reopened, "test").importing_since is None
        assert lock_rows(reopened) == (0, 0)
    finally:
        reopened.close()


def test_a_lock_whose_heartbeat_stopped_expires(any_ws: Workspace) -> None:
    ws = any_ws
    project = create_project(ws, "test")
    with ws.engine.begin() as conn:
        conn.info.pop("assay_import_token", None)
        acquire(conn, project.id, "t-1")
        journal(conn, "t-1", "item", "not-there")
        conn.execute(
            projects.update()
            .where(projects.c.id == project.id)
            .values(import_holder="elsewhere:1", import_heartbeat_at=utcnow() - EXPIRES * 2)
        )
    # held on another host, silent for longer than EXPIRES: the next edit clears it
    create_item(ws, get_project(ws, "test"), Item(turns=[Turn(query="fine")]))
    assert get_project(ws, "test").importing_since is None
    assert lock_rows(ws) == (0, 0)


@pytest.mark.sqlite_only("holds SQLite's writer lock; PostgreSQL has no database-wide one")
def test_a_write_that_waits_too_long_is_busy_not_an_internal_error(ws: Workspace) -> None:
    project = create_project(ws, "test")
    item = create_item(ws, project, Item(turns=[Turn(query="q")]))
    with ws.engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA busy_timeout = 50")  # the pool hands this one out next
    holder = sqlite3.connect(ws.settings.home / "assay.db", isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(DatabaseBusy, match="busy with another write"):
            save_item(ws, project, item.id, Item(turns=[Turn(query="q2")]), 1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_pause_after_lets_writers_in_only_when_they_wait() -> None:
    policy = BatchPolicy(
        seconds=0.075, quiet_seconds=0.5, records=1000, pause=0.025, every=4.0, long_pause=0.11
    )

    def step(elapsed: float = 0.01, since: float = 0.5, **kw: Any) -> float | None:
        given = {"records": 1, "asked": False, "others_active": False} | kw
        return pause_after(policy, elapsed=elapsed, since_pause=since, **given)

    assert step() is None  # a young batch goes on
    assert step(elapsed=0.08) is None  # alone: longer batches (fewer index pages rewritten)
    assert step(elapsed=0.5) == 0.0  # alone: commit, no pause
    assert step(elapsed=0.01, records=1000) == 0.0
    assert step(elapsed=0.08, others_active=True) == 0.025  # others wrote lately: pause
    assert step(others_active=True) is None
    assert step(asked=True) == 0.025  # a writer waits: commit and pause at once ...
    assert step(asked=True, since=0.01) is None  # ... but the import keeps half the time
    assert step(since=4.0) == 0.11  # now and then a pause for writers that do not ask
    off = BatchPolicy(records=2, pause=0)
    assert (
        pause_after(off, elapsed=0, records=1, since_pause=9, asked=True, others_active=True)
        is None
    )
    assert (
        pause_after(off, elapsed=0, records=2, since_pause=0, asked=True, others_active=True) == 0
    )


def test_an_edit_that_waits_gets_its_turn_in_a_long_batch(any_ws: Workspace) -> None:
    """The batch would run for minutes; an edit to another project asks for its turn and
    gets it at the import's next group of items (on PostgreSQL it never waits at all)."""
    ws = any_ws
    other = create_project(ws, "other")
    mine = create_item(ws, other, Item(turns=[Turn(query="mine")]))
    with ws.engine.connect() as conn:
        turns = turns_file(conn)
    asked_before = last_asked(turns)
    saved: list[str] = []
    done = threading.Event()

    def edit() -> None:
        try:
            item = save_item(ws, other, mine.id, Item(turns=[Turn(query="edited")]), 1)
            saved.append(item.turns[0].query)
        finally:
            done.set()

    def midway(stage: str, number: int, total: int | None) -> None:
        if stage == "items" and number == 100:
            threading.Thread(target=edit).start()
            for _ in range(3000):  # until the edit has asked (it waits for the lock next)
                if turns is None or last_asked(turns) != asked_before or done.is_set():
                    break
                time.sleep(0.01)
            time.sleep(0.15)  # the import has had its half of the time
        if stage == "items" and number == 200:
            assert done.wait(60) and saved == ["edited"]  # while the import goes on

    policy = BatchPolicy(seconds=600, quiet_seconds=600, records=1000, pause=0.15)
    report = import_bundle(ws, "test", many_items(250), progress=midway, batching=policy)
    assert saved == ["edited"] and report.count("imported", "item") == 250
    assert lock_rows(ws) == (0, 0)


@pytest.mark.sqlite_only("the assay.db-writers turns file of SQLite's import pauses")
def test_an_import_does_not_ask_for_its_own_turn(ws: Workspace) -> None:
    with ws.engine.connect() as conn:
        turns = turns_file(conn)
    assert turns == str(ws.settings.home / "assay.db-writers")
    create_item(ws, create_project(ws, "other"), Item(turns=[Turn(query="asks")]))
    asked = last_asked(turns)
    assert asked > 0  # an edit asked
    import_bundle(ws, "test", many_items(30), batching=BatchPolicy(records=2))
    assert last_asked(turns) == asked  # the import's own writes did not


# ---------------------------------------------------------------- import counts per format


ROUND_TRIP = [
    "native",
    "ragold",
    "autorag",
    "beir",
    "trec",
    "csv",
    "hf",
    "ragaphene",
    "mtrag",
    "inspectorraget",
]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_import_counts_match_what_is_stored(
    ws: Workspace, project: Project, tmp_path: Path, name: str
) -> None:
    """Our own export read back into the same workspace (its ids taken): every item stored is
    counted as imported, flagged ones are among them, nothing stored is called skipped."""
    rich_project(ws, project)
    spec = get_format(name)
    out = tmp_path / f"out{spec.extensions[0]}"
    spec.write(export_bundle(ws, project, chunking="paragraphs"), out)
    bundle = spec.read(out)
    report = import_bundle(ws, "copy", bundle, lenient=True)
    stored = list_items(ws, get_project(ws, "copy"), limit=1)[0]
    outcomes = [o for o in report.outcomes if o.kind == "item"]
    assert report.count("imported", "item") == stored > 0
    assert report.count("skipped", "item") == len(outcomes) - stored == 0
    assert report.summary()["item"] == {
        "imported": stored,
        "flagged": sum(o.status == "flagged" for o in outcomes),
        "skipped": 0,
    }
    assert report.count("flagged", "item") <= report.count("imported", "item")


# ---------------------------------------------------------------- export defaults


def test_export_takes_accepted_items_unless_told(tmp_path: Path) -> None:
    runner = CliRunner()
    home = str(tmp_path / "ws")
    app = make_app()
    runner.invoke(app, ["--home", home, "init"])
    ws = Workspace.open(Settings(home=Path(home)))
    rich_project(ws, create_project(ws, "test"))  # accepted, draft, submitted
    ws.close()

    def export(*extra: str) -> Any:
        return runner.invoke(
            app, ["--home", home, "export", "csv", str(tmp_path / "x.csv"), *extra]
        )

    default = export()
    assert default.exit_code == 0, default.output
    assert "Wrote 1 item(s)" in default.output
    assert "left out 1 draft, 1 submitted item(s); use --status to include them" in default.output
    every = export("--status", "all", "--json")
    assert json.loads(every.output)["items"] == 3 and json.loads(every.output)["left_out"] == {}
    two = export("--status", "draft,submitted", "--json")
    assert json.loads(two.output)["items"] == 2
    assert json.loads(two.output)["left_out"] == {"accepted": 1}
    assert (
        json.loads(export("--status", "draft", "--status", "accepted", "--json").output)["items"]
        == 2
    )
    empty = export("--status", "rejected")
    assert empty.exit_code == 1
    assert "nothing to export" in empty.output and "--allow-empty" in empty.output
    allowed = export("--status", "rejected", "--allow-empty")
    assert allowed.exit_code == 0, allowed.output
    assert "holds no item" in allowed.output
    assert export("--status", "done").exit_code == 1


# ---------------------------------------------------------------- evidence that went stale


def stale_project(ws: Workspace) -> tuple[Project, str, str]:
    """Two accepted items citing one document; replacing it changes the first one's passage."""
    project = create_project(ws, "stale")
    doc = ingest_bytes(ws, project, "policy.txt", POLICY.encode())

    def accepted(query: str, passage: str) -> str:
        turn = Turn(query=query, answer=passage, evidence=[Evidence(doc_id=doc.id, text=passage)])
        return create_item(ws, project, Item(turns=[turn]), status="accepted").id

    hotel = accepted("How much for a hotel?", "Hotels are refunded up to 140 euros per night.")
    train = accepted("Which class on trains?", "Trains: second class")
    replace_document(ws, project, doc, "policy.txt", POLICY.replace("140", "150").encode())
    return project, hotel, train


def test_stale_evidence_is_never_exported_and_experiments_agree(
    any_ws: Workspace, tmp_path: Path
) -> None:
    project, stale, fine = stale_project(any_ws)
    scope = export_scope(any_ws, project, ["accepted"])
    assert scope.items == 1 and list(scope.needs_review) == [stale]
    (problem,) = scope.needs_review[stale]
    assert (problem.turn, problem.passage, problem.reason) == (1, 1, "stale")
    assert scope.needs_review_lines() == [f"{stale}: {problem.message}"]
    native = get_format("native")
    native.write(export_bundle(any_ws, project, statuses=["accepted"]), tmp_path / "n.zip")
    exported = [item.id for item in native.read(tmp_path / "n.zip").items]
    assert exported == [fine]
    # named items and every status follow the same rule
    assert [i.id for i in export_bundle(any_ws, project, items=[stale, fine]).items] == [fine]
    assert [i.id for i in export_bundle(any_ws, project, statuses=None).items] == [fine]
    assert export_scope(any_ws, project, None, items=[stale]).needs_review.keys() == {stale}
    # experiments make tasks of exactly the exported items
    assert {task.item_id for task in build_tasks(any_ws, project)} == set(exported)
    assert skipped_items(any_ws, project) == {stale}


def test_export_rechecks_the_invariant_against_the_current_text(any_ws: Workspace) -> None:
    """Evidence still marked anchored whose document text changed under it (not through a
    replacement) is caught at export as broken, and experiments skip it too."""
    project = create_project(any_ws, "broken")
    doc = ingest_bytes(any_ws, project, "policy.txt", POLICY.encode())
    turn = Turn(
        query="Taxis?", answer="At night.", evidence=[Evidence(doc_id=doc.id, text="Taxis")]
    )
    item = create_item(any_ws, project, Item(turns=[turn]), status="accepted")
    with any_ws.engine.begin() as conn:
        conn.execute(documents.update().where(documents.c.id == doc.id).values(text=POLICY.lower()))
    scope = export_scope(any_ws, project, None)
    assert [(p.reason, p.doc_id) for p in scope.needs_review[item.id]] == [("broken", doc.id)]
    assert list(export_bundle(any_ws, project).items) == []
    assert build_tasks(any_ws, project) == []


def test_cli_export_lists_stale_items_and_strict_refuses(ws: Workspace, tmp_path: Path) -> None:
    project, stale, fine = stale_project(ws)
    runner, app = CliRunner(), make_app()
    base = ["--home", str(ws.settings.home), "export", "csv", "-p", project.name]
    refused = runner.invoke(app, [*base, str(tmp_path / "s.csv"), "--strict"])
    assert refused.exit_code == 1
    assert "refusing a strict export" in refused.output and stale in refused.output
    assert not (tmp_path / "s.csv").exists()
    done = runner.invoke(app, [*base, str(tmp_path / "a.csv"), "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert report["items"] == 1
    assert [entry["id"] for entry in report["needs_review"]] == [stale]
    assert report["needs_review"][0]["problems"][0]["reason"] == "stale"
    assert (
        fine in (tmp_path / "a.csv").read_text() and stale not in (tmp_path / "a.csv").read_text()
    )
    text = runner.invoke(app, [*base, str(tmp_path / "b.csv")])
    assert "left out 1 item(s) needing review" in text.output and stale in text.output


def test_an_evaluation_import_makes_an_experiment(any_ws: Workspace, tmp_path: Path) -> None:
    """An InspectorRAGet file: an experiment beside the items, counted in the report."""
    from assay.experiments import list_experiments
    from tests.test_formats_inspectorraget import rich_file, write_file

    path = write_file(tmp_path, rich_file())
    report = import_bundle(any_ws, "eval", get_format("inspectorraget").read(path))
    assert report.summary()["experiment"] == {"imported": 1, "flagged": 0, "skipped": 0}
    assert report.summary()["document"]["imported"] == 2
    again = import_bundle(any_ws, "eval", get_format("inspectorraget").read(path))
    assert again.count("flagged", "document") == 2  # the same texts: linked, not stored twice
    project = get_project(any_ws, "eval")
    names = [e.name for e in list_experiments(any_ws, project)]
    assert names == ["Ferry answers (2)", "Ferry answers"]


def test_an_evaluation_import_with_replace_leaves_one_experiment(
    ws: Workspace, tmp_path: Path
) -> None:
    """Replacing a project whose items cite documents deletes the old one (evidence ->
    documents) on SQLite and on PostgreSQL (the suite's PostgreSQL pass)."""
    from assay.experiments import list_experiments
    from tests.test_formats_inspectorraget import rich_file, write_file

    path = write_file(tmp_path, rich_file())
    import_bundle(ws, "eval", get_format("inspectorraget").read(path))
    again = import_bundle(ws, "eval", get_format("inspectorraget").read(path), replace=True)
    assert again.summary()["item"]["imported"] == 2
    project = get_project(ws, "eval")
    assert [e.name for e in list_experiments(ws, project)] == ["Ferry answers"]
    assert list_items(ws, project)[0] == 2
