"""Agreement over 10k items done by 3 annotators each: the time of ``agreement_report``.

Seeds a project (40 ingested documents under a 300-character chunking, ``--items``
originals, each with ``--annotators`` handed-in copies whose query type, answer, passages
and groups differ a little, a third of the originals adjudicated), written in bulk through
``gold.items.new_item`` / ``insert_items`` with ``copy_of`` set as
``review.copies.copy_item`` sets it. Then times the report as ``assay agreement`` computes
it, passages by characters and as chunk ids, alternating the two in each round, and prints
min / median per side with the load average.

    python benchmarks/agreement.py [--items 10000] [--annotators 3] [--rounds 3]

The workspace is a temporary SQLite file unless ASSAY_DATABASE_URL names a database
(PostgreSQL).

Recorded (2 cores shared with other work, load 8-10, 3 rounds): SQLite min / median 10.1 /
13.4 s by characters, 11.1 / 13.5 s as chunk ids; PostgreSQL 16.6 / 17.4 s and 15.4 /
17.4 s. Before each version was prepared once and each pair compared once for all its
tables (same data, load 9-13): 18-28 s on SQLite.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from assay.corpus.anchoring import DocumentTexts
from assay.gold.items import NewItem, new_item
from assay.records import Item, Project, Turn

WORDS = (
    "hotel train leave policy refund night class euro employee travel contract report year "
    "budget meeting station ticket service customer data protection office"
).split()
TYPES = ["fact_single", "summary", "reasoning", "unanswerable"]
BATCH = 500


def rows(
    texts: DocumentTexts,
    project: Project,
    named: dict[str, int],
    item: Item,
    author: int,
    copy_of: str | None,
) -> NewItem:
    """An original's rows (a draft), or a handed-in copy's with ``copy_of`` as
    ``copy_item`` sets it; every row names the column (one insert statement takes its
    columns from the first row)."""
    status = "draft" if copy_of is None else "submitted"
    made = new_item(
        texts, project, item, author=author, named=named, status=status,
        item_id=str(uuid.uuid4()), keep_history=False,
    )  # fmt: skip
    made.row["copy_of"] = copy_of
    return made


def seed(home: Path, n_items: int, n_annotators: int) -> None:
    from assay.corpus.chunkings import create_chunking
    from assay.corpus.ingest import ingest_bytes
    from assay.gold.items import insert_items, save_item
    from assay.people.accounts import create_account
    from assay.people.actors import account_ids
    from assay.records import Evidence
    from assay.store.projects import create_project
    from assay.store.settings import Settings
    from assay.store.workspace import Workspace

    ws = Workspace.open(Settings(home=home))
    project = create_project(ws, "bench")
    create_chunking(ws, project, "fixed", "recursive", {"max_length": 300})
    rng = random.Random(14)
    docs = []
    for d in range(40):
        text = " ".join(rng.choice(WORDS) for _ in range(600)) + "\n"
        docs.append(ingest_bytes(ws, project, f"doc{d}.txt", text.encode()))
    names = [f"annotator{a}" for a in range(n_annotators)]
    who = {n: create_account(ws, n, f"a long password of {n}").id for n in names}

    def passage(group: int) -> Evidence:
        doc = rng.choice(docs)
        start = rng.randrange(0, len(doc.text) - 400)
        end = start + rng.randrange(80, 400)
        return Evidence(doc_id=doc.id, start=start, end=end, text=doc.text[start:end], group=group)

    for offset in range(0, n_items, BATCH):
        count = min(BATCH, n_items - offset)
        with ws.engine.begin() as conn:
            texts = DocumentTexts(conn, project.id)
            named = account_ids(conn, [])

            made, golds = [], []
            for _ in range(count):
                truth = rng.choice(TYPES)
                passages = [passage(g) for g in (1, 1, 2)]
                original = rows(
                    texts, project, named, Item(turns=[Turn(query="Q?")]), who[names[0]], None
                )
                made.append(original)
                golds.append(original.id)
                for name in names:
                    kind = truth if rng.random() < 0.7 else rng.choice(TYPES)
                    chosen = [p for p in passages if rng.random() < 0.8] or passages[:1]
                    if rng.random() < 0.3:
                        chosen.append(passage(3))
                    words = rng.sample(WORDS, 8)
                    answer = " ".join(words)
                    turn = Turn(query="Q?", query_type=kind, answer=answer, evidence=chosen)
                    made.append(
                        rows(texts, project, named, Item(turns=[turn]), who[name], original.id)
                    )
            insert_items(conn, project, made)
        for item_id in golds[: count // 3]:
            gold = Turn(query="Q?", query_type=rng.choice(TYPES), evidence=[passage(1)])
            save_item(ws, project, item_id, Item(turns=[gold]), 1, action="adjudicate")
    ws.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from assay.review.agreement import agreement_report
    from assay.store.projects import get_project
    from assay.store.settings import Settings
    from assay.store.workspace import Workspace

    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        started = time.perf_counter()
        seed(home, args.items, args.annotators)
        print(
            f"seeded {args.items} items x {args.annotators} annotators in "
            f"{time.perf_counter() - started:.1f} s"
        )
        ws = Workspace.open(Settings(home=home))
        project = get_project(ws, "bench")
        times: dict[str, list[float]] = {"characters": [], "chunks": []}
        loads = []
        for _ in range(args.rounds):
            for side, chunking in (("characters", None), ("chunks", "fixed")):
                loads.append(os.getloadavg()[0])
                began = time.perf_counter()
                report = agreement_report(ws, project, chunking=chunking)
                times[side].append(time.perf_counter() - began)
                assert report.copies == args.items * args.annotators
        ws.close()
    database = "PostgreSQL" if os.environ.get("ASSAY_DATABASE_URL") else "SQLite"
    print(f"{database}, {args.rounds} rounds, load {min(loads):.1f}-{max(loads):.1f}")
    for side, values in times.items():
        print(
            f"  passages by {side:10}: min {min(values):.2f} s, "
            f"median {statistics.median(values):.2f} s"
        )


if __name__ == "__main__":
    main()
