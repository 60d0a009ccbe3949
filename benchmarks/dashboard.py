"""The project dashboard at 100k items with a team's events: figures, JSON twin and page.

Run: python benchmarks/dashboard.py [--items N] [--docs N] [--rounds N] [--only sqlite|postgres]
     [--home DIR]

A project of N gold items (plus 5 % of them done twice as overlap copies) by 20 annotators
over 120 days is written with bulk inserts into the tables the app writes: each item has a
create event, one to three saves (each event carrying the item's JSON before and after, as
``gold.items`` stores it), a submit for 70 %, a reviewer's verdict (a ``reviews`` row and
a status event) for most of those; 10 % are LLM drafts with LLM-suggested evidence; a fifth of
the documents are cited by no item. PostgreSQL runs on a throwaway server on loopback (or
ASSAY_TEST_POSTGRES_URL).

Then, per database, in each round: ``review.dashboard.dashboard`` itself (the figures computed
afresh), a refresh with no change since the last one (``figure_cache.cached_dashboard``: the
change mark and the stored figures), the project's change mark alone, the JSON twin and the
page (in-process, FastAPI TestClient; both serve the cached figures), in an order that
alternates between rounds; min and median per measurement with the CPU time this process used
(on a shared machine the wall time mostly measures the others), the load average, and once
the time of each figure's queries. ``--items`` takes one count or several (``--items 2000``
for a quick run).
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
from datetime import timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from fastapi.testclient import TestClient
from import_autosave import fresh_database, postgres_server
from seeding import seed_documents

from assay.errors import NotFound
from assay.people.actors import account_ids
from assay.records import Project
from assay.review import dashboard as figures
from assay.review.dashboard import throughput, time_per_item
from assay.review.figure_cache import cached_dashboard, change_mark
from assay.store.db import utcnow
from assay.store.projects import create_project, get_project
from assay.store.review_schema import reviews
from assay.store.schema import documents, events, evidence, items, turns
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.web import create_app

TYPES = ("fact_single", "fact_single", "summary", "reasoning", "unanswerable")
WORDS = "ferry timetable depot budget travel policy contract leave report audit route pier".split()
BATCH = 2000


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


class Seeder:
    """Rows for the tables, written a batch at a time."""

    def __init__(self, ws: Workspace, project: Project, rng: random.Random) -> None:
        self.ws, self.project, self.rng = ws, project, rng
        names = [f"annotator{n:02d}" for n in range(20)] + ["reviewer"]
        with ws.engine.begin() as conn:
            ids = account_ids(conn, names)
            self.docs = list(
                conn.scalars(sa.select(documents.c.id).where(documents.c.project_id == project.id))
            )
            self.turn_id = conn.scalar(sa.select(sa.func.max(turns.c.id))) or 0
        self.people = [ids[n] for n in names[:-1]]
        self.reviewer = ids["reviewer"]
        self.cited = self.docs[: len(self.docs) * 4 // 5]  # the rest stay uncovered
        self.now = utcnow()
        self.rows: dict[str, list[dict[str, Any]]] = {
            "items": [], "turns": [], "evidence": [], "events": [], "reviews": []
        }  # fmt: skip

    def item(self, n: int, copy_of: str | None = None, author: int | None = None) -> str:
        rng = self.rng
        item_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        author = author if author is not None else self.people[n % len(self.people)]
        llm = copy_of is None and rng.random() < 0.1
        query_type = rng.choice(TYPES)
        started = self.now - timedelta(days=rng.uniform(0, 120))
        status = "draft"
        if rng.random() < 0.7:
            status = rng.choice(("submitted", "accepted", "accepted", "accepted", "rejected"))
        if copy_of is not None and status != "draft":
            status = "submitted"
        self.turn_id += 1
        passages = []
        for e in range(rng.randint(1, 3)):
            start = rng.randrange(0, 2000)
            passages.append({
                "turn_id": self.turn_id, "ordinal": e, "doc_id": rng.choice(self.cited),
                "start": start, "end": start + 120, "text": words(rng, 18), "label": "relevant",
                "grade": None, "group_no": e + 1,
                "origin": "llm-suggestion" if llm else "searched", "anchor": "ok",
                "author_id": author, "created_at": started,
            })  # fmt: skip
        query, answer = words(rng, 10) + "?", words(rng, 25)
        content = {
            "kind": "qa", "origin": "llm-suggestion" if llm else "human", "notes": "",
            "extra": {}, "turns": [{"query": query, "query_type": query_type, "answer": answer,
            "evidence": [{k: p[k] for k in ("doc_id", "start", "end", "text", "label")}
                         for p in passages]}],
        }  # fmt: skip
        at = started
        self.event(item_id, author, "create", at, None, content)
        for _ in range(rng.randint(1, 3)):
            at += timedelta(minutes=rng.expovariate(1 / 6))
            self.event(item_id, author, "save", at, content, content)
        if status != "draft":
            at += timedelta(minutes=rng.expovariate(1 / 4))
            self.event(item_id, author, "status", at, {"status": "draft"}, {"status": "submitted"})
        if status in ("accepted", "rejected"):
            at += timedelta(hours=rng.expovariate(1 / 20))
            self.event(item_id, self.reviewer, "status", at, None, {"status": status})
            verdict = "reject" if status == "rejected" else rng.choice(("accept", "accept_edited"))
            self.rows["reviews"].append({
                "project_id": self.project.id, "item_id": item_id, "reviewer_id": self.reviewer,
                "verdict": verdict, "reason": "", "submitted_version": 3, "changes": [], "at": at,
            })  # fmt: skip
        self.rows["items"].append({
            "id": item_id, "project_id": self.project.id, "kind": "qa", "status": status,
            "origin": content["origin"], "query": query, "query_type": query_type,
            "turn_count": 1, "evidence_count": len(passages), "notes": "", "extra": {},
            "author_id": author, "copy_of": copy_of, "version": 3, "search_text": "",
            "created_at": started, "updated_at": at,
        })  # fmt: skip
        self.rows["turns"].append({
            "id": self.turn_id, "item_id": item_id, "ordinal": 0, "query": query, "rewrite": "",
            "query_type": query_type, "enrichments": {}, "answer": answer, "alternatives": [],
            "original_answer": "", "generation": {}, "retrieved": [],
        })  # fmt: skip
        self.rows["evidence"].extend(passages)
        return item_id

    def event(
        self, item_id: str, actor: int, action: str, at: Any, before: Any, after: Any
    ) -> None:
        self.rows["events"].append({
            "project_id": self.project.id, "item_id": item_id, "actor_id": actor,
            "action": action, "before": before, "after": after, "at": min(at, self.now),
        })  # fmt: skip

    def flush(self) -> None:
        tables = {"items": items, "turns": turns, "evidence": evidence, "events": events,
                  "reviews": reviews}  # fmt: skip
        with self.ws.engine.begin() as conn:
            for name, table in tables.items():  # items before what refers to them
                if self.rows[name]:
                    conn.execute(table.insert(), self.rows[name])
                self.rows[name] = []

    def finish(self) -> None:
        self.flush()
        if self.ws.engine.dialect.name == "postgresql":  # turn ids were given
            with self.ws.engine.begin() as conn:
                conn.execute(
                    sa.text("SELECT setval(pg_get_serial_sequence('turns', 'id'), :n)"),
                    {"n": self.turn_id},
                )
                conn.exec_driver_sql("ANALYZE")


def seed(ws: Workspace, count: int, docs: int) -> Project:
    project = create_project(ws, "bench", "en")
    rng = random.Random(5)
    text = (words(rng, 400) + ". ") * 2
    seed_documents(ws.engine, project.id, ((f"doc-{n:05d}.txt", text) for n in range(docs)), 500)
    seeder = Seeder(ws, project, rng)
    for n in range(count):
        original = seeder.item(n)
        if n % 20 == 0:  # overlap: two annotators' copies
            for k in (1, 2):
                seeder.item(n, copy_of=original, author=seeder.people[(n + k) % 20])
        if len(seeder.rows["items"]) >= BATCH:
            seeder.flush()
    seeder.finish()
    return project


def timed(label: str, calls: list[float], cpu: list[float]) -> None:
    print(
        f"  {label:<34} min {min(calls):7.1f} ms   median {statistics.median(calls):7.1f} ms"
        f"   (CPU of this process: min {min(cpu):7.1f} ms)"
    )


def mark_only(ws: Workspace, project: Project) -> str:
    with ws.engine.connect() as conn:
        return change_mark(conn, project, utcnow().date().isoformat())


def measure(ws: Workspace, project: Project, rounds: int) -> None:
    client = TestClient(create_app(ws), base_url="http://127.0.0.1:8765")
    sides: dict[str, Callable[[], Any]] = {
        "dashboard() (the figures)": lambda: figures.dashboard(ws, project),
        "refresh, no change (cached)": lambda: cached_dashboard(ws, project),
        "change mark alone": lambda: mark_only(ws, project),
        "GET /api/projects/bench/dashboard": lambda: client.get(
            "/api/projects/bench/dashboard"
        ).raise_for_status(),
        "GET /projects/bench/dashboard": lambda: client.get(
            "/projects/bench/dashboard"
        ).raise_for_status(),
    }
    for call in sides.values():  # warm the caches once
        call()
    times: dict[str, list[float]] = {label: [] for label in sides}
    cpus: dict[str, list[float]] = {label: [] for label in sides}
    order = list(sides)
    for r in range(rounds):
        for label in order if r % 2 == 0 else reversed(order):
            began, cpu = time.perf_counter(), time.process_time()
            sides[label]()
            times[label].append((time.perf_counter() - began) * 1000)
            cpus[label].append((time.process_time() - cpu) * 1000)
    for label, calls in times.items():
        timed(label, calls, cpus[label])
    print(f"  load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    today = utcnow().date()
    parts: dict[str, Callable[[sa.Connection], Any]] = {
        "gold items by type/status": lambda c: figures._item_counts(c, project),
        "copies": lambda c: figures._copies(c, project),
        "coverage": lambda c: figures._coverage(c, project),
        "throughput, 28 days": lambda c: throughput(c, project, today, 28),
        "time per item, 28 days": lambda c: time_per_item(c, project, today, 28),
        "agreement per week": lambda c: figures._agreement(c, project, today),
        "LLM evidence": lambda c: figures._llm_drafts(c, project, {}),
    }
    with ws.engine.connect() as conn:
        for label, part in parts.items():
            began, cpu = time.perf_counter(), time.process_time()
            part(conn)
            wall, cpu = time.perf_counter() - began, time.process_time() - cpu
            print(f"    {label:<32} {wall * 1000:7.1f} ms   (CPU {cpu * 1000:6.1f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    parser.add_argument("--home", help="keep the SQLite workspace here and reuse it next time")
    args = parser.parse_args()
    if args.home and len(args.items) > 1:
        parser.error("--home holds one workspace: give one --items count with it")
    with postgres_server() as pg_url:
        for count in args.items:
            for kind in ("sqlite", "postgres"):
                if args.only not in (None, kind) or (kind == "postgres" and pg_url is None):
                    continue
                with tempfile.TemporaryDirectory() as tmp:
                    home = Path(args.home) if args.home and kind == "sqlite" else Path(tmp)
                    with fresh_database(kind, home, pg_url) as url:
                        ws = Workspace.open(Settings(home=home, database_url=url))
                        run(kind, ws, count, args)


def run(kind: str, ws: Workspace, count: int, args: argparse.Namespace) -> None:
    began = time.perf_counter()
    try:
        project = get_project(ws, "bench")
        print(f"{kind}: reusing the project seeded in {args.home}")
    except NotFound:
        project = seed(ws, count, args.docs)
    with ws.engine.connect() as conn:
        n_events = conn.scalar(sa.select(sa.func.count()).select_from(events))
        n_items = conn.scalar(sa.select(sa.func.count()).select_from(items))
    print(f"{kind}: {n_items} items (copies included), {n_events} events, "
          f"ready in {time.perf_counter() - began:.0f} s")  # fmt: skip
    measure(ws, project, args.rounds)
    ws.close()


if __name__ == "__main__":
    main()
