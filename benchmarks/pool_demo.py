"""The demo project's pool: coverage per pool configuration, the time of a project pool, and
how the unanswerable check's strong-hit rule separates the demo's answerable questions from
its unanswerable ones.

Builds the demo (documents and accepted gold items, as ``assay demo --no-serve``) in a
temporary workspace, then for each source set pools every question ``--depth`` deep and
prints questions, pooled, judged and coverage; the pooling is timed ``--rounds`` times,
alternating the source sets, and min / median are printed with the load average (the first
round of a set also builds its indexes: it is printed apart). Last, for every question, the
best share of its words any pooled passage holds, and how many questions of each kind reach
each threshold.

    python benchmarks/pool_demo.py [--depth 10] [--rounds 3]

Recorded (2 cores shared with seven other helpers' work, load 10-13, depth 10, 3 rounds):
keyword+dense 53 questions, 787 pooled, 75 judged (9.5 %), min / median 9.2 / 10.4 s;
keyword, dense and hybrid 815 pooled, 75 judged (9.2 %), 23.8 / 25.5 s (hybrid searches each
member 100 deep and embeds the query again). Best word share, 42 answerable / 11 unanswerable
questions: >= 0.5: 34 / 6, >= 0.6: 30 / 4, >= 0.67: 18 / 2, >= 0.75: 14 / 1, >= 0.8: 11 / 0,
>= 0.9: 3 / 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from assay.demo import open_demo
from assay.experiments.pools import project_pool
from assay.gold.unanswerable import strong_hits
from assay.search.pool_settings import parse_pool_settings
from assay.store.settings import Settings
from assay.store.workspace import Workspace

SETS = {
    "keyword+dense": ["keyword", "dense"],
    "keyword+dense+hybrid": ["keyword", "dense", "hybrid"],
}
THRESHOLDS = (0.5, 0.6, 0.67, 0.75, 0.8, 0.9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        ws = Workspace.open(Settings(home=Path(home)), create=True)
        project, _ = open_demo(ws, with_items=True)
        times: dict[str, list[float]] = {name: [] for name in SETS}
        figures: dict[str, dict[str, object]] = {}
        last = None
        for round_ in range(args.rounds + 1):  # round 0 builds the indexes
            for name, kinds in SETS.items():
                settings = parse_pool_settings(
                    {"depth": args.depth, "sources": [{"name": k, "kind": k} for k in kinds]}
                )
                began = time.perf_counter()
                whole = project_pool(ws, project, settings, statuses="all")
                took = time.perf_counter() - began
                if round_ == 0:
                    print(f"{name}: first round (indexes built) {took:.1f} s")
                    figures[name] = whole.summary()
                    last = whole
                else:
                    times[name].append(took)
        for name, summary in figures.items():
            coverage = summary["coverage"]
            print(
                f"{name}: {summary['questions']} questions, {summary['pooled']} pooled, "
                f"{summary['judged']} judged ({coverage:.1%}); min / median "
                f"{min(times[name]):.1f} / {statistics.median(times[name]):.1f} s"
            )
        assert last is not None
        best: dict[bool, list[float]] = {False: [], True: []}
        for pool in last.pools:
            found = strong_hits(
                pool.query, [e.to_json() for e in pool.entries], min_coverage=0.0, min_words=1
            )
            best[pool.marked_unanswerable].append(found[0].coverage if found else 0.0)
        print("best word share of a pooled passage, answerable / unanswerable questions:")
        for threshold in THRESHOLDS:
            reach = [sum(v >= threshold for v in best[kind]) for kind in (False, True)]
            counts = f"{reach[0]} of {len(best[False])} / {reach[1]} of {len(best[True])}"
            print(f"  >= {threshold}: {counts}")
        ws.close()
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
