"""Export speed and memory: 100k items and 1M chunks to AutoRAG and to the native zip.

Seeds a workspace with bulk inserts straight into the tables (ingesting 5,000 files would
measure ingest, not export), then runs each export in a fresh process and prints its wall
time and peak resident memory. Goal: each export ≤ 20 s and ≤ 1 GB.

    python benchmarks/export.py [--items 100000] [--docs 5000] [--chunks-per-doc 200]
        [--home DIR] [--only autorag|native] [--profile]

``--home DIR`` keeps the seeded workspace in DIR and reuses it on later runs (seeding takes
minutes); CPU time is printed next to wall time because a busy machine stretches the
latter; ``--profile`` runs each export under cProfile and prints the top functions.

Old code against new: unpack a commit's ``src`` (``git archive COMMIT src | tar -x -C DIR``),
seed once with ``--home``, then time ``PYTHONPATH=DIR/src python benchmarks/export.py --run
native --home H --out OUT`` against the same with ``PYTHONPATH=src``, alternating. Recorded
for the one record family (before 758d41e), 100k items, 2,000 documents, 200k chunks, 3
alternating runs each, load 1.8–2.5, CPU seconds min / median: native before 10.03 / 10.10,
after 9.97 / 10.47 (after/before per pair, median 0.99); AutoRAG before 8.84 / 8.87, after
7.83 / 8.15 (0.92). The files written are byte-identical.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

WORDS = (
    "hotel train leave policy refund night class euro employee travel contract report year "
    "budget meeting station ticket service customer data protection office"
).split()


def seed(home: Path, n_items: int, n_docs: int, per_doc: int) -> None:
    import sqlalchemy as sa

    from assay.people.actors import account_for
    from assay.store.projects import create_project
    from assay.store.schema import chunkings, chunks, documents, evidence, items, turns
    from assay.store.settings import Settings
    from assay.store.workspace import Workspace

    ws = Workspace.open(Settings(home=home))
    project = create_project(ws, "bench")
    rng = random.Random(7)
    now = datetime.now(UTC)
    chunk_len = 100
    doc_ids: list[str] = []
    doc_texts: list[str] = []  # evidence quotes its document (exports check the invariant)
    author = account_for(ws, "bench")
    with ws.engine.begin() as conn:
        chunking_id = conn.execute(
            chunkings.insert().values(
                project_id=project.id,
                name="bench",
                method="imported",
                params={},
                is_default=False,
                created_at=now,
            )
        ).inserted_primary_key[0]  # type: ignore[index]
        for d in range(n_docs):
            text = " ".join(rng.choice(WORDS) for _ in range(per_doc * chunk_len // 7))
            text = text[: per_doc * chunk_len].ljust(per_doc * chunk_len, ".")
            data = text.encode()
            sha = ws.blobs.put(data)
            doc_id = str(uuid.uuid4())
            doc_ids.append(doc_id)
            doc_texts.append(text)
            conn.execute(
                documents.insert().values(
                    id=doc_id,
                    project_id=project.id,
                    name=f"doc-{d:05d}.txt",
                    media_type="text/plain",
                    size=len(data),
                    sha256=sha,
                    text=text,
                    parse_info={"parser": "text"},
                    notes="",
                    metadata={"path": f"docs/doc-{d:05d}.txt"},
                    author_id=author,
                    created_at=now + timedelta(microseconds=d),
                    updated_at=now,
                )
            )
            conn.execute(
                chunks.insert(),
                [
                    {
                        "chunking_id": chunking_id,
                        "chunk_id": f"d{d}-c{c}",
                        "doc_id": doc_id,
                        "ordinal": c,
                        "start": c * chunk_len,
                        "end": (c + 1) * chunk_len,
                    }
                    for c in range(per_doc)
                ],
            )
        batch = 5000
        for first in range(0, n_items, batch):
            item_rows, turn_rows = [], []
            ids = [str(uuid.uuid4()) for _ in range(min(batch, n_items - first))]
            for offset, item_id in enumerate(ids):
                item_rows.append(
                    {
                        "id": item_id,
                        "project_id": project.id,
                        "kind": "qa",
                        "status": "accepted",
                        "origin": "human",
                        "query": f"question {first + offset}",
                        "query_type": "fact_single",
                        "turn_count": 1,
                        "evidence_count": 2,
                        "notes": "",
                        "extra": {},
                        "author_id": author,
                        "version": 1,
                        "created_at": now + timedelta(microseconds=first + offset),
                        "updated_at": now,
                    }
                )
                turn_rows.append(
                    {
                        "item_id": item_id,
                        "ordinal": 0,
                        "query": f"question {first + offset}",
                        "rewrite": "",
                        "query_type": "fact_single",
                        "enrichments": {},
                        "answer": "an answer",
                        "alternatives": [],
                        "original_answer": "",
                        "generation": {},
                        "retrieved": [],
                    }
                )
            conn.execute(items.insert(), item_rows)
            conn.execute(turns.insert(), turn_rows)
            turn_ids = (
                conn.execute(sa.select(turns.c.id).where(turns.c.item_id.in_(ids))).scalars().all()
            )
            ev_rows = []
            for turn_id in turn_ids:
                for ordinal in range(2):
                    d = rng.randrange(n_docs)
                    start = rng.randrange(per_doc * chunk_len - 80)
                    ev_rows.append(
                        {
                            "turn_id": turn_id,
                            "ordinal": ordinal,
                            "doc_id": doc_ids[d],
                            "start": start,
                            "end": start + 60,
                            "text": doc_texts[d][start : start + 60],
                            "label": "relevant",
                            "grade": None,
                            "group_no": ordinal + 1,
                            "origin": "selected",
                            "anchor": "ok",
                            "author_id": author,
                            "created_at": now,
                        }
                    )
            conn.execute(evidence.insert(), ev_rows)
    ws.close()


def run_export(home: Path, format_name: str, out: Path, profile: bool = False) -> None:
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        _export(home, format_name, out)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)
        return
    _export(home, format_name, out)


def _export(home: Path, format_name: str, out: Path) -> None:
    from assay.formats import get_format
    from assay.store.projects import get_project
    from assay.store.settings import Settings
    from assay.store.workspace import Workspace
    from assay.transfer import export_bundle

    started = time.perf_counter()
    ws = Workspace.open(Settings(home=home))
    project = get_project(ws, "bench")
    bundle = export_bundle(ws, project, chunking="bench")
    get_format(format_name).write(bundle, out, chunking="bench")
    ws.close()
    elapsed = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak, cpu = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
    size = sum(p.stat().st_size for p in out.rglob("*")) if out.is_dir() else out.stat().st_size
    print(
        f"{format_name:8s} {elapsed:6.1f} s (CPU {cpu:5.1f} s)   peak RSS {peak:6.0f} MB   "
        f"output {size / 1e6:6.1f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=5_000)
    parser.add_argument("--chunks-per-doc", type=int, default=200)
    parser.add_argument("--home", help="keep the seeded workspace here and reuse it")
    parser.add_argument("--only", choices=("autorag", "native"), help="run one export only")
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary")
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run_export(Path(args.home), args.run, Path(args.out), args.profile)
        return
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(args.home) if args.home else Path(tmp) / "ws"
        if (home / ".seeded").exists():
            print(f"reusing the seeded workspace in {home}")
        else:
            started = time.perf_counter()
            seed(home, args.items, args.docs, args.chunks_per_doc)
            (home / ".seeded").write_text("ok\n")
            total_chunks = args.docs * args.chunks_per_doc
            print(
                f"seeded {args.items:,} items, {args.docs:,} documents, {total_chunks:,} chunks "
                f"in {time.perf_counter() - started:.1f} s"
            )
        runs = (("autorag", Path(tmp) / "autorag"), ("native", Path(tmp) / "n.zip"))
        for format_name, out in runs:
            if args.only and format_name != args.only:
                continue
            command = [sys.executable, __file__, "--run", format_name]
            command += ["--home", str(home), "--out", str(out)]
            subprocess.run([*command, *(["--profile"] if args.profile else [])], check=True)
        if (Path(tmp) / "n.zip").exists():
            digest = hashlib.sha256((Path(tmp) / "n.zip").read_bytes()).hexdigest()[:12]
            print(f"native zip sha256 {digest}…")


if __name__ == "__main__":
    main()
