"""Dense search speed, MiniLM embedding speed, and keyword vs dense vs hybrid quality.

    python benchmarks/dense_search.py [--sizes 100000 1000000] [--queries 100] [--threads 2]

1. Query latency of DenseIndex.search (k=10) over random L2-normalised 384-dim float32
   vectors (seeded), next to the bare numpy product + argpartition on the same memory map.
   The vectors go in through DenseIndex.update with an embedder that looks them up, so the
   files, the manifest and the hit building are the real ones.
2. MiniLM (int8 ONNX) throughput in passages per second on 1000 passages of real text.
3. recall@10 and nDCG@10 (binary relevance, averaged over answerable queries) of keyword,
   dense (MiniLM) and hybrid (RRF, k=60, equal weights) retrieval:
   - the demo corpus gold set: documents parsed with assay.parsing.parse, chunked with
     recursive/max_length=1000; a chunk is relevant when it overlaps the span of a
     "relevant" evidence text located in its document;
   - the AutoRAG fixture (../shared/fixtures/autorag): corpus contents chunked the same way;
     a document's rank is that of its best chunk; relevant documents are retrieval_gt.
Prints tables; figures quoted in the docs come from this script.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from assay.corpus.chunker_registry import chunk_text
from assay.parsing import parse
from assay.records import ChunkText, IndexedDocument
from assay.search import SearchIndex
from assay.search.dense import DenseIndex
from assay.search.embeddings import MiniLMEmbedder
from assay.search.hybrid import HybridIndex
from assay.search.keyword import KeywordIndex

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261122
DIM = 384
DEMO = ROOT / "src" / "assay" / "demo"
AUTORAG = ROOT.parent / "shared" / "fixtures" / "autorag"
CHUNKING = {"max_length": 1000}


# -- 1. latency --------------------------------------------------------------------------


class LookupEmbedder:
    """Returns stored vectors: text "row N" is row N of `rows`, "query N" row N of `queries`."""

    name = "lookup-384"
    dim = DIM

    def __init__(self, rows: np.ndarray, queries: np.ndarray) -> None:
        self.rows, self.queries = rows, queries

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        table = {"row": self.rows, "query": self.queries}
        return np.stack([table[kind][int(n)] for kind, n in (t.split() for t in texts)])


def random_unit(rng: np.random.Generator, n: int) -> np.ndarray:
    out = np.empty((n, DIM), dtype=np.float32)
    for first in range(0, n, 100_000):
        block = rng.standard_normal((min(100_000, n - first), DIM), dtype=np.float32)
        out[first : first + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def percentiles(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    return statistics.median(ordered) * 1000, ordered[round(0.95 * (len(ordered) - 1))] * 1000


def latency(size: int, queries: int, workdir: Path) -> dict[str, float]:
    rng = np.random.default_rng([SEED, size])
    rows = random_unit(rng, size)
    probes = random_unit(rng, queries)
    embedder = LookupEmbedder(rows, probes)
    index = DenseIndex(workdir / f"dense-{size}", embedder)
    per_doc = 10
    docs = [
        IndexedDocument(
            f"d{d}",
            f"fp{d}",
            tuple(
                ChunkText(f"d{d}-{c}", f"d{d}", 0, 1, f"row {d * per_doc + c}")
                for c in range(per_doc)
            ),
        )
        for d in range(size // per_doc)
    ]
    began = time.perf_counter()
    index.update(docs)
    build = time.perf_counter() - began
    del docs, rows
    index = DenseIndex(index.path, embedder)  # reopen: vectors come from the memory map
    index.search("query 0")  # warm the page cache and the segment metadata
    timings = []
    for n in range(queries):
        began = time.perf_counter()
        hits = index.search(f"query {n}", k=10)
        timings.append(time.perf_counter() - began)
        assert len(hits) == 10
    matrix = np.load(next(index.path.glob("seg-*.npy")), mmap_mode="r")
    bare = []
    for n in range(queries):
        began = time.perf_counter()
        scores = matrix @ probes[n]
        np.argpartition(-scores, 9)[:10]
        bare.append(time.perf_counter() - began)
    p50, p95 = percentiles(timings)
    b50, b95 = percentiles(bare)
    shutil.rmtree(index.path)
    return {"build_s": build, "p50": p50, "p95": p95, "bare_p50": b50, "bare_p95": b95}


# -- 2. throughput -----------------------------------------------------------------------


def passages(count: int) -> list[str]:
    """Real text: sentences-ish windows of the AutoRAG corpus, else of the demo documents."""
    texts: list[str] = []
    if (AUTORAG / "corpus.parquet").exists():
        import pyarrow.parquet as pq

        texts = pq.read_table(AUTORAG / "corpus.parquet").column("contents").to_pylist()
    else:
        texts = [t for _n, t in demo_documents()]
    words = " ".join(texts).split()
    rng = np.random.default_rng(SEED)
    out = []
    for _ in range(count):
        start = int(rng.integers(0, len(words) - 60))
        out.append(" ".join(words[start : start + int(rng.integers(8, 60))]))
    return out


def throughput(threads: int) -> dict[str, float]:
    texts = passages(1000)
    began = time.perf_counter()
    embedder = MiniLMEmbedder(threads=threads)
    load = time.perf_counter() - began
    embedder.embed(texts[:32])
    began, cpu = time.perf_counter(), time.process_time()
    embedder.embed(texts)
    took, cpu = time.perf_counter() - began, time.process_time() - cpu
    return {
        "load_s": load,
        "seconds": took,
        "cpu_s": cpu,
        "per_s": len(texts) / took,
        "words": statistics.mean(len(t.split()) for t in texts),
    }


# -- 3. quality --------------------------------------------------------------------------


def demo_documents() -> list[tuple[str, str]]:
    folder = DEMO / "documents"
    return [(p.name, parse(p.name, p.read_bytes()).text) for p in sorted(folder.iterdir())]


def chunked(doc_id: str, text: str) -> IndexedDocument:
    spans = chunk_text(text, "recursive", CHUNKING)
    chunks = tuple(
        ChunkText(f"{doc_id}#{n}", doc_id, s, e, text[s:e]) for n, (s, e) in enumerate(spans)
    )
    return IndexedDocument(doc_id, "fp", chunks)


def locate(text: str, evidence: str) -> tuple[int, int] | None:
    """Span of `evidence` in `text`, ignoring differences in whitespace and case."""
    found = text.find(evidence)
    if found >= 0:
        return found, found + len(evidence)
    words = [re.escape(w) for w in evidence.split()]
    match = re.search(r"\s+".join(words), text, flags=re.IGNORECASE)
    return (match.start(), match.end()) if match else None


def scores_at_10(ranked: list[str], relevant: set[str]) -> tuple[float, float]:
    top = ranked[:10]
    recall = len(relevant & set(top)) / len(relevant)
    dcg = sum(1 / math.log2(i + 2) for i, item in enumerate(top) if item in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return recall, dcg / ideal


def build_indexes(
    docs: list[IndexedDocument], workdir: Path, embedder: MiniLMEmbedder
) -> dict[str, SearchIndex]:
    keyword = KeywordIndex(workdir / "keyword", "en")
    dense = DenseIndex(workdir / "dense", embedder)
    keyword.update(docs)
    dense.update(docs)
    hybrid = HybridIndex({"keyword": keyword, "dense": dense}, {"keyword": 1.0, "dense": 1.0})
    return {"keyword": keyword, "dense": dense, "hybrid": hybrid}


Item = tuple[str, set[str], str]
"""(query, relevant ids, group such as the query language)."""
Quality = dict[str, dict[str, tuple[float, float]]]
"""retriever -> group ("all" and each item group) -> (recall@10, nDCG@10)."""


def evaluate(
    indexes: dict[str, SearchIndex], items: list[Item], rank_key: Callable[[str], str]
) -> Quality:
    out: Quality = {}
    for name, index in indexes.items():
        per_group: dict[str, list[tuple[float, float]]] = {"all": []}
        for query, relevant, group in items:
            ranked = list(dict.fromkeys(rank_key(h.chunk_id) for h in index.search(query, 100)))
            scores = scores_at_10(ranked, relevant)
            per_group["all"].append(scores)
            per_group.setdefault(group, []).append(scores)
        out[name] = {
            group: (statistics.mean(r for r, _n in got), statistics.mean(n for _r, n in got))
            for group, got in per_group.items()
        }
    return out


def demo_quality(workdir: Path, embedder: MiniLMEmbedder) -> tuple[int, int, Quality]:
    texts = dict(demo_documents())
    docs = [chunked(name, text) for name, text in texts.items()]
    chunks_of = {d.doc_id: d.chunks for d in docs}
    items: list[Item] = []
    unlocated = 0
    for line in (DEMO / "gold.jsonl").read_text(encoding="utf-8").splitlines():
        gold = json.loads(line)
        relevant: set[str] = set()
        for evidence in gold["evidence"]:
            if evidence["label"] != "relevant":
                continue
            span = locate(texts[evidence["document"]], evidence["text"])
            if span is None:
                unlocated += 1
                continue
            relevant.update(
                c.chunk_id
                for c in chunks_of[evidence["document"]]
                if c.start < span[1] and span[0] < c.end
            )
        if relevant:
            items.append((gold["query"], relevant, gold["language"]))
    indexes = build_indexes(docs, workdir / "demo", embedder)
    return len(items), unlocated, evaluate(indexes, items, lambda chunk_id: chunk_id)


def autorag_quality(workdir: Path, embedder: MiniLMEmbedder) -> tuple[int, Quality]:
    import pyarrow.parquet as pq

    corpus = pq.read_table(AUTORAG / "corpus.parquet").to_pylist()
    qa = pq.read_table(AUTORAG / "qa.parquet").to_pylist()
    docs = [chunked(row["doc_id"], row["contents"]) for row in corpus]
    items: list[Item] = [
        (row["query"], {doc_id for group in row["retrieval_gt"] for doc_id in group}, "en")
        for row in qa
    ]
    indexes = build_indexes(docs, workdir / "autorag", embedder)
    return len(items), evaluate(indexes, items, lambda chunk_id: chunk_id.rsplit("#", 1)[0])


# -- main --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="assay-dense-bench-") as tmp:
        workdir = Path(tmp)
        print(f"Dense search, {DIM}-dim float32, k=10, {args.queries} queries one by one (ms)")
        print(f"{'vectors':>10} {'build s':>8} {'p50':>7} {'p95':>7} {'numpy p50':>10} {'p95':>7}")
        for size in args.sizes:
            r = latency(size, args.queries, workdir)
            print(
                f"{size:>10,} {r['build_s']:>8.1f} {r['p50']:>7.1f} {r['p95']:>7.1f} "
                f"{r['bare_p50']:>10.1f} {r['bare_p95']:>7.1f}"
            )

        t = throughput(args.threads)
        print(
            f"\nMiniLM int8 ONNX, {args.threads} threads: load {t['load_s']:.2f} s; 1000 "
            f"passages (mean {t['words']:.0f} words) in {t['seconds']:.2f} s = "
            f"{t['per_s']:.0f} passages/s ({t['cpu_s']:.1f} CPU s, all threads)"
        )

        embedder = MiniLMEmbedder(threads=args.threads)
        answerable, unlocated, demo = demo_quality(workdir, embedder)
        print(
            f"\nDemo gold set: {answerable} answerable queries, chunks recursive/1000"
            + (f" ({unlocated} evidence texts not found in their documents)" if unlocated else "")
        )
        print_quality(demo)
        if (AUTORAG / "corpus.parquet").exists():
            count, autorag = autorag_quality(workdir, embedder)
            print(f"\nAutoRAG fixture: {count} queries, document-level (best chunk)")
            print_quality(autorag)
        else:
            print(f"\nAutoRAG fixture not found at {AUTORAG}; skipped.")


def print_quality(results: Quality) -> None:
    groups = list(next(iter(results.values())))
    print(f"{'':<10}" + "".join(f"{group:>20}" for group in groups))
    print(f"{'retriever':<10}" + f"{'recall@10':>11}{'nDCG@10':>9}" * len(groups))
    for name, by_group in results.items():
        cells = "".join(f"{by_group[g][0]:>11.3f}{by_group[g][1]:>9.3f}" for g in groups)
        print(f"{name:<10}{cells}")


if __name__ == "__main__":
    main()
