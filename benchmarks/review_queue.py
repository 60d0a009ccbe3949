"""The review queue at scale: reserving the next item, a verdict, "N of M reviewed" and the
queue's first page, in a project of many items, on SQLite and (given a URL) PostgreSQL.

Run: python benchmarks/review_queue.py [--items N] [--rounds N] [--postgres URL]

Each side gets a fresh workspace (SQLite in a temporary folder; PostgreSQL: a new database on
the server of ``--postgres``, dropped afterwards) with ``--items`` single-turn items, a third
of them submitted, written as an import writes them. Then, alternating the sides round by
round, a reviewer reserves the next item (``next_review``), accepts it (``review_item``),
and the queue page's reads are timed (``review_progress``, ``waiting_items`` of 100). Prints
min and median per operation and side, and the load average (the machine is shared).

Figures (30,000 items, 10,000 submitted, 20 rounds, load average 10 on two shared cores, so
medians are noisy; min / median in ms):

| | SQLite | PostgreSQL |
|---|---|---|
| next_review | 4.5 / 11.2 | 9.1 / 20.6 |
| review_item accept | 8.1 / 15.0 | 16.5 / 39.1 |
| review_progress | 10.2 / 17.3 | 10.5 / 23.8 |
| waiting_items(100) | 1.9 / 5.0 | 3.5 / 7.9 |

Before the queue's order went through the (project, status, updated_at) index (it sorted by
"assigned to me first" over every submitted item), next_review took 28.2 / 68.4 ms on SQLite
and 57.4 / 82.5 ms on PostgreSQL in the same run conditions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from assay.corpus.anchoring import DocumentTexts
from assay.gold.items import get_item, insert_items, new_item
from assay.people.accounts import create_account
from assay.records import Item, Project, Turn
from assay.review.review_queue import next_review, review_progress, waiting_items
from assay.review.reviews import review_item
from assay.store.projects import create_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace

BATCH = 1000


@contextmanager
def workspace(kind: str, postgres: str) -> Iterator[Workspace]:
    with tempfile.TemporaryDirectory() as home:
        if kind == "sqlite":
            ws = Workspace.open(Settings(home=Path(home) / "ws"))
            try:
                yield ws
            finally:
                ws.close()
            return
        admin = sa.create_engine(postgres, isolation_level="AUTOCOMMIT")
        name = f"assay_bench_{uuid.uuid4().hex[:8]}"
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        url = sa.make_url(postgres).set(database=name).render_as_string(hide_password=False)
        ws = Workspace.open(Settings(home=Path(home) / "ws", database_url=url))
        try:
            yield ws
        finally:
            ws.close()
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE "{name}" WITH (FORCE)')
            admin.dispose()


def seed(ws: Workspace, count: int) -> tuple[Project, int]:
    """``count`` items by one annotator, every third submitted; the reviewer's account id."""
    project = create_project(ws, "bench")
    author = create_account(ws, "ann", "a long password 1").id
    reviewer = create_account(ws, "rita", "a long password 2").id
    started = time.perf_counter()
    for first in range(0, count, BATCH):
        with ws.engine.begin() as conn:
            texts = DocumentTexts(conn, project.id)
            made = [
                new_item(
                    texts,
                    project,
                    Item(turns=[Turn(query=f"Question {n}?", answer="A.")]),
                    author=author,
                    named={},
                    status="submitted" if n % 3 == 0 else "draft",
                    item_id=str(uuid.uuid4()),
                    keep_history=False,
                )
                for n in range(first, min(count, first + BATCH))
            ]
            insert_items(conn, project, made)
    print(f"  seeded {count:,} items in {time.perf_counter() - started:.1f} s")
    return project, reviewer


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=30_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--postgres", default=os.environ.get("ASSAY_TEST_POSTGRES_URL", ""))
    args = parser.parse_args()
    sides = ["sqlite"] + (["postgres"] if args.postgres else [])
    with ExitStack() as stack:
        opened: dict[str, tuple[Workspace, Project, int]] = {}
        for side in sides:
            print(f"{side}:")
            ws = stack.enter_context(workspace(side, args.postgres))
            opened[side] = (ws, *seed(ws, args.items))
        figures: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for side in sides:  # alternate the sides every round
                for name, ms in one_round(*opened[side]):
                    figures.setdefault((side, name), []).append(ms)
        print(f"\n{args.items:,} items ({(args.items + 2) // 3:,} submitted), {args.rounds} rounds")
        for (side, name), values in figures.items():
            print(
                f"  {side:9} {name:20} min {min(values):7.2f} ms  median "
                f"{statistics.median(values):7.2f} ms"
            )
        print(f"load average (1, 5, 15 min): {os.getloadavg()}")


def one_round(ws: Workspace, project: Project, reviewer: int) -> list[tuple[str, float]]:
    """Reserve the next item and accept it, then read the queue page's figures."""
    ms_next, item_id = timed(lambda: next_review(ws, project, reviewer, include_own=False))
    version = get_item(ws, project, item_id).version
    ms_accept, _ = timed(
        lambda: review_item(ws, project, item_id, "accept", version, reviewer=reviewer)
    )
    ms_progress, _ = timed(lambda: review_progress(ws, project, reviewer))
    ms_waiting, _ = timed(lambda: waiting_items(ws, project, limit=100))
    return [
        ("next_review", ms_next),
        ("review_item accept", ms_accept),
        ("review_progress", ms_progress),
        ("waiting_items(100)", ms_waiting),
    ]


if __name__ == "__main__":
    main()
