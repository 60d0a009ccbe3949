"""Full-stack keyword search (``assay.search.indexes.search``: freshness check, then the index)
against the index alone, as a project's text grows.

    python benchmarks/search_freshness.py [--sizes 1000,10000] [--queries 200]

Each size is a project of that many ~8 KB documents (one chunk each) seeded by bulk insert and
indexed once; then the same queries go through both paths, alternating per query, 3 rounds.
Prints p50 per path (min and median over the rounds) and the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from seeding import seed_documents

from assay import open_workspace
from assay.corpus.chunkings import get_chunking
from assay.search.indexes import open_keyword_index, search, sync_project
from assay.store.projects import create_project

WORDS = "ferry harbour budget travel policy contract leave audit route depot ticket".split()


def _texts(count: int, rng: random.Random) -> Iterator[tuple[str, str]]:
    for i in range(count):
        words = (rng.choice(WORDS) + str(rng.randint(0, 999)) for _ in range(1000))
        yield f"doc{i:06d}.txt", " ".join(words)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(5)
    queries = [
        " ".join(rng.choice(WORDS) + str(rng.randint(0, 999)) for _ in range(3))
        for _ in range(args.queries)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        ws = open_workspace(Path(tmp) / "ws")
        for size in [int(n) for n in args.sizes.split(",")]:
            project = create_project(ws, f"p{size}")
            seed_documents(ws.engine, project.id, _texts(size, rng), 600)
            sync_project(ws, project)
            index = open_keyword_index(ws, project, get_chunking(ws, project))
            sides = {
                "full stack": lambda q, p=project: search(ws, p, q, 10),
                "index only": lambda q, i=index: i.search(q, 10),
            }
            p50s: dict[str, list[float]] = {side: [] for side in sides}
            for round_no in range(3):
                seconds: dict[str, list[float]] = {side: [] for side in sides}
                for number, query in enumerate(queries):
                    order = list(sides) if (number + round_no) % 2 == 0 else list(sides)[::-1]
                    for side in order:
                        began = time.perf_counter()
                        sides[side](query)
                        seconds[side].append(time.perf_counter() - began)
                for side, values in seconds.items():
                    p50s[side].append(statistics.median(values) * 1000)
            text_mb = size * 8.5 / 1000
            shown = ", ".join(
                f"{side} p50 min {min(v):.2f} / median {statistics.median(v):.2f} ms"
                for side, v in p50s.items()
            )
            print(f"{size:>6,} docs (~{text_mb:.0f} MB text): {shown}", flush=True)
        print(f"load average {os.getloadavg()}")
        ws.close()


if __name__ == "__main__":
    main()
