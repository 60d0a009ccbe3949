"""An annotator's own items list when assignments count as ownership, at scale.

Run: python benchmarks/own_list.py [--home DIR] [--items N] [--tasks N] [--pool N]
     [--rounds N] [--postgres URL]

Seeds a project of ``--items`` items by five authors (bulk inserts of item rows only: the list
reads no turns), gives one annotator ``--tasks`` annotate tasks on items others wrote, and
puts ``--pool`` tasks in the shared pool (the annotator holds 20 of them). Then times one
page of that annotator's list as the web asks for it (``list_items(author_id=...,
copies="include")``: what they wrote or were assigned, newest change first) at offset 0 and
500, counted exactly, counted as the web page counts (up to 1,000 past the page) and not
counted, against the list of what they wrote only (``author_id = X``, the list before
assignments), the two sides alternating in each of ``--rounds`` rounds; then a lead's list
(gold items only) in the three ways. Prints min/median per case in ms, and the load average.
``--home``: seed once into that folder and reuse it on later runs.

Figures (100k items, 2000 tasks, 2 cores, shared machine). Before (one ``author = X OR id IN
(listed ids)`` query, the tasks found by ``account = X OR holder = X``): SQLite (load 9-11,
no pool) page 18-30 ms (written only: 0.6-3 ms), counted 52-69 ms; PostgreSQL (load 5.5)
16-18 ms, counted 64-74 ms. Now (two parts merged page by page, assigned items counted from
the assignments, migration 0014), against the code before on the same seeded home, sides
alternating (a scratch harness, 5 rounds, with the 50k pool): SQLite (load 2.8) a page as the
web counts it 27.2 -> 16.6 ms median at offset 0 and 33.0 -> 19.0 ms at 500, not counted
17.3 -> 13.0 and 22.1 -> 14.8 ms, a lead's page 8.4 -> 3.6 ms; PostgreSQL (load 10) 257 ->
80 ms and 210 -> 67 ms, not counted 65 -> 55 ms, a lead's page 57 -> 14 ms. The held pool
tasks of the annotator (20 of 50k) are found in 0.06 ms with the 0014 index and 15-56 ms
without; the lookup before read every annotate task of the project (41-77 ms at load 12).
What remains is the assigned part: its items are read by id, about 3 us each on SQLite (a
page 10-13 ms with 2000 tasks), against 0.5 ms for the written part.

Assigned part walked (``gold.item_lists.walked_ids``: the first page of an unfiltered list sorted by
last change or creation takes the first assigned ids met in the project's (project, key, id)
index, at most 4 index entries a task and 64 a row of the page, no item rows; deeper pages
and filtered lists read by id). 100k items, 2000 tasks, no pool, load 2.8-3.7, statement
times of one uncounted page, new and old code on the same seeded homes: SQLite first page
7.0-8.3 ms in all (walk 2.3-2.5 ms + merge 1.3-2.0 ms) against 11.4-13.4 ms (the assigned
part by id 7.9-10.1 ms); PostgreSQL 8.8-9.9 ms (walk 1.8-2.0 ms + merge 1.7 ms) against
15.4-18.7 ms (by id 10.1-12.5 ms). The page at offset 500 is read by id as before (12.4-17
ms); the tasks are now counted (0.3-0.6 ms, was a one-row probe) to bound the walk. The same
page takes the same statements for 13 or 40 tasks (tests/test_own_list_walk.py).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from assay.errors import NotFound
from assay.gold.item_lists import list_items
from assay.people.actors import account_for
from assay.records import Project
from assay.store.db import utcnow
from assay.store.projects import create_project, get_project
from assay.store.review_schema import assignments
from assay.store.schema import items
from assay.store.settings import Settings
from assay.store.workspace import Workspace

AUTHORS = ("ana", "ben", "chris", "dana", "eli")


def seed(ws: Workspace, n_items: int, n_tasks: int, n_pool: int) -> tuple[Project, int]:
    project = create_project(ws, "bench")
    authors = [account_for(ws, name) for name in AUTHORS]
    rng = random.Random(7)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows: list[dict[str, Any]] = []
    ids = []
    for n in range(n_items):
        created = start + timedelta(minutes=n)
        item_id = str(uuid.UUID(int=rng.getrandbits(128)))
        ids.append((item_id, authors[n % 5]))
        rows.append(
            {
                "id": item_id, "project_id": project.id, "kind": "qa", "status": "draft",
                "origin": "human", "query": f"Question {n}?", "query_type": "fact_single",
                "turn_count": 1, "evidence_count": 0, "notes": "", "extra": {},
                "author_id": authors[n % 5], "version": 1, "search_text": f"question {n}",
                "created_at": created,
                "updated_at": created + timedelta(minutes=rng.randint(0, 500_000)),
            }
        )  # fmt: skip
    with ws.engine.begin() as conn:
        for at in range(0, len(rows), 5000):
            conn.execute(items.insert(), rows[at : at + 5000])
        annotator = authors[0]
        others = [item_id for item_id, author in ids if author != annotator]
        now = utcnow()
        queue = rng.sample(others, n_tasks)
        pool = rng.sample(others, n_pool)
        tasks = [
            {
                "project_id": project.id, "item_id": item_id, "task": "annotate",
                "account_id": annotator if k < n_tasks else None, "state": "open",
                "position": k + 1, "reason": "", "locked_until": None, "assigned_by": annotator,
                # the annotator holds the first 20 pool tasks; nobody holds the others
                "holder_id": annotator if n_tasks <= k < n_tasks + 20 else None,
                "created_at": now, "updated_at": now, "done_at": None,
            }
            for k, item_id in enumerate(queue + pool)
        ]  # fmt: skip
        for at in range(0, len(tasks), 5000):
            conn.execute(assignments.insert(), tasks[at : at + 5000])
    if ws.engine.dialect.name == "postgresql":  # what autovacuum does soon after a bulk load
        with ws.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("ANALYZE items")
            conn.exec_driver_sql("ANALYZE assignments")
    return project, annotator


def written_only(
    ws: Workspace, project: Project, author: int, offset: int, count: bool
) -> tuple[int, list[str]]:
    """The list before assignments counted: the author's own rows, newest change first."""
    where = [items.c.project_id == project.id, items.c.author_id == author]
    with ws.engine.connect() as conn:
        total = conn.scalar(sa.select(sa.func.count()).where(*where)) if count else 0
        page = conn.scalars(
            sa.select(items.c.id)
            .where(*where)
            .order_by(items.c.updated_at.desc(), items.c.id.desc())
            .offset(offset)
            .limit(50)
        ).all()
    return int(total or 0), list(page)


def modes(offset: int) -> dict[str, dict[str, Any]]:
    """How a page counts: exactly, up to 1,000 rows past the page (the web list), or not."""
    return {
        "exact": {"count": True},
        "bounded": {"count_limit": offset + 50 + 1000},
        "none": {"count": False},
    }


def timed(call: Callable[[], Any]) -> float:
    began = time.perf_counter()
    call()
    return (time.perf_counter() - began) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--tasks", type=int, default=2_000)
    parser.add_argument("--pool", type=int, default=50_000, help="pool tasks (20 held)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--postgres", default="", help="a PostgreSQL URL instead of SQLite")
    parser.add_argument("--home", type=Path, default=None, help="seed once here, then reuse")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        if args.postgres:
            os.environ["ASSAY_DATABASE_URL"] = args.postgres
        ws = Workspace.open(Settings(home=args.home or Path(scratch)), create=True)
        try:
            project = get_project(ws, "bench")
            annotator = account_for(ws, AUTHORS[0])
        except NotFound:
            began = time.perf_counter()
            project, annotator = seed(ws, args.items, args.tasks, args.pool)
            took = time.perf_counter() - began
            print(f"seeded {args.items} items, {args.tasks} + {args.pool} tasks in {took:.1f} s")
        print(f"database: {ws.engine.dialect.name}")
        for offset in (0, 500):
            for mode, counting in modes(offset).items():
                sides: dict[str, list[float]] = {"written only": [], "written or assigned": []}
                counts = counting.get("count", True)  # written only: exactly, or not at all
                before = partial(written_only, ws, project, annotator, offset, counts)
                after = partial(  # as the web asks: their own copies are on their list
                    list_items, ws, project, author_id=annotator, copies="include",
                    offset=offset, **counting,
                )  # fmt: skip
                for _ in range(args.rounds):
                    sides["written only"].append(timed(before))
                    sides["written or assigned"].append(timed(after))
                for name, times in sides.items():
                    print(
                        f"offset {offset:>3} count {mode:<8} {name:<20} "
                        f"min {min(times):7.1f} ms  median {statistics.median(times):7.1f} ms"
                    )
        total, _ = list_items(ws, project, author_id=annotator, copies="include", limit=1)
        print(f"the annotator's list holds {total} items")
        lead: dict[str, list[float]] = {mode: [] for mode in modes(0)}
        for _ in range(args.rounds):
            for mode, counting in modes(0).items():
                lead[mode].append(timed(partial(list_items, ws, project, **counting)))
        for mode, times in lead.items():
            print(
                f"a lead's list (gold items), count {mode:<8} "
                f"min {min(times):7.1f} ms  median {statistics.median(times):7.1f} ms"
            )
        print("load average (1, 5, 15 min):", " ".join(f"{x:.2f}" for x in os.getloadavg()))
        ws.close()


if __name__ == "__main__":
    main()
