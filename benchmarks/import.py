"""Bulk import through ``assay import``: seconds and peak memory for 10k and 100k items.

The tasks are those of the import speed issue: each item has a question, an answer and 2–3
passages of about 520 characters cut from documents that were ingested beforehand (not
timed). The same items are written twice, as CSV (``relevant`` holds ``{"doc", "text"}``
passages) and as Assay's native zip (an ``items.jsonl`` whose evidence names its document,
no documents in the archive); neither carries offsets, so every passage is located in its
document, the work Label Studio's import does not do. Each import runs as ``assay import``
in its own process; its wall time, CPU seconds and peak resident memory (the largest sum over
the import's processes: a large import starts a second one) are printed. Every import goes
into a fresh workspace (SQLite) or a fresh database (PostgreSQL) holding only the documents.

``--before COMMIT`` (or ``--before-src PATH``) also runs the source tree of that commit; each
round runs every side once per database and format, alternating which side goes first.
Printed: every run, then min / median seconds and the largest peak memory per side, and the
load average before and after.

Label Studio: with ``--label-studio BIN`` (the ``label-studio`` command of its own virtual
environment, never Assay's) a throwaway Label Studio server on loopback is given the same
tasks as one JSON list through its import API (``POST /api/projects/{id}/import``), timed from
the request until every task is stored. Without it, the issue's figures are printed for
reference.

    python benchmarks/import.py [--items 10000,100000] [--rounds 1] [--docs 200]
        [--formats csv,native] [--only sqlite|postgres] [--before COMMIT | --before-src PATH]
        [--sides before,after] [--label-studio BIN] [--profile FILE]

``--profile FILE`` runs one CSV import of the first ``--items`` size on SQLite under cProfile
(this checkout) and writes the statistics to FILE (``python -m pstats FILE``).

PostgreSQL comes from ``ASSAY_TEST_POSTGRES_URL`` or a throwaway server on loopback, as in
import_autosave.py; without either, the PostgreSQL runs are skipped with a note.

Recorded on the shared 2-core development machine, 200 documents of 40,000 characters,
before = 6191251 (one item at a time, every passage's document read per item, the whole file
in memory), after = the batched import. At load 2.3–5.7, three alternating rounds, medians:

    10,000 items       wall s before → after   CPU s before → after   peak MB before → after
    SQLite csv         12.86 → 4.56            11.94 → 4.19           180 → 99
    SQLite native      12.79 → 4.43            11.72 → 3.99           146 → 99
    PostgreSQL csv     39.14 → 7.49            24.28 → 5.20           190 → 108
    PostgreSQL native  36.34 → 7.79            23.17 → 4.90           156 → 108

100,000 items, SQLite, CSV, at load 2.3: 48.5 s (CPU 40.0 s), peak 159 MB. Label Studio 1.23.2
(its own virtual environment, SQLite) right after, same tasks: 2.16 s for 10,000 and 20.2 s
for 100,000, close to the issue's 1.8 s and 16.6 s.

Earlier the same session at load 6–9 (wall times there mostly measure the queue for a core):
100,000 items before → after, SQLite CSV 558 s, 1,105 MB → 262 s (CPU 49.9 s), 158 MB; SQLite
native 494 s, 761 MB → 321 s (CPU 51.2 s), 158 MB; PostgreSQL CSV stopped after 1,544 s at
1,115 MB → 237 s (CPU 49.2 s), 167 MB; PostgreSQL native after 225 s (CPU 47.6 s), 168 MB.

The issue's goal, 100,000 items in 20 s, is not reached (48.5 s; memory is: 159–168 MB
against 500). What remains per item is reading and checking the record (CSV or JSON, the
evidence check), building its rows, SQLAlchemy's parameter processing of the bulk inserts,
the JSON copy of the item in its ``create`` event and SQLite's commits, each 10–25 % of the
time in a profile (``--profile``).

Then the import wrote less and converted less (longer batches while no other writer is
active, a 64 MiB page cache and 64 MB between checkpoints on SQLite, the create event's JSON
in one pass of the encoder; before = 8d73d0f). The machine was shared with several other
benchmarks (load 9–28, a 2-core machine), so wall seconds mostly measure the queue for a core
and CPU seconds say more. SQLite, three alternating rounds at 10,000 items, min / median wall,
median CPU: CSV 57.3 / 63.5 s, CPU 6.5 s → 55.5 / 56.3 s, CPU 6.7 s (CPU 9.1, 6.5, 6.5 →
7.0, 6.7, 5.7); native 56.5 / 69.1 s, CPU 6.8 s → 41.9 / 44.0 s, CPU 5.5 s; peak 100 → 166 MB
(the page cache). 100,000 items, CSV: three alternating rounds at load 6–15, before
703.7, 364.5, 211.2 s (CPU 66.4, 62.4, 64.3 s) → after 403.5, 219.9, 171.6 s (CPU 50.8, 55.4,
56.7 s): min / median 211.2 / 364.5 → 171.6 / 219.9 s, CPU median 64.3 → 55.4 s (−14 %),
peak 160 → 226 MB. PostgreSQL, one round at 10,000 items
(load 11–23): CSV CPU 8.8 → 8.1 s, native 10.0 → 8.4 s, same peak (109 MB); 100,000 items,
CSV, after only, at load 4.8: 144 s (CPU 55.3 s), peak 168 MB. Where the time
went before in a 100,000-item import at load 1–2 (53.6 s wall, 45.7 s CPU): 13.1 s in 391
commits; a 10,000-item import made 194k page writes, 116k page reads and 128 disk syncs,
after 77k, 24k and 11 (strace). What remains is Python per item: reading the record, the
evidence checks, building rows, SQLAlchemy's parameters and the JSON of the create event (about
2.4 kB, one event row per 4 kB page, most of the database's bytes).

Then the rows went to the driver directly (``assay.store.bulk``: one ``executemany`` per
table with prebuilt tuples, each value through its column type's bind processor, turn ids
taken beforehand instead of ``RETURNING``), empty JSON values skipped the encoder, the CSV
reader made one JSON decoder per file instead of one per cell and stopped splitting every
``\r\n`` line with the lone-carriage-return pattern, and batches commit every 2 s instead of
0.5 s while no other writer is active (before = dfa20fc). Under cProfile, 20,000 items, CSV,
SQLite: the items stage 31.9 → 18.5 s, of it the inserts 10.0 → 4.1 s, reading the CSV 5.8 →
3.0 s, commits 71 → 23. Three alternating rounds at 10,000 items while the machine was shared
(load 5–12, so wall seconds mostly measure the queue for a core), min / median wall, median
CPU, peak:

    10,000 items       wall min/median before → after     CPU s before → after   peak MB
    SQLite csv         10.65 / 14.72 → 7.69 / 12.24       5.83 → 4.72 (−19 %)    167 → 168
    SQLite native      16.77 / 19.71 → 13.32 / 21.75      5.93 → 5.12 (−14 %)    168 → 167
    PostgreSQL csv     18.95 / 24.89 → 17.71 / 26.37      7.89 → 6.06 (−23 %)    110 → 109
    PostgreSQL native  21.66 / 22.84 → 18.03 / 20.44      7.47 → 5.82 (−22 %)    110 → 109

(about 1.4 s of each CPU figure is starting Python and the CLI: a one-item import takes that).
100,000 items, one round each right after (load 5.9–10.3), before → after:

    100,000 items      wall s            CPU s                  peak MB
    SQLite csv         137.4 → 85.0      46.1 → 35.3 (−24 %)    226 → 227
    SQLite native      107.8 → 86.5      49.4 → 38.1 (−23 %)    227 → 227
    PostgreSQL csv     156.9 → 101.2     51.8 → 34.8 (−33 %)    169 → 168
    PostgreSQL native  137.7 → 110.9     46.9 → 39.3 (−16 %)    169 → 169

CPU seconds rise with the load too (the same "before" took 40.0 s CPU and 48.5 s wall at load
2.3); scaled by the CPU ratio, a quiet machine should take about 37 s wall for 100,000 items
on SQLite, short of the issue's 20 s; memory stays far under its 500 MB. Measured afterwards
on the quiet machine (load 0.6–1.2), one round, 100,000 items, after only: SQLite csv 33.7 s
(CPU 31.5 s, peak 229 MB), native 35.9 s (CPU 33.7 s, 231 MB); PostgreSQL csv 48.5 s (CPU
35.2 s, 170 MB), native 48.0 s (CPU 35.4 s, 170 MB). Label Studio took 20.2 s here.
Autosaves during a 20,000-item SQLite import (``import_autosave.py``, one round per side, load
3–7): p95 66.5 and 134.2 ms before, 87.6 and 123.0 ms after, 0 failed saves on either side.
What remains per item is Python spread thin: reading and checking the record, placing and
anchoring its passages (building ``Evidence`` records twice, a pydantic check), the create
event's JSON, and SQLite's own inserts; the 20 s goal needs less of each, or the work split
over processes.

Then the work was split over two processes (``assay.transfer.item_pipeline``; before =
283dbc3): from 512 KiB of items a second Python process reads the file again and prepares the
items (reading, checks, anchoring, rows, values converted for the driver, the create event's
JSON) while the import's process writes them; until it is ready (0.65 s) the import prepares
items itself. Per item, less on both sides: no id query for groups without UUID ids, one
moment per item (SQLite's dates formatted once), turn ids read once per batch. How the CPU
splits, 100,000 items, SQLite CSV, in one process (``time.process_time`` around each part, load
2–4): writing 13.1 s (``executemany`` 4.7 s, commits about 3 s, the rest reading the pipe,
the report and the journal), preparing 17.5 s (reading the CSV about 2.6 s, checking and
anchoring about 6.5 s, rows and the create event's JSON about 3.5 s, pickling about 0.9 s);
the same import in one process took 31.5 s CPU. The total stays the same, so the wall time
gains only where the second core is free, and the preparing side (17.5 s, plus 1.4 s to start
``assay`` itself) bounds it. First measured while two other helpers' benchmarks kept the
machine busy
(load 2–4.6, so the second process often had no core of its own), three alternating rounds,
min / median wall, median CPU, peak memory of all the import's processes:

    100,000 items      wall min / median before → after      CPU s before → after   peak MB
    SQLite csv         33.14 / 34.91 → 27.67 / 30.75           31.34 → 31.71          230 → 296
    SQLite native      32.62 / 37.06 → 25.01 / 34.43           30.03 → 31.79          231 → 297
    PostgreSQL csv     50.89 / 59.41 → 35.47 / 54.76           33.73 → 34.29          171 → 246
    PostgreSQL native  47.73 / 55.40 → 51.95 / 52.77           31.67 → 36.36          170 → 246

    10,000 items       wall min / median before → after      CPU s before → after   peak MB
    SQLite csv          4.75 /  4.85 →  4.75 /  5.62            4.20 →  4.79          171 → 226
    SQLite native       4.07 /  5.09 →  4.63 /  5.09            4.04 →  4.66          171 → 226
    PostgreSQL csv      6.81 /  8.54 →  5.75 /  6.89            4.54 →  5.34          110 → 177
    PostgreSQL native   5.94 /  6.92 →  7.01 /  7.83            4.57 →  5.43          111 → 179

Then the second process sent from a thread of its own with up to 8 groups waiting, so it goes
on preparing while the import commits (one round against the commit before, SQLite, load
1.1–1.6: csv 24.7 → 23.3 s, native 25.6 → 20.0 s). One round against 283dbc3 right after,
the machine nearly quiet (load 1.25–1.8, the import's own two processes included):

    100,000 items      wall s before → after   CPU s before → after   peak MB before → after
    SQLite csv         26.74 → 21.60           25.00 → 27.68          231 → 303
    SQLite native      30.06 → 20.40           28.17 → 28.80          230 → 301
    PostgreSQL csv     43.18 → 35.29           31.17 → 30.65          170 → 252
    PostgreSQL native  45.63 → 37.70           33.34 → 34.67          170 → 252

So SQLite is at the goal's edge (20.4–21.6 s for 20 s; Label Studio took 20.2 s here), and
PostgreSQL, whose server shares the two cores, is not (35–38 s). Memory stays far under 500 MB.

At 10,000 items the second process's start (about 0.6–0.9 s of CPU) is a tenth of the work;
on PostgreSQL the database server's own CPU shares the two cores too. The peak is the sum over
both processes (sampled from ``/proc``), well under the goal's 500 MB. Still to try for the
quiet 20 s: a leaner preparing side (the create event's JSON, 17 µs an item, and the
evidence built twice are the largest single parts) so that the two sides are even.

The lead's run after merging this with the session's other work (main at 6da2ea0), one round,
started right after the team benchmark (load 6.3 falling to 2.3): SQLite csv 25.20 s (CPU
32.3 s, peak 302 MB), native 21.12 s (CPU 30.0 s, 301 MB); PostgreSQL csv 35.75 s (CPU
31.4 s, 254 MB), native 36.25 s (CPU 32.0 s, 253 MB). The 20 s goal is still missed: by 1–5 s
on SQLite, by 16 s on PostgreSQL; memory is half the 500 MB allowed.

Then (before = 16aa50a): JSON columns by orjson (the create event's item 29 → 7 µs); a group of
items as one message, reported, journaled (one row per group) and counted as one; a 1 MiB pipe
(the sending thread had waited for the interpreter lock at every 64 KiB: 4.4 s of an import)
and 32 groups ahead; the two processes sharing the preparing (an idle import asks for the next
group unprepared and prepares it itself); ``COPY`` on PostgreSQL. Timed with both processes
(``time.process_time`` at exit, SQLite CSV): before, the second process 19–21 s of CPU and the
import 12–14 s, each waiting about 5 s for the other; after, 15 s and about 12 s. Three
alternating rounds on the quiet machine (load 1.3–2.2):

    100,000 items      wall min / median before → after      CPU median before → after  peak MB
    SQLite csv         26.70 / 27.15 → 15.42 / 17.42           35.6 → 26.7                303 → 295
    SQLite native      20.75 / 22.86 → 13.00 / 15.76           32.9 → 27.2                302 → 290
    PostgreSQL csv     33.90 / 42.05 → 24.76 / 26.83           38.2 → 23.9                253 → 243
    PostgreSQL native  38.45 / 39.71 → 25.09 / 25.30           37.1 → 24.3                254 → 243

The goal is met on SQLite (Label Studio took 20.2 s here). On PostgreSQL the import waits for
the server, which shares the two cores with both processes: its inserts, index entries and
foreign-key checks (``Connection.wait`` is half the writing process's time in a profile), and
pglz compressing every event's 2.4 kB copy of its item (50,000 such rows by ``COPY``: 3.0 s
compressed, 1.6–2.2 s with lz4, 1.3 s kept whole). Migration 0020 keeps events' JSON whole
in the row up to 8 kB; then, PostgreSQL only, three alternating rounds against 16aa50a (load
1.6–2.2): CSV 38.69 / 38.98 → 21.41 / 21.46 s (CPU 36.1 → 21.4 s), native 37.18 / 39.07 →
21.24 / 21.39 s (CPU 36.1 → 22.1 s), peak 253 → 243 MB: 1.4 s above the goal. 10,000 items,
three rounds, min / median: SQLite csv 3.21 / 3.25 → 2.79 / 2.93 s, native 3.06 / 3.35 →
2.64 / 2.69 s; PostgreSQL csv 4.58 / 4.93 → 3.31 / 3.67 s, native 4.52 / 4.62 → 3.25 /
3.38 s (about 1.4 s of each is starting Python).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from import_autosave import fresh_database, postgres_server
from import_speed import source_tree

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "bench"
PASSAGE_CHARS = 520
DOC_CHARS = 40_000
ISSUE_FIGURES = """\
the issue's figures (same kind of tasks, another machine):
  assay import csv      10k items 24.8 s    100k items 261 s, peak 1.1 GiB
  Label Studio import   10k items  1.8 s    100k items 16.6 s"""

SETUP = """
import sys
from pathlib import Path
from assay.corpus.ingest import ingest_paths
from assay.store.projects import create_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.search.indexes import sync_project
ws = Workspace.open(Settings(home=sys.argv[1], database_url=sys.argv[2]))
project = create_project(ws, sys.argv[3])
ingest_paths(ws, project, sorted(Path(sys.argv[4]).iterdir()))
sync_project(ws, project)
ws.close()
"""

COUNT = """
import sys
import sqlalchemy as sa
engine = sa.create_engine(sys.argv[1])
with engine.connect() as conn:
    print(conn.exec_driver_sql("SELECT count(*) FROM items").scalar(),
          conn.exec_driver_sql("SELECT count(*) FROM evidence WHERE anchor = 'ok'").scalar())
"""


# ---------------------------------------------------------------- the tasks


def vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    syllables = ["ka", "ro", "mi", "ten", "su", "lo", "var", "en", "di", "pa", "qu", "est"]
    words = {"".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(size)}
    return sorted(words)


def make_documents(folder: Path, count: int, rng: random.Random) -> dict[str, str]:
    """``count`` text files of about DOC_CHARS characters: ``{name: text}``."""
    words = vocabulary(rng)
    texts: dict[str, str] = {}
    for number in range(count):
        sentences: list[str] = []
        size = 0
        while size < DOC_CHARS:
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(6, 18)))
            sentences.append(sentence.capitalize() + ".")
            size += len(sentences[-1]) + 1
        paragraphs = [" ".join(sentences[i : i + 6]) for i in range(0, len(sentences), 6)]
        text = "\n\n".join(paragraphs) + "\n"
        name = f"doc{number:04d}.txt"
        (folder / name).write_text(text, encoding="utf-8")
        texts[name] = text
    return texts


def passage(text: str, rng: random.Random) -> str:
    """About PASSAGE_CHARS characters of ``text`` from a word start to a word end."""
    start = rng.randrange(0, len(text) - 2 * PASSAGE_CHARS)
    start = text.index(" ", start) + 1
    end = text.rindex(" ", start, start + PASSAGE_CHARS + 40)
    return text[start:end]


@dataclass(frozen=True)
class Task:
    id: str
    question: str
    answer: str
    passages: list[tuple[str, str]]
    """``(document name, passage text)``."""


def make_tasks(texts: dict[str, str], count: int, seed: int) -> Iterator[Task]:
    rng = random.Random(seed)
    names = sorted(texts)
    for number in range(count):
        cited = [rng.choice(names) for _ in range(rng.randint(2, 3))]
        yield Task(
            id=f"task-{number}",
            question=f"What does passage set {number} say about {rng.choice(names)[:-4]}?",
            answer=f"Answer {number}: " + passage(texts[cited[0]], rng)[:120],
            passages=[(name, passage(texts[name], rng)) for name in cited],
        )


def write_csv(tasks: Iterator[Task], path: Path) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["id", "query", "answer", "relevant"])
        for task in tasks:
            relevant = [{"doc": name, "text": text} for name, text in task.passages]
            out.writerow([task.id, task.question, task.answer, json.dumps(relevant)])


def write_native(tasks: Iterator[Task], path: Path) -> None:
    manifest = {"format": "assay", "version": 1, "project": {"name": PROJECT}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("manifest.json", json.dumps(manifest) + "\n")
        zf.writestr("documents.jsonl", "")
        zf.writestr("chunkings.jsonl", "")
        with zf.open("items.jsonl", "w", force_zip64=True) as raw:
            for task in tasks:
                turn = {
                    "query": task.question,
                    "answer": task.answer,
                    "evidence": [{"doc": name, "text": text} for name, text in task.passages],
                }
                line = {"id": task.id, "kind": "qa", "status": "draft", "turns": [turn]}
                raw.write((json.dumps(line) + "\n").encode("utf-8"))


def write_label_studio(tasks: Iterator[Task], path: Path) -> None:
    """The same tasks as Label Studio's import takes them: one JSON list of ``{"data"}``."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("[")
        for number, task in enumerate(tasks):
            data: dict[str, str] = {"id": task.id, "question": task.question}
            data["answer"] = task.answer
            for index, (name, text) in enumerate(task.passages, 1):
                data[f"doc_{index}"] = name
                data[f"passage_{index}"] = text
            handle.write(("," if number else "") + json.dumps({"data": data}))
        handle.write("]")


# ---------------------------------------------------------------- running imports


@dataclass(frozen=True)
class Files:
    documents: Path
    files: dict[tuple[str, int], Path]
    """``(format, items)`` → the file to import."""


def prepare(folder: Path, sizes: list[int], docs: int, label_studio: bool) -> Files:
    rng = random.Random(13)
    documents = folder / "documents"
    documents.mkdir()
    texts = make_documents(documents, docs, rng)
    files: dict[tuple[str, int], Path] = {}
    for items in sizes:
        files["csv", items] = folder / f"items-{items}.csv"
        write_csv(make_tasks(texts, items, items), files["csv", items])
        files["native", items] = folder / f"items-{items}.zip"
        write_native(make_tasks(texts, items, items), files["native", items])
        if label_studio:
            files["label-studio", items] = folder / f"tasks-{items}.json"
            write_label_studio(make_tasks(texts, items, items), files["label-studio", items])
    return Files(documents, files)


WRAPPER = """
import os, resource, subprocess, sys, threading, time
from pathlib import Path

def tree_rss(pid):
    # resident KiB of the process and every process below it (an import may start a second)
    total, todo = 0, [pid]
    while todo:
        here = todo.pop()
        try:
            status = Path(f"/proc/{here}/status").read_text()
            total += int(status.split("VmRSS:")[1].split()[0])
            for task in Path(f"/proc/{here}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):
            pass
    return total

started = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:])
peak = [0]
ended = threading.Event()
def sample():
    while not ended.wait(0.05):  # never reaps: wait4 below does
        peak[0] = max(peak[0], tree_rss(proc.pid))
watcher = threading.Thread(target=sample, daemon=True)
watcher.start()
_, status, usage = os.wait4(proc.pid, 0)
ended.set()
took = time.perf_counter() - started
code = os.waitstatus_to_exitcode(status)
cpu = usage.ru_utime + usage.ru_stime
peak_kib = max(peak[0], usage.ru_maxrss)
print(f"{took:.3f} {peak_kib / 1024:.1f} {cpu:.3f} {code}", file=sys.stderr)
sys.exit(code)
"""
"""Runs one command: wall seconds, peak memory (the largest sum of resident memory over the
process and its children, sampled every 50 ms, at least ``ru_maxrss``) and CPU seconds of it
and the children it waited for (``wait4``: an import's second process counts)."""


def measured(command: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Seconds, peak resident MB and CPU seconds of one process and its children (see
    :data:`WRAPPER`; CPU seconds say more than wall time on a loaded machine)."""
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, *command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    fields = last.split()
    if proc.returncode != 0 or len(fields) != 4:
        raise SystemExit(f"{' '.join(command[:6])} … failed:\n{proc.stderr[-3000:]}")
    return float(fields[0]), float(fields[1]), float(fields[2])


def one_import(
    src: Path, kind: str, fmt: str, items: int, files: Files, pg_url: str | None, profile: str = ""
) -> tuple[float, float, float]:
    """Seconds, peak MB and CPU seconds of one ``assay import`` of ``items`` items, run by
    ``src``."""
    home = Path(tempfile.mkdtemp(prefix="assay-import-"))
    env = {**os.environ, "PYTHONPATH": str(src), "ASSAY_HOME": str(home)}
    try:
        with fresh_database(kind, home, pg_url) as url:
            env["ASSAY_DATABASE_URL"] = "" if kind == "sqlite" else url
            setup = [sys.executable, "-c", SETUP, str(home), url, PROJECT, str(files.documents)]
            subprocess.run(setup, env=env, check=True)
            path = files.files[fmt, items]
            command = ["-m", "assay", "import", fmt, str(path), "-p", PROJECT, "--json"]
            if profile:
                command = ["-m", "cProfile", "-o", profile, *command]
            measures = measured([sys.executable, *command], env)
            counted = subprocess.run(
                [sys.executable, "-c", COUNT, url], env=env, capture_output=True, text=True
            ).stdout.split()
            stored, located = int(counted[0]), int(counted[1])
            assert stored == items, f"{fmt}: stored {stored} of {items} items"
            assert located >= 2 * items, f"{fmt}: only {located} passages located"
            return measures
    finally:
        shutil.rmtree(home, ignore_errors=True)


# ---------------------------------------------------------------- Label Studio


@contextmanager
def label_studio_server(binary: Path) -> Iterator[tuple[str, tuple[str, str]]]:
    """A throwaway Label Studio on loopback: ``(base URL, (user, password))``."""
    import httpx
    from import_autosave import free_port

    folder = Path(tempfile.mkdtemp(prefix="label-studio-"))
    port = free_port()
    env = {
        **os.environ,
        "LABEL_STUDIO_BASE_DATA_DIR": str(folder),
        "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "false",
        "LATEST_VERSION_CHECK": "false",
        "COLLECT_ANALYTICS": "false",
        "LABEL_STUDIO_USERNAME": "bench@example.org",
        "LABEL_STUDIO_PASSWORD": "bench-password-1",
    }
    env.pop("PYTHONPATH", None)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    with open(folder / "server.log", "w") as log:
        server = subprocess.Popen(
            [str(binary), "start", "--no-browser", "--port", str(port), "--host", "127.0.0.1"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            if server.poll() is not None:
                raise SystemExit(f"Label Studio stopped:\n{(folder / 'server.log').read_text()}")
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        else:
            raise SystemExit("Label Studio did not answer within 5 minutes")
        yield base, (env["LABEL_STUDIO_USERNAME"], env["LABEL_STUDIO_PASSWORD"])
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)


LABEL_CONFIG = """<View>
  <Text name="question" value="$question"/>
  <Text name="answer" value="$answer"/>
  <Text name="passage_1" value="$passage_1"/>
  <Text name="passage_2" value="$passage_2"/>
  <Choices name="ok" toName="question"><Choice value="yes"/><Choice value="no"/></Choices>
</View>"""


def label_studio_import(base: str, login: tuple[str, str], path: Path, items: int) -> float:
    """Seconds from sending the JSON list to Label Studio until it holds every task."""
    import httpx

    with httpx.Client(base_url=base, timeout=3600, follow_redirects=True) as client:
        client.get("/user/login/")
        csrf = client.cookies["csrftoken"]
        email, password = login
        signed_in = client.post(
            "/user/login/",
            data={"email": email, "password": password, "csrfmiddlewaretoken": csrf},
            headers={"Referer": f"{base}/user/login/"},
        )
        signed_in.raise_for_status()
        client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
        client.headers["Referer"] = f"{base}/"
        made = client.post(
            "/api/projects", json={"title": f"bench {items}", "label_config": LABEL_CONFIG}
        )
        made.raise_for_status()
        project = made.json()["id"]
        body = path.read_bytes()
        started = time.perf_counter()
        answer = client.post(
            f"/api/projects/{project}/import",
            content=body,
            headers={"Content-Type": "application/json"},
        )
        answer.raise_for_status()
        while True:  # the import may finish in the background
            count = client.get(f"/api/projects/{project}").json().get("task_number", 0)
            if count >= items:
                break
            time.sleep(0.2)
        took = time.perf_counter() - started
        client.delete(f"/api/projects/{project}")
    return took


# ---------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="10000,100000", help="comma-separated sizes")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--docs", type=int, default=200, help="documents ingested beforehand")
    parser.add_argument("--formats", default="csv,native")
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    parser.add_argument("--before", help="commit of a 'before' side")
    parser.add_argument("--before-src", type=Path, help="a 'src' folder to use as 'before'")
    parser.add_argument(
        "--sides", default="before,after", help="which sides to run (after: this checkout)"
    )
    parser.add_argument("--label-studio", type=Path, help="the label-studio command to compare")
    parser.add_argument("--profile", help="profile one CSV import on SQLite into this file")
    args = parser.parse_args()
    sizes = [int(size) for size in args.items.split(",")]
    formats = args.formats.split(",")
    folder = Path(tempfile.mkdtemp(prefix="assay-import-bench-"))
    try:
        files = prepare(folder, sizes, args.docs, args.label_studio is not None)
        if args.profile:
            took, peak, _ = one_import(
                ROOT / "src", "sqlite", "csv", sizes[0], files, None, args.profile
            )
            print(f"profiled import of {sizes[0]} items: {took:.2f} s, {peak:.0f} MB")
            return
        run_all(args, sizes, formats, files)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_all(args: argparse.Namespace, sizes: list[int], formats: list[str], files: Files) -> None:
    print(f"load average before: {os.getloadavg()}")
    old: AbstractContextManager[Path | None] = nullcontext(None)
    if args.before_src is not None:
        old = nullcontext(args.before_src.resolve())
    elif args.before:
        old = source_tree(args.before)
    with postgres_server() as pg_url, old as before:
        kinds = [k for k in ("sqlite", "postgres") if args.only in (None, k)]
        if "postgres" in kinds and pg_url is None:
            print("note: no PostgreSQL (set ASSAY_TEST_POSTGRES_URL or install it): skipped")
            kinds.remove("postgres")
        found = {"before": before, "after": ROOT / "src"}
        sides = {k: v for k, v in found.items() if v is not None and k in args.sides.split(",")}
        took: dict[tuple[str, str, str, int], list[tuple[float, float, float]]] = {}
        for number in range(1, args.rounds + 1):
            order = list(sides) if number % 2 else list(sides)[::-1]
            for items in sizes:
                for kind in kinds:
                    for fmt in formats:
                        for side in order:
                            run = one_import(sides[side], kind, fmt, items, files, pg_url)
                            took.setdefault((kind, fmt, side, items), []).append(run)
                            seconds, peak, cpu = run
                            print(
                                f"round {number} {kind:8} {fmt:6} {side:6} {items:>7} items "
                                f"{seconds:7.2f} s  cpu {cpu:7.2f} s  peak {peak:6.0f} MB  "
                                f"load {os.getloadavg()[0]:.2f}",
                                flush=True,
                            )
        for (kind, fmt, side, items), runs in took.items():
            seconds = [s for s, _, _ in runs]
            cpu = [c for _, _, c in runs]
            print(
                f"{kind:8} {fmt:6} {side:6} {items:>7} items  min {min(seconds):7.2f} / "
                f"median {statistics.median(seconds):7.2f} s  cpu median "
                f"{statistics.median(cpu):7.2f} s  peak {max(p for _, p, _ in runs):.0f} MB"
            )
    if args.label_studio is None:
        print(ISSUE_FIGURES)
    else:
        with label_studio_server(args.label_studio) as (base, login):
            for items in sizes:
                seconds = label_studio_import(
                    base, login, files.files["label-studio", items], items
                )
                print(f"Label Studio import {items:>7} items {seconds:7.2f} s", flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
