"""CPU and SQL statements per request of the pages a team's annotator opens, in-process.

Uses the workspace benchmarks/team_load.py seeded (``--home DIR/sqlite`` or a PostgreSQL
``--url``): signs in as ``annotator00`` (team mode), opens list page 1, then times each
request ``--repeat`` times with ``time.process_time`` (CPU of this process: the server's work
plus the TestClient's small share) and counts the SQL statements of one request:

  list page      GET /projects/bench/items?page=N (N cycles 1..5)
  editor page    GET an item's editor through a link of the list page (list context)
  editor search  GET /api/projects/bench/editor/search?q=... (three growing prefixes)

    python benchmarks/team_pages.py --home /tmp/pages-team/sqlite [--url URL] [--repeat 60]
    python benchmarks/team_pages.py --compare SRC_A SRC_B --rounds 3 -- [arguments above]

``--compare`` runs the script alternately with ``PYTHONPATH`` set to each source folder
(before and after a change), ``--rounds`` times, and prints min / median per side (CPU, and
wall-clock time, which holds the database server's share); ``--before-url``: the first side's
database (a copy without the migrations the second side added).

Figures (20k items, 20k sentence chunks over 200 documents, 20 annotators: team_load.py
``--items 20000 --docs 200 --chunks-per-doc 100 --annotators 20``), 2 cores shared with three
other sessions, ms per request, median of 3 rounds x 40 requests, before (dfa20fc, on a copy
of the database without migration 0021) -> after, sides alternating:

    SQLite (load 3.1-5.7)   CPU               wall              statements
    list page               20.8 -> 16.9      26.5 -> 19.1      13 -> 13
    editor page             24.5 -> 15.0      32.7 -> 16.9      28 -> 23
    editor search            8.3 -> 10.1       9.9 -> 10.4       9 ->  8
    PostgreSQL (load 6.5-7.4)
    list page               19.4 -> 20.5      70.1 -> 32.7      13 -> 13
    editor page             35.7 -> 19.7     114.7 -> 41.8      28 -> 23
    editor search           12.5 -> 12.8      18.5 -> 17.4       9 ->  8

The search's figures are within the noise (its one statement less is ~0.1 ms). On PostgreSQL
the wall time holds the server's work: the list rows' "needs review" EXISTS was a scan of all
the evidence per statement (6-10 ms here) until the partial index of migration 0021.
A static file through the same TestClient costs ~4 ms CPU, so about that much of every figure
is the client and the middleware. Of the list page's 13 statements and the editor's 23, 6 and
13 are the access layer's (session, project, role, item owner), read again by several checks.
Since the access check reads them in one statement for the whole request
(``assay.people.guard_read``), the list page is 5 statements and the editor page 8, the
access layer's share one each (``save_path.py --show`` lists an autosave's and item JSON's).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PASSWORD = "team-load-password-1"
LINK = re.compile(r'href="(/projects/[^"/]+/items/[0-9a-f-]{36}\?[^"]*)"')
QUERIES = ("ferr", "ferry time", "ferry timetable dep")


def measure(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    import sqlalchemy as sa
    from fastapi.testclient import TestClient

    from assay.store.settings import Settings
    from assay.store.workspace import Workspace
    from assay.web import create_app

    home = Path(args.home)
    url = args.url or f"sqlite:///{home / 'assay.db'}"
    ws = Workspace.open(Settings(home=home, database_url=url), create=False)
    statements = [0]

    @sa.event.listens_for(ws.engine, "before_cursor_execute")
    def count(*_: Any) -> None:
        statements[0] += 1

    client = TestClient(create_app(ws), base_url="http://127.0.0.1:8765")
    client.get("/login")
    client.headers["X-CSRF-Token"] = client.cookies.get("assay_csrf", "")
    reply = client.post("/api/session", json={"username": "annotator00", "password": PASSWORD})
    reply.raise_for_status()
    page = client.get("/projects/bench/items", params={"page": 1})
    page.raise_for_status()
    links = [link.replace("&amp;", "&") for link in LINK.findall(page.text)]
    if not links:
        raise SystemExit("the list page shows no editor links")

    def list_page(n: int) -> Any:
        return client.get("/projects/bench/items", params={"page": 1 + n % 5})

    def editor(n: int) -> Any:
        return client.get(links[n % len(links)])

    def search(n: int) -> Any:
        return client.get("/api/projects/bench/editor/search", params={"q": QUERIES[n % 3]})

    calls: dict[str, Callable[[int], Any]] = {
        "list page": list_page,
        "editor page": editor,
        "editor search": search,
    }
    figures: dict[str, dict[str, float]] = {}
    for label, call in calls.items():
        for n in range(5):  # warm: templates, catalogs, index readers
            call(n).raise_for_status()
        statements[0] = 0
        call(0).raise_for_status()
        counted = statements[0]
        began, clock = time.process_time(), time.perf_counter()
        for n in range(args.repeat):
            call(n).raise_for_status()
        cpu = (time.process_time() - began) / args.repeat * 1000
        wall = (time.perf_counter() - clock) / args.repeat * 1000
        figures[label] = {"ms": cpu, "wall": wall, "statements": counted}
    ws.close()
    return figures


def compare(args: argparse.Namespace, rest: list[str]) -> None:
    sides = args.compare
    seen: dict[str, dict[str, list[float]]] = {s: {} for s in sides}
    walls: dict[str, dict[str, list[float]]] = {s: {} for s in sides}
    counted: dict[str, dict[str, float]] = {s: {} for s in sides}
    print(f"load {os.getloadavg()}", flush=True)
    for round_ in range(args.rounds):
        for side in sides:
            env = {**os.environ, "PYTHONPATH": side}
            # the first side on its own database (one without a later migration), if given
            own = ["--url", args.before_url] if side == sides[0] and args.before_url else []
            out = subprocess.run(
                [sys.executable, __file__, "--json", *rest, *own],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            for label, figure in json.loads(out.strip().splitlines()[-1]).items():
                seen[side].setdefault(label, []).append(figure["ms"])
                walls[side].setdefault(label, []).append(figure["wall"])
                counted[side][label] = figure["statements"]
            print(f"round {round_ + 1} {side}: done, load {os.getloadavg()[0]:.1f}", flush=True)
    for label in seen[sides[0]]:
        for side in sides:
            values, wall = seen[side][label], walls[side][label]
            print(
                f"{label:14} {side:28} CPU ms/request min {min(values):6.2f} median "
                f"{statistics.median(values):6.2f}  wall median {statistics.median(wall):6.2f}"
                f"  statements {counted[side][label]:.0f}"
            )
    print(f"load {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", default="/tmp/pages-team/sqlite")
    parser.add_argument("--url", default="")
    parser.add_argument("--before-url", default="", help="--compare: the first side's URL")
    parser.add_argument("--repeat", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--compare", nargs=2, metavar="SRC")
    parser.add_argument("--rounds", type=int, default=3)
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if args.compare:
        compare(args, rest)
        return
    figures = measure(args)
    if args.json:
        print(json.dumps(figures))
        return
    for label, figure in figures.items():
        print(
            f"{label:14} {figure['ms']:6.2f} ms CPU {figure['wall']:6.2f} ms wall  "
            f"{figure['statements']:.0f} statements"
        )


if __name__ == "__main__":
    main()
