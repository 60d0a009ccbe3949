"""Workbench speed at scale: items list, item editor and autosave with 100k items, 1M chunks.

Run: python benchmarks/workbench.py [--home DIR] [--items N] [--docs N] [--chunks-per-doc N]
     [--requests N]

Seeding (timed separately) happens once per ``--home`` and is reused when the folder already
holds a seeded project. Documents are generated with a seeded RNG and ingested normally (default
chunking); a second chunking of one chunk per sentence (``--docs`` x ``--chunks-per-doc``
chunks) is imported with ``import_chunking``. Items are written with bulk inserts into the
same tables ``annotation.create_item`` writes, with evidence anchored exactly
(``document.text[start:end] == evidence.text``); a sample is re-read and checked afterwards.

Then every page and API call is timed in-process (FastAPI TestClient, so the figures are server
time plus a small client overhead) and p50/p95 are printed. Goals from the workbench issue:
list and editor p95 <= 150 ms, autosave p95 <= 50 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from fastapi.testclient import TestClient

from assay import open_workspace
from assay.corpus.chunkings import count_chunks, get_chunking, import_chunking
from assay.corpus.documents import get_document
from assay.corpus.ingest import ingest_bytes
from assay.errors import NotFound
from assay.gold.checks import check_item
from assay.gold.item_rows import search_text
from assay.gold.items import editable_copy, editable_json, get_item
from assay.people.actors import account_for
from assay.records import Project
from assay.store.projects import create_project, get_project
from assay.store.schema import documents, events, evidence, items, turns
from assay.store.workspace import Workspace
from assay.web import create_app

PROJECT = "bench"
WORDS = (
    "ferry timetable depot budget travel policy contract employee leave report annual figure "
    "maintenance vehicle safety audit customer ticket revenue schedule route pier winter night"
).split()
TYPES = ("fact_single", "summary", "reasoning", "unanswerable")
STATUSES = ("draft", "draft", "draft", "submitted", "accepted", "rejected")
AUTHORS = ("ana", "ben", "chris", "dana", "eli")


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12))).capitalize() + "."


def seed_documents(ws: Workspace, project: Project, docs: int, per_doc: int) -> None:
    rng = random.Random(7)
    spans: list[tuple[str, str, int, int]] = []
    for d in range(docs):
        parts = [sentence(rng) for _ in range(per_doc)]
        text = "\n".join(parts) + "\n"
        doc = ingest_bytes(
            ws, project, f"doc{d:05d}.txt", text.encode(), author=account_for(ws, "bench")
        )
        stored = get_document(ws, project, doc.id).text
        cursor = 0
        for n, part in enumerate(parts):
            start = stored.index(part, cursor)
            cursor = start + len(part)
            spans.append((f"{doc.id}#s{n}", doc.id, start, cursor))
        if (d + 1) % 100 == 0:
            print(f"  documents: {d + 1}/{docs}", flush=True)
    import_chunking(ws, project, "sentences", spans)


def seed_items(ws: Workspace, project: Project, count: int) -> None:
    author_ids = [account_for(ws, name) for name in AUTHORS]
    rng = random.Random(11)
    with ws.engine.connect() as conn:
        doc_rows = conn.execute(
            sa.select(documents.c.id, documents.c.text).where(documents.c.project_id == project.id)
        ).all()
        turn_id = conn.scalar(sa.select(sa.func.max(turns.c.id))) or 0
    texts = [(row.id, row.text) for row in doc_rows]
    start_time = datetime(2025, 1, 1, tzinfo=UTC)
    batch = 2000
    for first in range(0, count, batch):
        item_rows, turn_rows, ev_rows, event_rows = [], [], [], []
        for n in range(first, min(count, first + batch)):
            item_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            query_type = rng.choice(TYPES)
            created = start_time + timedelta(minutes=n)
            updated = created + timedelta(minutes=rng.randint(0, 500_000))
            query = f"Question {n}: " + sentence(rng)
            turn_id += 1
            evs = []
            for e in range(rng.randint(1, 4)):
                doc_id, text = rng.choice(texts)
                s = rng.randrange(0, max(1, len(text) - 200))
                label = "relevant" if query_type != "unanswerable" and e < 2 else "distracting"
                evs.append(
                    {
                        "turn_id": turn_id,
                        "ordinal": e,
                        "doc_id": doc_id,
                        "start": s,
                        "end": s + 120,
                        "text": text[s : s + 120],
                        "label": label,
                        "grade": None,
                        "group_no": e + 1 if label == "relevant" else 0,
                        "origin": "searched",
                        "anchor": "ok",
                        "author_id": author_ids[n % 5],
                        "created_at": created,
                    }
                )
            answer = sentence(rng)
            item_rows.append(
                {
                    "search_text": search_text("", [(query, answer)]),
                    "id": item_id,
                    "project_id": project.id,
                    "kind": "qa",
                    "status": rng.choice(STATUSES),
                    "origin": "human",
                    "query": query,
                    "query_type": query_type,
                    "turn_count": 1,
                    "evidence_count": len(evs),
                    "notes": "",
                    "extra": {},
                    "author_id": author_ids[n % 5],
                    "version": 1,
                    "created_at": created,
                    "updated_at": updated,
                }
            )
            turn_rows.append(
                {
                    "id": turn_id,
                    "item_id": item_id,
                    "ordinal": 0,
                    "query": query,
                    "rewrite": "",
                    "query_type": query_type,
                    "enrichments": {},
                    "answer": answer,
                    "alternatives": [],
                    "original_answer": "",
                    "generation": {},
                    "retrieved": [],
                }
            )
            ev_rows.extend(evs)
            event_rows.append(
                {
                    "project_id": project.id,
                    "item_id": item_id,
                    "actor_id": author_ids[n % 5],
                    "action": "create",
                    "before": None,
                    "after": {"seeded": True},
                    "at": created,
                }
            )
        with ws.engine.begin() as conn:
            conn.execute(items.insert(), item_rows)
            conn.execute(turns.insert(), turn_rows)
            conn.execute(evidence.insert(), ev_rows)
            conn.execute(events.insert(), event_rows)
        if (first + batch) % 20_000 == 0:
            print(f"  items: {first + batch}/{count}", flush=True)
    if ws.engine.dialect.name == "postgresql":  # turn ids were given: move the sequence on
        with ws.engine.begin() as conn:
            conn.execute(
                sa.text("SELECT setval(pg_get_serial_sequence('turns', 'id'), :n)"), {"n": turn_id}
            )


def check_sample(ws: Workspace, project: Project, ids: list[str]) -> None:
    for item_id in ids:
        item = get_item(ws, project, item_id)
        check_item(item, project)
        for ev in item.turns[0].evidence:
            text = get_document(ws, project, str(ev.doc_id)).text
            assert text[ev.start : ev.end] == ev.text, f"{item_id}: evidence not anchored"


def seed(ws: Workspace, args: argparse.Namespace) -> Project:
    try:
        project = get_project(ws, PROJECT)
        print(f"reusing the seeded project in {args.home}")
        return project
    except NotFound:
        pass
    project = create_project(ws, PROJECT, "en")
    began = time.perf_counter()
    seed_documents(ws, project, args.docs, args.chunks_per_doc)
    docs_s = time.perf_counter() - began
    chunks = count_chunks(ws, get_chunking(ws, project, "sentences"))
    print(f"seeded {args.docs} documents and {chunks} sentence chunks in {docs_s:.1f} s")
    began = time.perf_counter()
    seed_items(ws, project, args.items)
    print(f"seeded {args.items} items in {time.perf_counter() - began:.1f} s")
    return project


def timed(label: str, calls: list[Callable[[], Any]]) -> None:
    durations = []
    for call in calls:
        began = time.perf_counter()
        response = call()
        durations.append((time.perf_counter() - began) * 1000)
        assert response.status_code < 400, f"{label}: {response.status_code} {response.text[:200]}"
    durations.sort()
    p50 = statistics.median(durations)
    p95 = durations[int(len(durations) * 0.95) - 1]
    print(f"{label:<58} n={len(durations):<4} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", default="/tmp/assay-bench-workbench")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--chunks-per-doc", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    ws = open_workspace(Path(args.home))
    project = seed(ws, args)
    with ws.engine.connect() as conn:
        total = conn.scalar(sa.select(sa.func.count()).select_from(items)) or 0
        ids = list(conn.scalars(sa.select(items.c.id).order_by(items.c.id)))
    print(f"{total} items; timing {args.requests} requests per measurement")
    rng = random.Random(3)
    sample = rng.sample(ids, args.requests)
    check_sample(ws, project, sample[:20])

    client = TestClient(create_app(ws), base_url="http://127.0.0.1:8765")  # a host Assay answers
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    pages = max(1, total // 50)
    n = args.requests

    def get(url: str, **params: Any) -> Callable[[], Any]:
        return lambda: client.get(url, params=params)

    base = f"/projects/{PROJECT}/items"
    api = f"/api/projects/{PROJECT}/items"
    timed("list page, first page", [get(base) for _ in range(n)])
    timed(
        "list page, random page (deep), -updated",
        [get(base, page=rng.randint(1, pages)) for _ in range(n)],
    )
    timed(
        "list page, status+type filter, sort by question, deep",
        [
            get(base, status="draft", query_type="summary", sort="query", page=rng.randint(1, 80))
            for _ in range(n)
        ],
    )
    timed(
        "list page, author filter, sort -created, deep",
        [get(base, author="ben", sort="-created", page=rng.randint(1, 400)) for _ in range(n)],
    )
    timed(
        "list page, free-text filter",
        [get(base, text=rng.choice(WORDS) + " " + rng.choice(WORDS)) for _ in range(n)],
    )
    timed(
        "list API, filters, offset deep",
        [
            get(api, status="draft", sort="-updated", offset=rng.randint(0, 45_000))
            for _ in range(n)
        ],
    )
    timed(
        "editor page (opened from the list, with 'next')",
        [
            get(f"{base}/{item_id}", list="sort=-updated", pos=rng.randint(0, 99_000))
            for item_id in sample
        ],
    )
    timed("editor page (new item)", [get(f"{base}/new") for _ in range(n)])
    timed("item GET API", [get(f"{api}/{item_id}") for item_id in sample])

    versions = {item_id: get_item(ws, project, item_id).version for item_id in sample}
    inputs = {item_id: editable_copy(get_item(ws, project, item_id)) for item_id in sample}

    def save(item_id: str) -> Callable[[], Any]:
        def call() -> Any:
            data = editable_json(inputs[item_id])
            data["turns"][0]["answer"] += " (edited)"
            response = client.put(
                f"{api}/{item_id}", json={"version": versions[item_id], "item": data}
            )
            versions[item_id] += 1
            return response

        return call

    timed("autosave PUT (item with 1-4 evidence)", [save(item_id) for item_id in sample])
    ws.close()


if __name__ == "__main__":
    main()
