"""Large imports prepare their items in a second process (``assay.transfer.item_pipeline``)
while the import's own process writes: the rows, the report, the accounts, the errors and the
progress are those of an import that does everything itself, on SQLite and PostgreSQL, and the
second process never outlives the import."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.formats import Bundle, DocumentRecord, ProjectInfo, get_format
from assay.records import Project
from assay.store.projects import create_project, get_project
from assay.store.schema import documents, events, evidence, items, turns
from assay.store.workspace import Workspace
from assay.transfer import ImportReport, import_bundle, item_pipeline
from assay.transfer.item_pipeline import ItemPipeline
from assay.transfer.prepared import ITEM_GROUP
from tests.test_import_rows import HOTELS, TRAINS, bundle_items
from tests.test_jobs import wait_until

ITEMS = 260
"""Three groups of items: the first prepared by the import, the others after the hand-over
(by the second process, or by the import when it is idle)."""


def alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every item prepared by the import's own process."""
    monkeypatch.setattr(item_pipeline, "START_BYTES", 1 << 60)


def handed_over(monkeypatch: pytest.MonkeyPatch) -> list[ItemPipeline]:
    """Every file goes to a second process, which takes over after the first group of items
    (the import waits for it then); the pipelines that ran are listed."""
    monkeypatch.setattr(item_pipeline, "START_BYTES", 0)
    started: list[ItemPipeline] = []
    real_ready = ItemPipeline.ready
    real_start = ItemPipeline.start.__func__

    def start(cls: type[ItemPipeline], source: Any) -> ItemPipeline | None:
        pipeline = real_start(cls, source)
        started.append(pipeline)
        return pipeline

    asked: list[ItemPipeline] = []

    def ready(self: ItemPipeline) -> bool:
        asked.append(self)
        if asked.count(self) == 1:
            return False  # the import prepares the first group itself
        wait_until(lambda: real_ready(self) or self.state == "failed", "the process is ready")
        return bool(real_ready(self))

    monkeypatch.setattr(ItemPipeline, "start", classmethod(start))
    monkeypatch.setattr(ItemPipeline, "ready", ready)
    return started


def in_mode(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """``alone``: the import prepares every item itself; ``piped``: the second process does."""
    if mode == "piped":
        handed_over(monkeypatch)
    else:
        alone(monkeypatch)


def native_file(folder: Path, count: int) -> Path:
    """An Assay archive with two documents and ``count`` items of every shape (see
    ``test_import_rows.bundle_items``); one author name is first met late in the file."""
    given = bundle_items(count)
    given[200].author = "cyd"
    for item in given:  # the archive's statuses are the store's
        item.status = "accepted" if item.status == "approved" else item.status
        for change in item.status_history:
            change.status = "accepted"
    bundle = Bundle(
        project=ProjectInfo(name="archive"),
        documents=[
            DocumentRecord(ref="trains", name="trains.txt", data=TRAINS.encode()),
            DocumentRecord(ref="hotels", name="hotels.txt", data=HOTELS.encode()),
        ],
        items=given,
    )
    path = folder / "archive.zip"
    get_format("native").write(bundle, path)
    return path


def imported(ws: Workspace, name: str, path: Path, fmt: str = "native", **options: Any) -> Any:
    progress: list[int] = []

    def tick(stage: str, done: int, total: int | None) -> None:
        if stage == "items":
            progress.append(done)

    report = import_bundle(ws, name, get_format(fmt).stream(path), progress=tick, **options)
    return report, progress


def content(ws: Workspace, project: Project, report: ImportReport) -> list[Any]:
    """Everything stored for the project's items, by the file's item ids, without the
    database's own ids and the times of the import."""
    ref_of = {o.id: o.ref for o in report.outcomes if o.kind == "item" and o.id}
    with ws.engine.connect() as conn:
        names = dict(
            conn.execute(
                sa.select(documents.c.id, documents.c.name).where(
                    documents.c.project_id == project.id
                )
            ).all()
        )

        def named(value: Any) -> Any:  # document ids differ per project: compare names
            text = json.dumps(value, sort_keys=True, default=str)
            for doc_id, doc_name in names.items():
                text = text.replace(doc_id, doc_name)
            return json.loads(text)

        found: dict[str, Any] = {}
        rows = conn.execute(sa.select(items).where(items.c.project_id == project.id))
        for row in rows.mappings():
            item = dict(row)
            for key in ("id", "project_id", "created_at", "updated_at"):
                item.pop(key)
            turn_rows = conn.execute(
                sa.select(turns).where(turns.c.item_id == row["id"]).order_by(turns.c.ordinal)
            ).mappings()
            turns_found = []
            for turn in turn_rows:
                passages = conn.execute(
                    sa.select(evidence)
                    .where(evidence.c.turn_id == turn["id"])
                    .order_by(evidence.c.ordinal)
                ).mappings()
                turns_found.append(
                    {
                        **{k: v for k, v in turn.items() if k not in ("id", "item_id")},
                        "evidence": [
                            {k: v for k, v in p.items() if k not in ("id", "turn_id", "created_at")}
                            for p in passages
                        ],
                    }
                )
            history = conn.execute(
                sa.select(events.c.action, events.c.actor_id, events.c.before, events.c.after)
                .where(events.c.item_id == row["id"])
                .order_by(events.c.id)
            ).all()
            found[ref_of[row["id"]]] = named(
                {"item": item, "turns": turns_found, "events": [list(e) for e in history]}
            )
    return [found[ref] for ref in sorted(found)]


def outcomes(report: ImportReport) -> list[tuple[str, str, str, str]]:
    """The report without the ids the import chose."""
    return [(o.kind, o.ref, o.status, o.message) for o in report.outcomes]


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "not-shared"])
def test_a_second_process_stores_what_the_import_alone_stores(
    any_ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared: bool
) -> None:
    path = native_file(tmp_path, ITEMS)
    alone(monkeypatch)
    by_itself, progress = imported(any_ws, "alone", path)
    monkeypatch.undo()
    started = handed_over(monkeypatch)
    monkeypatch.setattr(item_pipeline, "SHARE", shared)
    piped, piped_progress = imported(any_ws, "piped", path)
    assert len(started) == 1 and started[0].state == "ended"  # it did take over
    assert started[0].process.poll() is not None  # and is gone
    # shared: the import, idle right after the hand-over, prepared the next group itself
    # (later ones as it happened to wait); not shared: the second process prepared them all
    unprepared = started[0].unprepared
    assert 1 <= unprepared <= 2 if shared else unprepared == 0
    assert outcomes(piped) == outcomes(by_itself)
    assert by_itself.count("imported", "item") == ITEMS
    expected = content(any_ws, get_project(any_ws, "alone"), by_itself)
    assert content(any_ws, get_project(any_ws, "piped"), piped) == expected
    # a group at a time, either way
    assert piped_progress == progress == [*range(ITEM_GROUP, ITEMS, ITEM_GROUP), ITEMS]


def bad_csv(folder: Path, bad_row: int, cell: str, rows: int = 250) -> Path:
    """Questions citing trains.txt; row ``bad_row`` (1-based) has ``cell`` as its passages."""
    path = folder / "questions.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["id", "query", "answer", "relevant"])
        for n in range(1, rows + 1):
            passage = json.dumps([{"doc": "trains.txt", "text": TRAINS[26:73]}])
            out.writerow(
                [f"q{n}", f"Question {n}?", f"Answer {n}.", cell if n == bad_row else passage]
            )
    return path


@pytest.fixture
def trains(any_ws: Workspace) -> Project:
    from assay.corpus.ingest import ingest_bytes

    project = create_project(any_ws, "rail")
    ingest_bytes(any_ws, project, "trains.txt", TRAINS.encode())
    return project


@pytest.mark.parametrize(
    ("cell", "error"),
    [
        ('[{"doc": "trains.txt", "text": ', "column 'relevant'"),  # the reader's error
        ('[{"doc": "trains.txt", "start": 0, "end": 9999}]', "outside the document"),
    ],
)
def test_a_bad_item_met_by_the_second_process_fails_the_import_as_it_would_alone(
    any_ws: Workspace,
    trains: Project,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cell: str,
    error: str,
) -> None:
    path = bad_csv(tmp_path, 230, cell)
    messages = []
    for mode in ("alone", "piped"):
        in_mode(monkeypatch, mode)
        with pytest.raises(InvalidInput) as caught:
            imported(any_ws, "rail", path, "csv")
        messages.append(str(caught.value))
        monkeypatch.undo()
        assert get_project(any_ws, "rail").importing_since is None
        with any_ws.engine.connect() as conn:  # undone whole: nothing of it stays
            assert conn.scalar(sa.select(sa.func.count()).select_from(items)) == 0
    assert messages[0] == messages[1]
    assert error in messages[1]
    if "line" in messages[1]:
        assert "line 231" in messages[1]  # the header is line 1


def test_a_bad_item_in_a_lenient_import_is_skipped_by_the_second_process(
    any_ws: Workspace, trains: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = bad_csv(tmp_path, 230, '[{"doc": "trains.txt", "start": 0, "end": 9999}]')
    handed_over(monkeypatch)
    report, _ = imported(any_ws, "rail", path, "csv", lenient=True)
    skipped = [o for o in report.outcomes if o.status == "skipped"]
    assert [(o.kind, o.ref) for o in skipped] == [("item", "q230")]
    assert "turn 1, evidence 1" in skipped[0].message
    assert report.count("imported", "item") == 249


def test_an_import_goes_on_alone_when_no_second_process_starts(
    any_ws: Workspace, trains: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = bad_csv(tmp_path, 0, "")
    monkeypatch.setattr(item_pipeline, "START_BYTES", 0)
    monkeypatch.setattr(item_pipeline, "BOOT", "import sys; sys.exit(3)")
    report, progress = imported(any_ws, "rail", path, "csv")
    assert report.count("imported", "item") == 250 and progress[-1] == 250


KILLED = """
import sys
from pathlib import Path
from assay.formats import get_format
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.transfer import import_bundle, item_pipeline
item_pipeline.START_BYTES = 0
ws = Workspace.open(Settings(home=Path(sys.argv[1]), database_url=sys.argv[2]))
import_bundle(ws, "rail", get_format("csv").stream(Path(sys.argv[3])))
"""


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_second_process_ends_when_the_import_is_killed(
    any_ws: Workspace, trains: Project, tmp_path: Path
) -> None:
    path = bad_csv(tmp_path, 0, "", rows=20000)
    url = any_ws.engine.url.render_as_string(hide_password=False)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    importing = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(KILLED), str(any_ws.settings.home), url, str(path)],
        env=env,
    )
    try:
        wait_until(lambda: bool(children(importing.pid)), "the import started its second process")
        second = children(importing.pid)[0]
        time.sleep(1.0)  # let it get going (not an assertion: any moment will do)
    finally:
        importing.send_signal(signal.SIGKILL)
        importing.wait()
    wait_until(lambda: not running(second), "the second process ended by itself")


def test_a_repeated_id_found_by_the_second_process_is_reported_as_alone(
    any_ws: Workspace, trains: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = bad_csv(tmp_path, 0, "")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[240] = lines[240].replace("q240,", "q7,", 1)  # row 240 repeats the id of row 7
    path.write_text("".join(lines), encoding="utf-8")
    reports = []
    for mode in ("alone", "piped"):
        in_mode(monkeypatch, mode)
        with pytest.raises(InvalidInput) as caught:
            imported(any_ws, "rail", path, "csv")
        reports.append(str(caught.value))
        report, _ = imported(any_ws, f"rail-{mode}", path, "csv", lenient=True)
        reports.append(outcomes(report))
        monkeypatch.undo()
    assert reports[0] == reports[2] and "line 241" in reports[0] and "line 8" in reports[0]
    assert reports[1] == reports[3]
    skipped = [o for o in reports[3] if o[2] == "skipped"]
    assert [o[0] for o in skipped] == ["record"]
