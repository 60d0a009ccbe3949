"""Keyword search backends on a synthetic corpus: tantivy (through KeywordIndex) vs bm25s vs
rank_bm25.

    python benchmarks/keyword_search.py [--chunks 100000] [--with-1m] [--queries 200]
    python benchmarks/keyword_search.py --overhead [--with-1m]

``--overhead`` measures only what Assay adds on top of tantivy, at 10k and 100k chunks (and
1M), on one index and the same 200 queries, 3 rounds, the sides taking turns on each query:

- assay: ``KeywordIndex.search(query, 10)``: ten Hit records with ids, offsets, score, rank,
  chunk text, a snippet of at most 240 characters and its highlights; it also checks that the
  reader is on the newest commit (one stat of tantivy's meta.json).
- bare: plain tantivy returning the same information: the query analysed with the same
  analyzer and its terms OR-ed, the best 10, each hit's stored fields, and tantivy's own
  SnippetGenerator (made once per query, 240 characters) for the snippet and highlighted
  ranges. The ratio assay / bare is the figure to judge.
- bare ids: the best 10 chunk ids only, no text, no snippets: what tantivy alone costs.

The synthetic vocabulary holds no stop word, so Assay's stop-word rule changes no query and
both sides run the very same term queries. Each row prints the p50 of every round and the
ratio of p50s (min / median over the rounds) with the load average.

The corpus is seeded and synthetic: chunks of 30-90 pseudo-words drawn from a Zipf-like law
over a 30k-word vocabulary, ten chunks per document. Each query is 3-5 distinct words sampled
from one target chunk; hit@10 is the share of queries whose target chunk is in the top 10.
Prints a table; the figures in docs/backends.md come from this script.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from assay.records import ChunkText, Hit, IndexedDocument
from assay.search.analysis import SNIPPET_CHARS, query_terms
from assay.search.keyword import CHUNK_ID, DOC_ID, END, START, TEXT, KeywordIndex

SEED = 20261122
VOCABULARY = 30_000
CHUNKS_PER_DOC = 10
BATCH_DOCS = 2_000
ROUNDS = 3
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


# -- corpus -------------------------------------------------------------------------------


def vocabulary(rng: np.random.Generator) -> np.ndarray:
    words: set[str] = set()
    while len(words) < VOCABULARY:
        parts = rng.integers(0, len(SYLLABLES), size=int(rng.integers(2, 5)))
        words.add("".join(SYLLABLES[p] for p in parts))
    return np.array(sorted(words), dtype=object)


def zipf_weights(n: int) -> np.ndarray:
    ranks = np.arange(1, n + 1, dtype=np.float64)
    weights = 1.0 / (ranks + 2.7)  # Zipf-Mandelbrot, exponent 1
    return weights / weights.sum()


@dataclass
class Corpus:
    chunks: int
    words: np.ndarray = field(init=False)
    weights: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        rng = np.random.default_rng(SEED)
        self.words = vocabulary(rng)
        rng.shuffle(self.words)
        self.weights = zipf_weights(VOCABULARY)

    def batches(self, first_doc: int = 0) -> Iterator[list[IndexedDocument]]:
        """Documents in batches of BATCH_DOCS; batch b is the same whatever reads it."""
        docs = self.chunks // CHUNKS_PER_DOC
        for b, begin in enumerate(range(first_doc, docs, BATCH_DOCS)):
            rng = np.random.default_rng([SEED, b])
            yield self.documents(range(begin, min(begin + BATCH_DOCS, docs)), rng)

    def documents(self, numbers: range, rng: np.random.Generator) -> list[IndexedDocument]:
        lengths = rng.integers(30, 91, size=len(numbers) * CHUNKS_PER_DOC)
        drawn = self.words[rng.choice(VOCABULARY, size=int(lengths.sum()), p=self.weights)]
        ends = np.cumsum(lengths).tolist()
        starts = [0, *ends[:-1]]
        out: list[IndexedDocument] = []
        for n, d in enumerate(numbers):
            doc_id = f"doc{d:07d}"
            chunks = []
            for c in range(CHUNKS_PER_DOC):
                i = n * CHUNKS_PER_DOC + c
                text = " ".join(drawn[starts[i] : ends[i]])
                chunks.append(ChunkText(f"{doc_id}-{c}", doc_id, 0, len(text), text))
            out.append(IndexedDocument(doc_id, f"fp-{d}", tuple(chunks)))
        return out

    def extra_document(self, tag: str) -> IndexedDocument:
        rng = np.random.default_rng([SEED, 999_999, len(tag)])
        doc = self.documents(range(9_999_999, 10_000_000), rng)[0]
        chunks = tuple(
            ChunkText(f"{tag}-{i}", tag, c.start, c.end, c.text) for i, c in enumerate(doc.chunks)
        )
        return IndexedDocument(tag, f"fp-{tag}", chunks)


def make_queries(corpus: Corpus, count: int) -> list[tuple[str, str]]:
    """(query, target chunk_id) pairs; targets spread over the whole corpus."""
    rng = np.random.default_rng([SEED, 7])
    targets = set(rng.choice(corpus.chunks, size=count, replace=False).tolist())
    queries: list[tuple[str, str]] = []
    index = 0
    for batch in corpus.batches():
        for doc in batch:
            for chunk in doc.chunks:
                if index in targets:
                    words = list(dict.fromkeys(chunk.text.split()))
                    size = min(len(words), int(rng.integers(3, 6)))
                    picked = rng.choice(len(words), size=size, replace=False)
                    queries.append((" ".join(words[i] for i in picked), chunk.chunk_id))
                index += 1
    return queries


# -- measuring helpers --------------------------------------------------------------------


def timed(fn: Callable[[], object]) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def percentiles(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def query_run(
    search: Callable[[str], list[str]], queries: list[tuple[str, str]]
) -> tuple[float, float, float]:
    """p50 ms, p95 ms, hit@10 over the queries (after a warm-up pass over 20 of them)."""
    for query, _ in queries[:20]:
        search(query)
    seconds: list[float] = []
    found = 0
    for query, target in queries:
        began = time.perf_counter()
        ids = search(query)
        seconds.append(time.perf_counter() - began)
        found += target in ids
    p50, p95 = percentiles(seconds)
    return p50, p95, found / len(queries)


Row = dict[str, str]


def fmt_s(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 1 else f"{seconds * 1000:.1f} ms"


def fmt_mb(size: int) -> str:
    return f"{size / 1e6:.0f} MB"


# -- backends -----------------------------------------------------------------------------


def bench_tantivy(corpus: Corpus, queries: list[tuple[str, str]], workdir: Path) -> Row:
    path = workdir / "tantivy"
    index = KeywordIndex(path, "en")
    build = sum(timed(lambda b=batch: index.update(b)) for batch in corpus.batches())
    size = folder_bytes(path)

    def search(query: str) -> list[str]:
        return [hit.chunk_id for hit in index.search(query, 10)]

    p50, p95, hit10 = query_run(search, queries)
    adds = [timed(lambda i=i: index.update([corpus.extra_document(f"x{i}")])) for i in range(5)]
    deletes = [timed(lambda i=i: index.update([], [f"x{i}"])) for i in range(5)]
    listing = timed(index.indexed)
    reopen = timed(lambda: KeywordIndex(path, "en"))
    fresh = KeywordIndex(path, "en")
    first = timed(lambda: fresh.search(queries[0][0], 10))
    return {
        "backend": "tantivy (KeywordIndex)",
        "build": fmt_s(build),
        "add 1 doc": fmt_s(statistics.median(adds)),
        "delete 1 doc": fmt_s(statistics.median(deletes)),
        "p50": f"{p50:.2f} ms",
        "p95": f"{p95:.2f} ms",
        "hit@10": f"{hit10:.3f}",
        "disk": fmt_mb(size),
        "reopen": f"{fmt_s(reopen)} + 1st query {fmt_s(first)}",
        "indexed()": fmt_s(listing),
        "_build": str(build),
        "_p50": str(p50),
    }


def tokenize_bm25s(texts: list[str], stemmer: object) -> list[list[str]]:
    import bm25s

    tokens = bm25s.tokenize(
        texts, stopwords=None, stemmer=stemmer, return_ids=False, show_progress=False
    )
    assert isinstance(tokens, list)
    return tokens


def bench_bm25s(corpus: Corpus, queries: list[tuple[str, str]], workdir: Path) -> Row:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    chunks = [c for batch in corpus.batches() for doc in batch for c in doc.chunks]
    path = workdir / "bm25s"

    def rebuild(extra: list[ChunkText]) -> bm25s.BM25:
        everything = chunks + extra
        texts = [c.text for c in everything]
        retriever = bm25s.BM25()
        retriever.index(tokenize_bm25s(texts, stemmer), show_progress=False)
        shutil.rmtree(path, ignore_errors=True)
        retriever.save(
            str(path),
            corpus=[{"id": c.chunk_id, "text": c.text} for c in everything],
            show_progress=False,
        )
        return retriever

    build = timed(lambda: rebuild([]))
    size = folder_bytes(path)
    retriever = bm25s.BM25.load(str(path), load_corpus=False, mmap=True, show_progress=False)
    ids = [c.chunk_id for c in chunks]
    vocab = retriever.vocab_dict

    def search(query: str) -> list[str]:
        tokens = [t for t in tokenize_bm25s([query], stemmer)[0] if t in vocab]
        if not tokens:
            return []
        found, _scores = retriever.retrieve([tokens], k=10, show_progress=False, n_threads=1)
        return [ids[i] for i in found[0]]

    p50, p95, hit10 = query_run(search, queries)
    extra = list(corpus.extra_document("x0").chunks)
    add = timed(lambda: rebuild(extra))
    delete = timed(lambda: rebuild([]))
    reopen = timed(
        lambda: bm25s.BM25.load(str(path), load_corpus=True, mmap=True, show_progress=False)
    )
    return {
        "backend": "bm25s + PyStemmer",
        "build": fmt_s(build),
        "add 1 doc": f"{fmt_s(add)} (rebuild)",
        "delete 1 doc": f"{fmt_s(delete)} (rebuild)",
        "p50": f"{p50:.2f} ms",
        "p95": f"{p95:.2f} ms",
        "hit@10": f"{hit10:.3f}",
        "disk": fmt_mb(size),
        "reopen": fmt_s(reopen),
        "indexed()": "n/a",
    }


def bench_rank_bm25(corpus: Corpus, queries: list[tuple[str, str]]) -> Row:
    import Stemmer
    from rank_bm25 import BM25Okapi

    stemmer = Stemmer.Stemmer("english")
    chunks = [c for batch in corpus.batches() for doc in batch for c in doc.chunks]
    holder: list[BM25Okapi] = []
    build = timed(
        lambda: holder.append(BM25Okapi(tokenize_bm25s([c.text for c in chunks], stemmer)))
    )
    model = holder[0]
    ids = [c.chunk_id for c in chunks]

    def search(query: str) -> list[str]:
        scores = model.get_scores(tokenize_bm25s([query], stemmer)[0])
        top = np.argpartition(-scores, 10)[:10]
        return [ids[i] for i in top[np.argsort(-scores[top])]]

    few = queries[:40]  # 20 warm-up + 40 timed: each query scores every chunk in Python
    p50, p95, hit10 = query_run(search, few)
    return {
        "backend": "rank_bm25 BM25Okapi",
        "build": fmt_s(build),
        "add 1 doc": "n/a (in memory)",
        "delete 1 doc": "n/a",
        "p50": f"{p50:.2f} ms",
        "p95": f"{p95:.2f} ms",
        "hit@10": f"{hit10:.3f} ({len(few)} q)",
        "disk": "none",
        "reopen": "n/a",
        "indexed()": "n/a",
        "_build": str(build),
        "_p50": str(p50),
    }


def bench_large(chunks: int, queries_count: int, workdir: str, out: dict[str, str]) -> None:
    """Runs in a child process so its peak RSS is its own."""
    corpus = Corpus(chunks)
    queries = make_queries(corpus, queries_count)
    path = Path(workdir) / "tantivy-large"
    index = KeywordIndex(path, "en")
    build = sum(timed(lambda b=batch: index.update(b)) for batch in corpus.batches())

    def search(query: str) -> list[str]:
        hits: list[Hit] = index.search(query, 10)
        return [hit.chunk_id for hit in hits]

    p50, p95, hit10 = query_run(search, queries)
    add = timed(lambda: index.update([corpus.extra_document("x0")]))
    delete = timed(lambda: index.update([], ["x0"]))
    listing = timed(index.indexed)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out.update(
        {
            "backend": f"tantivy (KeywordIndex), {chunks:,} chunks",
            "build": fmt_s(build),
            "add 1 doc": fmt_s(add),
            "delete 1 doc": fmt_s(delete),
            "p50": f"{p50:.2f} ms",
            "p95": f"{p95:.2f} ms",
            "hit@10": f"{hit10:.3f}",
            "disk": fmt_mb(folder_bytes(path)),
            "reopen": "",
            "indexed()": f"{fmt_s(listing)} ({chunks // CHUNKS_PER_DOC:,} docs)",
            "peak RSS": fmt_mb(rss),
        }
    )


def bare_search(index: KeywordIndex, *, snippets: bool) -> Callable[[str], list[object]]:
    """Plain tantivy on the same folder, with the same analyzer: analyse the query, OR its
    terms, take the best 10. With `snippets`, it returns what a Hit holds: each hit's doc id,
    chunk id, offsets, score, text, and tantivy's own snippet (SnippetGenerator, made once per
    query, as long as Assay's) with the highlighted ranges; without, chunk ids only."""
    import tantivy

    raw = tantivy.Index.open(str(index.path))
    raw.register_tokenizer(f"assay_{index.language}", index._analyzer)
    schema, analyzer = index._schema, index._analyzer
    searcher = raw.searcher()

    def search(query: str) -> list[object]:
        terms = query_terms(analyzer, query)
        clauses = [
            (tantivy.Occur.Should, tantivy.Query.term_query(schema, TEXT, term, "freq"))
            for term in terms
        ]
        parsed = tantivy.Query.boolean_query(clauses)
        found = searcher.search(parsed, 10, count=False)
        if not snippets:
            return [searcher.doc(address).get_first(CHUNK_ID) for _score, address in found.hits]
        generator = tantivy.SnippetGenerator.create(searcher, parsed, schema, TEXT)
        generator.set_max_num_chars(SNIPPET_CHARS)
        hits: list[object] = []
        for score, address in found.hits:
            fields = searcher.doc(address)
            snippet = generator.snippet_from_doc(fields)
            hits.append(
                (
                    fields.get_first(DOC_ID),
                    fields.get_first(CHUNK_ID),
                    fields.get_first(START),
                    fields.get_first(END),
                    score,
                    fields.get_first(TEXT),
                    snippet.fragment(),
                    [(mark.start, mark.end) for mark in snippet.highlighted()],
                )
            )
        return hits

    return search


SIDES = ("assay", "bare", "bare ids")


def bench_overhead(chunks: int, queries_count: int, workdir: str, out: dict[str, str]) -> None:
    """Assay / bare tantivy p50 on one index; runs in a child process like bench_large.

    The three sides run one after the other on each query, their order rotating from query
    to query and round to round, so a burst of load on the shared machine hits them alike.
    """
    corpus = Corpus(chunks)
    queries = make_queries(corpus, queries_count)
    index = KeywordIndex(Path(workdir) / f"overhead-{chunks}", "en")
    for batch in corpus.batches():
        index.update(batch)
    sides: dict[str, Callable[[str], object]] = {
        "assay": lambda q: index.search(q, 10),
        "bare": bare_search(index, snippets=True),
        "bare ids": bare_search(index, snippets=False),
    }
    for query, _ in queries[:20]:
        for run in sides.values():
            run(query)
    medians: dict[str, list[float]] = {side: [] for side in SIDES}
    ratios: dict[str, list[float]] = {"bare": [], "bare ids": []}
    for round_no in range(ROUNDS):
        seconds: dict[str, list[float]] = {side: [] for side in SIDES}
        for number, (query, _) in enumerate(queries):
            shift = (number + round_no) % len(SIDES)
            for side in SIDES[shift:] + SIDES[:shift]:
                seconds[side].append(timed(lambda s=side, q=query: sides[s](q)))
        for side, values in seconds.items():
            medians[side].append(statistics.median(values) * 1000)
        for side in ratios:
            ratios[side].append(medians["assay"][-1] / medians[side][-1])
    out.update(
        {
            "chunks": f"{chunks:,}",
            **{f"{side} p50 ms": " ".join(f"{v:.3f}" for v in medians[side]) for side in SIDES},
            **{
                f"assay/{side} min/median": f"{min(r):.2f} / {statistics.median(r):.2f}"
                for side, r in ratios.items()
            },
            "load avg": " ".join(f"{v:.2f}" for v in os.getloadavg()),
        }
    )


def overhead(queries: int, with_1m: bool) -> None:
    context = multiprocessing.get_context("spawn")
    sizes = [10_000, 100_000] + ([1_000_000] if with_1m else [])
    with context.Manager() as manager:
        for size in sizes:
            with tempfile.TemporaryDirectory(prefix="assay-kw-overhead-") as workdir:
                shared = manager.dict()
                child = context.Process(
                    target=bench_overhead, args=(size, queries, workdir, shared)
                )
                child.start()
                child.join()
                row = dict(shared)
                print(" | ".join(f"{key} {value}" for key, value in row.items()), flush=True)


# -- main ---------------------------------------------------------------------------------


COLUMNS = [
    "backend",
    "build",
    "add 1 doc",
    "delete 1 doc",
    "p50",
    "p95",
    "hit@10",
    "disk",
    "reopen",
    "indexed()",
    "peak RSS",
]


def print_table(rows: list[Row]) -> None:
    columns = [c for c in COLUMNS if any(c in row for row in rows)]
    widths = {c: max(len(c), *(len(row.get(c, "")) for row in rows)) for c in columns}
    print("| " + " | ".join(c.ljust(widths[c]) for c in columns) + " |")
    print("|" + "|".join("-" * (widths[c] + 2) for c in columns) + "|")
    for row in rows:
        print("| " + " | ".join(row.get(c, "").ljust(widths[c]) for c in columns) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--with-1m", action="store_true", help="also run tantivy at 1M chunks")
    parser.add_argument("--skip-rank-bm25", action="store_true")
    parser.add_argument("--overhead", action="store_true", help="Assay vs bare tantivy only")
    args = parser.parse_args()
    if args.overhead:
        overhead(args.queries, args.with_1m)
        return

    corpus = Corpus(args.chunks)
    queries = make_queries(corpus, args.queries)
    print(
        f"corpus: {args.chunks:,} chunks in {args.chunks // CHUNKS_PER_DOC:,} documents, "
        f"{len(queries)} queries, {os.cpu_count()} cores",
        flush=True,
    )
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="assay-kw-bench-") as workdir:
        rows.append(bench_tantivy(corpus, queries, Path(workdir)))
        print_table(rows)
        rows.append(bench_bm25s(corpus, queries, Path(workdir)))
        print_table(rows[-1:])
        if not args.skip_rank_bm25:
            rows.append(bench_rank_bm25(corpus, queries))
            print_table(rows[-1:])
    print()
    print_table(rows)
    ours = rows[0]
    theirs = next((row for row in rows if row["backend"].startswith("rank_bm25")), None)
    if theirs is not None:
        print(
            f"\ntantivy vs rank_bm25: build {float(theirs['_build']) / float(ours['_build']):.1f}x "
            f"faster, query p50 {float(theirs['_p50']) / float(ours['_p50']):.0f}x faster"
        )

    if args.with_1m:
        context = multiprocessing.get_context("spawn")
        with (
            context.Manager() as manager,
            tempfile.TemporaryDirectory(prefix="assay-kw-bench-1m-") as workdir,
        ):
            shared = manager.dict()
            child = context.Process(
                target=bench_large, args=(1_000_000, args.queries, workdir, shared)
            )
            child.start()
            child.join()
            print()
            print_table([dict(shared)])


if __name__ == "__main__":
    main()
