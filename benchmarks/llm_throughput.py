"""Experiments at an endpoint's speed: one worker, two workers, the ideal, and Ragas.

A fake OpenAI-compatible endpoint answers every request after a fixed latency, in a process
of its own, with a server-side limit of requests in flight (one more gets 429) and counters
(tests/fakes/latency_llm.py). A generated project of ``--tasks`` tasks (the demo's gold
questions, numbered so that every prompt differs) runs in generation mode with one
generator call per task, as queued jobs taken by ``assay worker`` processes:

1. one worker at max_in_flight 32 against an endpoint limit of 32: time against the ideal
   (tasks x latency / 32) and the peak in flight;
2. two workers at 32 each against one shared endpoint limit of 32: the peak in flight of
   both together, and the requests refused (the per-endpoint limit across processes is the
   LLM clients' business; this prints what it measures);
3. two workers against an endpoint limit of 64 (the pipeline's ``max_in_flight`` is 64 on
   PostgreSQL, where the workers lease it together, and 32 on SQLite, where each holds its
   own): time against one worker's;
4. the same tasks again, as a new experiment: the requests made (0 once the response cache
   answers them); scenarios 2 and 3 and the Ragas rounds run without the cache, so every
   request reaches the endpoint;

then peak memory of the workers, and Assay's ``assay eval`` path against Ragas' ``evaluate()``
(AspectCritic, one LLM call per sample, as Assay's generation) on the same samples, with the
same concurrency, alternating, ``--rounds`` rounds: tasks per second of both.

    python benchmarks/llm_throughput.py                      # 10,000 tasks, 500 ms
    python benchmarks/llm_throughput.py --tasks 1000 --latency 0.1   # a quick run
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update(
        ASSAY_HOME=str(home),
        ASSAY_OUTGOING_ALLOW_LOOPBACK="true",
        PYTHONPATH=os.pathsep.join([str(SRC), str(ROOT)]),
        RAGAS_DO_NOT_TRACK="true",
    )
    return env


class Endpoint:
    """The fake endpoint in a process of its own."""

    def __init__(self, latency: float, limit: int, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.fakes.latency_llm",
                "--latency",
                str(latency),
                "--limit",
                str(limit),
            ],
            env=env,
            stdout=subprocess.PIPE,
            cwd=ROOT,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().decode().strip()
        self.root = self.url.removesuffix("/v1")

    def stats(self) -> dict[str, int]:
        with urllib.request.urlopen(f"{self.root}/stats") as reply:
            found: dict[str, int] = json.load(reply)
        return found

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.root}/reset", method="POST")
        with urllib.request.urlopen(request):
            pass

    def close(self) -> None:
        self.process.terminate()
        self.process.wait()


def _tasks(ws: Any, project: Any, count: int) -> list[Any]:
    """``count`` tasks from the demo's gold questions, each question numbered."""
    from assay.experiments import build_tasks

    base = build_tasks(ws, project, statuses="all")
    made = []
    for number in range(count):
        task = base[number % len(base)]
        question = f"{task.turns[-1]} (#{number})"
        made.append(
            dataclasses.replace(
                task,
                task_id=f"bench-{number}",
                query_id=f"bench-{number}",
                aliases=(),
                turns=(*task.turns[:-1], question),
            )
        )
    return made


def _pipeline(url: str, in_flight: int) -> dict[str, Any]:
    generator = {
        "kind": "openai",
        "base_url": url,
        "model": "gen",
        "retries": 10,
        "max_in_flight": in_flight,
    }
    return {"name": "gen", "generator": generator}


def _run(
    ws: Any,
    project: Any,
    tasks: list[Any],
    name: str,
    url: str,
    workers: int,
    env: dict[str, str],
    *,
    in_flight: int = 32,
    cache: bool = True,
) -> dict[str, Any]:
    """Create the experiment, queue its run, let ``workers`` worker processes take it;
    returns the seconds from start to finish (as stored) and the workers' peak memory.
    ``in_flight``: the endpoint's limit in the pipeline (per worker process on SQLite, for
    all of them together on PostgreSQL); ``cache=False``: every request reaches the endpoint
    (the scenarios after the first ask the same questions)."""
    from assay.experiments import create_experiment, get_experiment
    from assay.jobs import open_jobs
    from assay.jobs.kinds import submit_experiment

    created = create_experiment(
        ws,
        project,
        name,
        mode="generation",
        pipelines=[_pipeline(url, in_flight)],
        metrics=["token_f1"],
        tasks=tasks,
    )
    jobs = open_jobs(ws, run_here=False)
    submit_experiment(jobs, ws, created.id, cache=cache)
    jobs.close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "assay", "worker"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(workers)
    ]
    peak_kb = 0
    try:
        while True:
            done = get_experiment(ws, project, created.id, with_aggregates=False)
            for proc in procs:
                peak_kb = max(peak_kb, _peak_kb(proc.pid))
            if done.status in ("done", "failed", "cancelled"):
                break
            time.sleep(0.5)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait()
    assert done.started_at is not None and done.finished_at is not None
    seconds = (done.finished_at - done.started_at).total_seconds()
    return {
        "seconds": seconds,
        "status": done.status,
        "done": done.done_count,
        "errors": done.error_count,
        "peak_mb": peak_kb / 1024,
    }


def _peak_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return 0
    return 0


def _ragas_round(samples: list[dict[str, Any]], url: str, workers: int) -> float:
    """Seconds Ragas' evaluate() takes over the samples (AspectCritic, one call each)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from langchain_openai import ChatOpenAI
        from ragas import EvaluationDataset, RunConfig, evaluate
        from ragas.llms import LangchainLLMWrapper
        from ragas.metrics import AspectCritic

        llm = LangchainLLMWrapper(
            ChatOpenAI(base_url=url, api_key="unused", model="gen", max_retries=10)
        )
        metric = AspectCritic(name="supported", definition="Is the response supported?", llm=llm)
        dataset = EvaluationDataset.from_list(samples)
        began = time.perf_counter()
        evaluate(
            dataset,
            metrics=[metric],
            run_config=RunConfig(max_workers=workers),
            show_progress=False,
            raise_exceptions=False,
        )
    return time.perf_counter() - began


def _assay_round(ws: Any, project: Any, tasks: list[Any], url: str, workers: int) -> float:
    from assay.experiments.pipelines import parse_pipeline
    from assay.experiments.runner import evaluate_tasks

    spec = parse_pipeline(_pipeline(url, workers))
    began = time.perf_counter()
    result = evaluate_tasks(
        ws, project, spec, tasks, mode="generation", metrics=["token_f1"], cache=False
    )
    assert result.summary["errors"] == 0, result.summary
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per request")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of Assay vs Ragas")
    parser.add_argument("--ragas-samples", type=int, default=1000)
    parser.add_argument("--skip-workers", action="store_true", help="only Assay vs Ragas")
    parser.add_argument(
        "--database-url",
        default="",
        help="an empty PostgreSQL database (postgresql+psycopg://...): the workspace lives there, "
        "as a team's does, and the endpoint limit is leased across the worker processes "
        "(default: a SQLite file, where each worker process holds the limit alone)",
    )
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    sys.path[:0] = [str(SRC), str(ROOT)]
    from assay.demo import open_demo
    from assay.store.settings import Settings
    from assay.store.workspace import Workspace

    print(f"load average: {os.getloadavg()[0]:.2f} (2 cores shared)")
    print(f"database: {'PostgreSQL' if args.database_url else 'SQLite'}")
    with tempfile.TemporaryDirectory() as home:
        env = _env(Path(home))
        if args.database_url:
            env["ASSAY_DATABASE_URL"] = args.database_url
        os.environ.update({k: v for k, v in env.items() if k.startswith(("ASSAY_", "RAGAS_"))})
        ws = Workspace.open(Settings(home=Path(home)))
        project, _ = open_demo(ws, with_items=True)
        tasks = _tasks(ws, project, args.tasks)
        ideal = args.tasks * args.latency / 32
        print(
            f"{args.tasks} tasks, {args.latency * 1000:.0f} ms a request, one request each; "
            f"ideal at 32 in flight: {ideal:.1f} s"
        )
        at32 = Endpoint(args.latency, 32, env)
        at64 = Endpoint(args.latency, 64, env)
        try:
            if not args.skip_workers:
                one = _run(ws, project, tasks, "one-worker", at32.url, 1, env)
                s = at32.stats()
                print(
                    f"1 worker @32, endpoint limit 32: {one['seconds']:.1f} s = "
                    f"{one['seconds'] / ideal:.2f}x ideal; peak in flight {s['peak']}; "
                    f"{one['done']} done, {one['errors']} errors; peak memory "
                    f"{one['peak_mb']:.0f} MB"
                )
                at32.reset()
                shared = _run(ws, project, tasks, "two-shared", at32.url, 2, env, cache=False)
                s = at32.stats()
                print(
                    f"2 workers @32, one endpoint limit 32: {shared['seconds']:.1f} s; peak "
                    f"in flight together {s['peak']} (limit 32); refused (429) "
                    f"{s['rejected']}; {shared['done']} done, {shared['errors']} errors"
                )
                # On PostgreSQL the pipeline's limit is the endpoint's, leased by all the
                # workers together: 64 there; on SQLite each worker holds its own 32.
                limit = 64 if args.database_url else 32
                two = _run(ws, project, tasks, "two-workers", at64.url, 2, env, in_flight=limit)
                s = at64.stats()
                print(
                    f"2 workers, max_in_flight {limit}, endpoint limit 64: "
                    f"{two['seconds']:.1f} s = "
                    f"{two['seconds'] / one['seconds']:.2f}x one worker; peak in flight "
                    f"{s['peak']}; peak memory per worker {two['peak_mb']:.0f} MB"
                )
                at64.reset()
                again = _run(ws, project, tasks, "cache-rerun", at64.url, 1, env, in_flight=limit)
                print(
                    f"the same tasks again (cache re-run): {at64.stats()['requests']} "
                    f"requests made, {again['seconds']:.1f} s"
                )
            count = min(args.ragas_samples, args.tasks)
            sample_tasks = tasks[:count]
            samples = [
                {
                    "user_input": t.turns[-1],
                    "response": t.answer,
                    "retrieved_contexts": [e.text for e in t.evidence] or [""],
                }
                for t in sample_tasks
            ]
            ours: list[float] = []
            theirs: list[float] = []
            for number in range(args.rounds):
                ours.append(_assay_round(ws, project, sample_tasks, at64.url, 32))
                theirs.append(_ragas_round(samples, at64.url, 32))
                print(
                    f"round {number + 1}: Assay {count / ours[-1]:.1f} tasks/s, Ragas "
                    f"{count / theirs[-1]:.1f} tasks/s"
                )
            print(
                f"{count} samples, 32 at once, {args.rounds} rounds: Assay "
                f"{count / max(ours):.1f}-{count / min(ours):.1f} tasks/s (median "
                f"{count / statistics.median(ours):.1f}); Ragas "
                f"{count / max(theirs):.1f}-{count / min(theirs):.1f} tasks/s (median "
                f"{count / statistics.median(theirs):.1f})"
            )
        finally:
            at32.close()
            at64.close()
            ws.close()
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
