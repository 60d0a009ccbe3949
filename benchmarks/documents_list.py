"""One page of the documents list (50 rows) with its chunk and "used by" counts, at scale.

Run: python benchmarks/documents_list.py [--docs N] [--chars N] [--items N] [--rounds N]
     [--postgres URL]

Seeds a project of ``--docs`` documents of ``--chars`` characters each (bulk inserts), ten
chunks each under the default chunking, and ``--items`` items citing four random documents
each. Then times one page as the web asks for it, three ways, alternating in each of
``--rounds`` rounds:

- ``grouped``: :func:`assay.corpus.documents.list_documents` as it is: the page, then one
  grouped query for the chunk counts and one for the citing items of its 50 documents;
- ``per-row``: the page, then two counting queries per row (what the grouped queries replace);
- ``no counts``: the page query alone (the list before the new columns).

Prints min/median per way in ms and the load average.

Figures (5000 documents x 20,000 characters, 300 items, 7 rounds, 2 shared cores): SQLite
(load 13) grouped 2.7 / 11.4 ms min/median, per-row 47.7 / 76.3 ms, no counts 0.9 / 1.3 ms;
PostgreSQL (load 14.5) grouped 14.5 / 28.5 ms, per-row 124 / 615 ms, no counts 4.4 / 17.7 ms.
``length(text)`` for the characters column costs little next to the counts (it is in "no
counts"); the text itself never leaves the database.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa

from assay.corpus.chunkings import get_chunking
from assay.corpus.documents import list_documents
from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item
from assay.people.actors import account_for
from assay.records import Evidence, Item, Project, Turn
from assay.store.db import utcnow
from assay.store.projects import create_project
from assay.store.schema import chunks, documents, evidence, turns
from assay.store.settings import Settings
from assay.store.workspace import Workspace

PAGE = 50


def seed(ws: Workspace, docs: int, chars: int, n_items: int) -> Project:
    project = create_project(ws, "bench")
    ingest_bytes(ws, project, "first.txt", b"A first document.")  # creates the default chunking
    chunking = get_chunking(ws, project, None)
    author = account_for(ws, "bench")
    words = "ferry harbour ticket night pier timetable bike refund hotel museum ".split()
    rng = random.Random(7)
    ids: list[str] = []
    now = utcnow()
    for first in range(0, docs, 200):
        rows, chunk_rows = [], []
        for n in range(first, min(docs, first + 200)):
            text = " ".join(rng.choice(words) for _ in range(chars // 7))[:chars]
            doc_id = str(uuid.uuid4())
            ids.append(doc_id)
            rows.append(
                {
                    "id": doc_id,
                    "project_id": project.id,
                    "name": f"doc-{n:06d}.txt",
                    "media_type": "text/plain",
                    "size": len(text),
                    "sha256": hashlib.sha256(text.encode()).hexdigest(),
                    "text": text,
                    "parse_info": {"parser": "text", "warnings": []},
                    "notes": "",
                    "metadata": {},
                    "author_id": author,
                    "created_at": now,
                    "updated_at": now,
                }
            )
            step = max(1, len(text) // 10)
            chunk_rows += [
                {
                    "chunking_id": chunking.id,
                    "chunk_id": f"{doc_id}#{k}",
                    "doc_id": doc_id,
                    "ordinal": k,
                    "start": k * step,
                    "end": min(len(text), (k + 1) * step),
                }
                for k in range(10)
            ]
        with ws.engine.begin() as conn:
            conn.execute(documents.insert(), rows)
            conn.execute(chunks.insert(), chunk_rows)
    for n in range(n_items):
        cited = [Evidence(doc_id=d, start=0, end=5) for d in rng.sample(ids[:500], 4)]
        create_item(ws, project, Item(turns=[Turn(query=f"question {n}", evidence=cited)]))
    return project


def per_row(ws: Workspace, project: Project) -> None:
    page = list_documents(ws, project, offset=0, limit=PAGE)
    with ws.engine.connect() as conn:
        for doc in page:
            conn.scalar(sa.select(sa.func.count()).where(chunks.c.doc_id == doc.id))
            conn.scalar(
                sa.select(sa.func.count(sa.distinct(turns.c.item_id)))
                .join(evidence, evidence.c.turn_id == turns.c.id)
                .where(evidence.c.doc_id == doc.id)
            )


def no_counts(ws: Workspace, project: Project) -> None:
    query = (
        sa.select(documents.c.id, documents.c.name, sa.func.length(documents.c.text))
        .where(documents.c.project_id == project.id)
        .order_by(documents.c.name)
        .limit(PAGE)
    )
    with ws.engine.connect() as conn:
        conn.execute(query).all()


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def run(label: str, settings: Settings, args: argparse.Namespace) -> None:
    ws = Workspace.open(settings)
    try:
        started = time.perf_counter()
        project = seed(ws, args.docs, args.chars, args.items)
        if ws.engine.dialect.name == "postgresql":  # what autovacuum does soon after a bulk load
            with ws.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(sa.text("ANALYZE"))
        print(f"{label}: seeded {args.docs} documents x {args.chars} chars, "
              f"{args.items} items in {time.perf_counter() - started:.0f} s")  # fmt: skip
        ways: dict[str, Callable[[], object]] = {
            "grouped": lambda: list_documents(ws, project, offset=0, limit=PAGE),
            "per-row": lambda: per_row(ws, project),
            "no counts": lambda: no_counts(ws, project),
        }
        for fn in ways.values():
            fn()  # warm up
        times: dict[str, list[float]] = {name: [] for name in ways}
        for round_no in range(args.rounds):
            order = list(ways) if round_no % 2 == 0 else list(reversed(ways))
            for name in order:
                times[name].append(timed(ways[name]))
        for name, values in times.items():
            print(f"  {name:10s} min {min(values):7.2f} ms  "
                  f"median {statistics.median(values):7.2f} ms")  # fmt: skip
        print(f"  load average {os.getloadavg()[0]:.1f}")
    finally:
        ws.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--chars", type=int, default=20000)
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--postgres", default="", help="a PostgreSQL URL: also run there")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        run("sqlite", Settings(home=Path(home) / "sqlite"), args)
        if args.postgres:
            pg = Settings(home=Path(home) / "pg", database_url=args.postgres)
            run("postgresql", pg, args)


if __name__ == "__main__":
    main()
