"""Job pickup: how long a submitted experiment run waits before a process starts it.

Measured from ``submit`` until the run marks the experiment ``running`` (its first
transaction), watched by polling the database every 2 ms, for four sides:

- ``sqlite worker``: an idle ``assay worker`` process on a SQLite workspace (the jobs table,
  polled about once a second), measured on its second job (the first shows it is up);
- ``postgres worker``: the same on PostgreSQL (procrastinate, woken by LISTEN/NOTIFY);
- ``sqlite here`` / ``postgres here``: the submitting process runs the job itself (what a
  server does with ASSAY_SERVER_RUNS_JOBS), no worker running.

Each round runs every side once, alternating the order, so all see the same machine load.
Printed: every run, min / median per side, and the load average before and after.

    python benchmarks/job_pickup.py [--rounds 5]

PostgreSQL comes from ASSAY_TEST_POSTGRES_URL or a throwaway server started on loopback
(skipped when there is none).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from import_autosave import fresh_database, postgres_server

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from assay.corpus.chunkings import create_chunking  # noqa: E402
from assay.corpus.ingest import ingest_bytes  # noqa: E402
from assay.experiments import create_experiment, get_experiment  # noqa: E402
from assay.gold.items import create_item  # noqa: E402
from assay.jobs import open_jobs  # noqa: E402
from assay.jobs.kinds import submit_experiment  # noqa: E402
from assay.records import Evidence, Item, Project, Turn  # noqa: E402
from assay.store.projects import create_project  # noqa: E402
from assay.store.settings import Settings  # noqa: E402
from assay.store.workspace import Workspace  # noqa: E402

TEXT = b"Leave policy\n\nEvery employee has 30 days of paid leave per calendar year.\n"


def seed(ws: Workspace) -> Project:
    project = create_project(ws, "bench", "en")
    doc = ingest_bytes(ws, project, "leave.txt", TEXT)
    create_chunking(ws, project, "para", "recursive", {"max_length": 120}, make_default=True)
    evidence = Evidence(doc_id=doc.id, text="30 days of paid leave")  # type: ignore[call-arg]
    turn = Turn(query="How many days of leave?", answer="30 days.", evidence=[evidence])
    create_item(ws, project, Item(turns=[turn]), status="accepted")
    return project


def pickup(ws: Workspace, project: Project, name: str, run_here: bool) -> float:
    """Seconds from submit until the run started (it then runs to the end)."""
    created = create_experiment(ws, project, name, pipelines=["keyword"])
    jobs = open_jobs(ws, run_here=run_here)
    start = time.perf_counter()
    assert submit_experiment(jobs, ws, created.id)
    while get_experiment(ws, project, created.id, with_aggregates=False).status == "pending":
        time.sleep(0.002)
    seconds = time.perf_counter() - start
    while get_experiment(ws, project, created.id, with_aggregates=False).status == "running":
        time.sleep(0.01)
    jobs.stop()
    return seconds


def worker(home: Path, url: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update(ASSAY_HOME=str(home), ASSAY_DATABASE_URL=url, PYTHONPATH=str(ROOT / "src"))
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "worker"], env=env, stdout=subprocess.DEVNULL
    )
    return process


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    figures: dict[str, list[float]] = {}
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        pg_url = stack.enter_context(postgres_server())
        kinds = ["sqlite"] + (["postgres"] if pg_url else [])
        opened = {}
        for kind in kinds:
            home = Path(tmp) / kind
            url = stack.enter_context(fresh_database(kind, home, pg_url))
            ws = Workspace.open(Settings(home=home, database_url=url))
            stack.callback(ws.close)
            opened[kind] = (ws, seed(ws), home, url)
        sides = [(kind, where) for where in ("worker", "here") for kind in kinds]
        for number in range(1, args.rounds + 1):
            order = sides if number % 2 else list(reversed(sides))
            for kind, where in order:
                ws, project, home, url = opened[kind]
                process = worker(home, url) if where == "worker" else None
                try:
                    if process is not None:  # a first run, not measured: the worker is up
                        pickup(ws, project, f"r{number}-warm-up", False)
                    seconds = pickup(ws, project, f"r{number}-{where}", where == "here")
                finally:
                    if process is not None:
                        process.send_signal(signal.SIGTERM)
                        process.wait(timeout=30)
                side = f"{kind} {where}"
                figures.setdefault(side, []).append(seconds)
                print(f"round {number}  {side:16} {seconds * 1000:8.1f} ms  "
                      f"load {os.getloadavg()[0]:.2f}")  # fmt: skip
    for side, values in figures.items():
        print(f"{side:16} min {min(values) * 1000:8.1f} ms  "
              f"median {statistics.median(values) * 1000:8.1f} ms")  # fmt: skip
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
