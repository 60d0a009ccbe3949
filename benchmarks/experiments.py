"""Time of experiments on the demo project with many accepted items.

Builds the demo project, adds ``--tasks`` accepted single-turn items (the demo gold set
repeated), then times: building the tasks, creating the experiment (task snapshots), and
running it with a keyword retriever in retrieval mode and, separately, in rag mode with the
offline generator. Prints seconds and tasks per second.

    python benchmarks/experiments.py [--tasks 1000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from assay.corpus.documents import get_document_by_name
from assay.demo import gold_items, open_demo
from assay.experiments import build_tasks, create_experiment, run_experiment
from assay.gold.items import create_item
from assay.records import Evidence, Item, Turn
from assay.store.settings import Settings
from assay.store.workspace import Workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, Workspace.open(Settings(home=Path(home))) as ws:
        project, _ = open_demo(ws)
        gold = gold_items()
        began = time.perf_counter()
        for number in range(args.tasks):
            entry = gold[number % len(gold)]
            evidence = [
                Evidence(
                    doc_id=get_document_by_name(ws, project, e["document"]).id,
                    text=e["text"],
                    label=e["label"],
                    group=e.get("group"),
                )
                for e in entry["evidence"]
            ]
            turn = Turn(
                query=entry["query"],
                query_type=entry["query_type"],
                answer=entry["answer"],
                evidence=evidence,
            )
            create_item(ws, project, Item(turns=[turn]), status="accepted")
        print(f"items: {args.tasks} created in {time.perf_counter() - began:.1f} s")

        began = time.perf_counter()
        tasks = build_tasks(ws, project)
        print(f"build_tasks: {len(tasks)} tasks in {time.perf_counter() - began:.2f} s")

        for mode in ("retrieval", "rag"):
            began = time.perf_counter()
            name = f"bench-{mode}"
            created = create_experiment(ws, project, name, pipelines=["keyword"], mode=mode)
            created_s = time.perf_counter() - began
            began = time.perf_counter()
            done = run_experiment(ws, project, created.id)
            run_s = time.perf_counter() - began
            print(
                f"{mode}: create {created_s:.2f} s; run {run_s:.1f} s for {done.task_count} "
                f"tasks ({done.task_count / run_s:.0f} tasks/s), status {done.status}, "
                f"errors {done.error_count}; metrics {', '.join(done.metric_names)}"
            )
            overall = done.aggregates["keyword"]["overall"]
            shown = {name: round(part["mean"], 3) for name, part in overall.items()}
            print(f"  means: {shown}")


if __name__ == "__main__":
    main()
