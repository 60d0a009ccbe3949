"""Ingest throughput: documents/s and MB/s for plain text and for PDF.

Run: python benchmarks/ingest.py [--text-docs N] [--pdf-docs N]
Text files are generated with a seeded RNG; PDFs are copies of the repository's test PDF made
distinct by a trailing comment (PDF readers ignore bytes after %%EOF), so each one is parsed.
Parsing, chunking (default chunking) and storing are timed together; indexing separately.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from assay import open_workspace
from assay.corpus.ingest import ingest_paths
from assay.search.indexes import sync_project
from assay.store.projects import create_project

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--text-docs", type=int, default=2000)
    parser.add_argument("--pdf-docs", type=int, default=200)
    args = parser.parse_args()
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
