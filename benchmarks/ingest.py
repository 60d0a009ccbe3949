"""Ingest throughput: documents/s and MB/s for plain text and for PDF.

Run: python benchmarks/ingest.py [--text-docs N] [--pdf-docs N]
     python benchmarks/ingest.py --scale [--sizes 0,20000,100000] [--files 200]

``--scale`` measures the per-document cost of ingesting text files into a project that already
holds N documents (seeded by bulk insert, one chunk each, not by ingesting N files): three
rounds of ``--files`` new files per size, sizes taken in turn each round; min and median.
Text files are generated with a seeded RNG; PDFs are copies of the repository's test PDF made
distinct by a trailing comment (PDF readers ignore bytes after %%EOF), so each one is parsed.
Parsing, chunking (default chunking) and storing are timed together; indexing separately.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from seeding import seed_documents

from assay import open_workspace
from assay.corpus.ingest import ingest_paths
from assay.search.indexes import sync_project
from assay.store.projects import create_project
from assay.store.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
WORDS = [
    "budget",
    "travel",
    "policy",
    "ferry",
    "timetable",
    "contract",
    "employee",
    "leave",
    "report",
    "annual",
    "figure",
    "maintenance",
    "depot",
    "vehicle",
    "safety",
    "audit",
    "customer",
    "ticket",
    "revenue",
    "schedule",
    "route",
]


def make_text_files(folder: Path, count: int, rng: random.Random) -> int:
    total = 0
    for i in range(count):
        paragraphs = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 120))).capitalize() + "."
            for _ in range(rng.randint(3, 8))
        ]
        data = f"Document {i}\n\n" + "\n\n".join(paragraphs) + "\n"
        (folder / f"doc{i:05d}.txt").write_text(data)
        total += len(data.encode())
    return total


def make_pdf_files(folder: Path, count: int) -> int:
    sample = ROOT / "tests" / "data" / "parsing" / "sample.pdf"
    demo = sorted((ROOT / "src" / "assay" / "demo" / "documents").glob("*.pdf"))
    source = (demo[0] if demo else sample).read_bytes()
    total = 0
    for i in range(count):
        data = source + f"\n% copy {i}\n".encode()
        (folder / f"doc{i:05d}.pdf").write_bytes(data)
        total += len(data)
    return total


def run(kind: str, folder: Path, size: int, count: int, home: Path) -> None:
    ws = open_workspace(home)
    project = create_project(ws, kind)
    start = time.perf_counter()
    report = ingest_paths(ws, project, [folder])
    ingest_s = time.perf_counter() - start
    start = time.perf_counter()
    sync_project(ws, project)
    index_s = time.perf_counter() - start
    assert len(report.added) == count, [o.message for o in report.errors][:3]
    print(
        f"{kind:5s} {count:6d} docs {size / 1e6:8.1f} MB | ingest {ingest_s:6.2f} s = "
        f"{count / ingest_s:7.1f} docs/s, {size / 1e6 / ingest_s:6.2f} MB/s | "
        f"index {index_s:5.2f} s ({count / index_s:7.1f} docs/s)"
    )
    ws.close()


def seed(ws: Workspace, project_id: int, count: int) -> None:
    """``count`` small documents with one chunk each, inserted in bulk; half of their names
    are those of the files ingested next, so the numbered-name path runs too."""
    texts = (
        (
            f"doc{i:05d}.txt" if i % 2 else f"seed-{i:06d}.txt",
            f"Seeded document {i} about {WORDS[i % len(WORDS)]}.",
        )
        for i in range(count)
    )
    seed_documents(ws.engine, project_id, texts, 1000)


def scale(sizes: list[int], files: int) -> None:
    """Per-document ingest cost against the number of documents already in the project."""
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        projects = {}
        ws = open_workspace(base / "ws")
        for size in sizes:
            project = create_project(ws, f"p{size}")
            seed(ws, project.id, size)
            projects[size] = project
        costs: dict[int, list[float]] = {size: [] for size in sizes}
        for round_no in range(3):
            for size in sizes:
                folder = base / f"r{round_no}-{size}"
                folder.mkdir()
                make_text_files(folder, files, rng)
                start = time.perf_counter()
                report = ingest_paths(ws, projects[size], [folder])
                elapsed = time.perf_counter() - start
                assert len(report.added) == files, [o.message for o in report.errors][:3]
                costs[size].append(elapsed / files * 1000)
        for size in sizes:
            values = costs[size]
            print(
                f"{size:>7,} docs in project | per document: min {min(values):6.2f} ms, "
                f"median {statistics.median(values):6.2f} ms ({files} files x 3 rounds)"
            )
        first, last = sizes[0], sizes[-1]
        ratio = statistics.median(costs[last]) / statistics.median(costs[first])
        print(f"median {last:,} / {first:,}: {ratio:.2f}x | load average {os.getloadavg()}")
        ws.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--text-docs", type=int, default=2000)
    parser.add_argument("--pdf-docs", type=int, default=200)
    parser.add_argument("--scale", action="store_true", help="per-document cost vs project size")
    parser.add_argument("--sizes", default="0,20000,100000")
    parser.add_argument("--files", type=int, default=200)
    args = parser.parse_args()
    if args.scale:
        scale([int(n) for n in args.sizes.split(",")], args.files)
        return
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "text").mkdir()
        (base / "pdf").mkdir()
        text_size = make_text_files(base / "text", args.text_docs, rng)
        pdf_size = make_pdf_files(base / "pdf", args.pdf_docs)
        run("text", base / "text", text_size, args.text_docs, base / "ws-text")
        run("pdf", base / "pdf", pdf_size, args.pdf_docs, base / "ws-pdf")


if __name__ == "__main__":
    main()
