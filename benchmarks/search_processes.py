"""Several server processes over one workspace: how soon one sees another's write, what the
freshness check costs a search, and how many item saves per second 1 or 2 workers take.

    python benchmarks/search_processes.py [--docs 1000] [--writes 10] [--rounds 3]
        [--seconds 5] [--clients 8] [--only sqlite|postgres]

For SQLite and PostgreSQL (from ``ASSAY_TEST_POSTGRES_URL``, or a throwaway server as in
import_autosave.py), rounds alternating which goes first:

- **seen after**: two ``assay serve`` processes A and B over a project of ``--docs`` documents;
  ``--writes`` uploads through A, each of a document with a word of its own, and after each
  B is searched for that word in a loop until it finds it. Printed: the time from A's answer
  to B's first finding search (min / median / max over the writes), with the index folder
  shared ("seen") and with B keeping its own (``apart``, as on another machine: B's search
  then catches up from the database).
- **check per search** (in this process): full-stack search (open the index, compare its
  marker with the database, search) against the index alone, alternating per query; the
  difference is what keeping step with other processes costs each search.
- **saves/s**: ``--clients`` threads each save an item of their own through the web API as fast
  as they can for ``--seconds``, against ``assay serve --workers 1`` and ``--workers 2``.

Each figure: min / median over the rounds, and the load average. Figures of a run on the
shared 2-core machine: docs/backends.md#several-processes.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from import_autosave import free_port, fresh_database, postgres_server
from seeding import seed_documents

import assay
from assay.corpus.chunkings import get_chunking
from assay.gold.items import create_item
from assay.records import Item, Turn
from assay.search.indexes import open_keyword_index, search, sync_project
from assay.store.projects import create_project, get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace

SRC = str(Path(assay.__file__).resolve().parents[1])
WORDS = "ferry harbour budget travel policy contract leave audit route depot ticket".split()


def _texts(count: int, rng: random.Random) -> Iterator[tuple[str, str]]:
    for i in range(count):
        yield (
            f"doc{i:06d}.txt",
            " ".join(rng.choice(WORDS) + str(rng.randint(0, 999)) for _ in range(150)),
        )


@contextmanager
def serving(home: Path, url: str, workers: int = 1) -> Iterator[httpx.Client]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    env.update(ASSAY_HOME=str(home), ASSAY_DATABASE_URL=url, PYTHONPATH=SRC)
    command = [sys.executable, "-m", "assay", "serve", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--workers", str(workers)], env=env, stdout=subprocess.DEVNULL
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            for _ in range(600):
                try:
                    client.get("/api/projects")
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            client.headers["x-csrf-token"] = client.cookies["assay_csrf"]
            yield client
    finally:
        process.terminate()
        process.wait()


def seen_after(home: Path, url: str, writes: int, home_b: Path | None = None) -> list[float]:
    """Seconds from A's answer to an upload until B's search finds the document; B keeps its
    index in ``home_b`` when given (as on another machine), else shares A's."""
    waited: list[float] = []
    with serving(home, url) as first, serving(home_b or home, url) as second:
        second.get("/api/projects/bench/search", params={"q": "ferry1"})
        for number in range(writes):
            word = f"zeppelin{number}x{random.randrange(10**9)}"
            data = f"{word} leaves the harbour at noon.".encode()
            answer = first.post(
                "/api/projects/bench/documents", files={"file": (f"{word}.txt", data)}
            )
            assert answer.status_code == 201, answer.text
            written = time.perf_counter()
            while not second.get("/api/projects/bench/search", params={"q": word}).json():
                if time.perf_counter() - written > 30:
                    raise AssertionError(f"B did not see {word} within 30 s")
            waited.append(time.perf_counter() - written)
    return waited


def check_cost(ws: Workspace, queries: list[str]) -> dict[str, float]:
    """p50 ms of full-stack search and of the index alone, alternating per query."""
    project = get_project(ws, "bench")
    index = open_keyword_index(ws, project, get_chunking(ws, project))
    sides: dict[str, Callable[[str], object]] = {
        "full stack": lambda q: search(ws, project, q, 10),
        "index only": lambda q: index.search(q, 10),
    }
    seconds: dict[str, list[float]] = {side: [] for side in sides}
    for number, query in enumerate(queries):
        for side in list(sides) if number % 2 == 0 else list(sides)[::-1]:
            began = time.perf_counter()
            sides[side](query)
            seconds[side].append(time.perf_counter() - began)
    return {side: statistics.median(values) * 1000 for side, values in seconds.items()}


def saves_per_second(home: Path, url: str, workers: int, clients: int, seconds: float) -> float:
    """Item saves per second (200 answers only) from ``clients`` threads, one item each."""
    with Workspace.open(Settings(home=home, database_url=url)) as ws:
        project = get_project(ws, "bench")
        ids = [
            create_item(ws, project, Item(turns=[Turn(query=f"saved by {n}")])).id
            for n in range(clients)
        ]
    saved = [0] * clients
    failed = [0] * clients
    with serving(home, url, workers) as client:
        headers, cookies = dict(client.headers), dict(client.cookies)
        start = time.perf_counter() + 0.5

        def save(n: int) -> None:
            with httpx.Client(
                base_url=client.base_url, headers=headers, cookies=cookies, timeout=60
            ) as own:
                path = f"/api/projects/bench/items/{ids[n]}"
                version = own.get(path).json()["item"]["version"]
                time.sleep(max(0.0, start - time.perf_counter()))
                while time.perf_counter() - start < seconds:
                    body = {"version": version, "item": {"turns": [{"query": f"edit {version}"}]}}
                    answer = own.put(path, json=body)
                    if answer.status_code == 200:
                        version = answer.json()["item"]["version"]
                        saved[n] += 1
                    else:
                        failed[n] += 1

        threads = [threading.Thread(target=save, args=(n,)) for n in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if sum(failed):
        print(f"  ({sum(failed)} saves failed with workers={workers})")
    return sum(saved) / seconds


def one_round(kind: str, args: argparse.Namespace, pg_url: str | None) -> dict[str, float]:
    home = Path(tempfile.mkdtemp(prefix="assay-bench-"))
    rng = random.Random(7)
    try:
        with fresh_database(kind, home, pg_url) as url:
            with Workspace.open(Settings(home=home, database_url=url)) as ws:
                project = create_project(ws, "bench", "en")
                seed_documents(ws.engine, project.id, _texts(args.docs, rng), 600)
                sync_project(ws, project)
                queries = [
                    " ".join(rng.choice(WORDS) + str(rng.randint(0, 999)) for _ in range(3))
                    for _ in range(200)
                ]
                cost = check_cost(ws, queries)
            waited = seen_after(home, url, args.writes)
            (home / "b").mkdir()
            apart = seen_after(home, url, args.writes, home / "b")
            rates = {
                workers: saves_per_second(home, url, workers, args.clients, args.seconds)
                for workers in ((1, 2) if random.random() < 0.5 else (2, 1))
            }
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return {
        "seen min": min(waited) * 1000,
        "seen median": statistics.median(waited) * 1000,
        "seen max": max(waited) * 1000,
        "apart median": statistics.median(apart) * 1000,
        "apart max": max(apart) * 1000,
        "full stack": cost["full stack"],
        "index only": cost["index only"],
        "saves/s 1 worker": rates[1],
        "saves/s 2 workers": rates[2],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--writes", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    with postgres_server() as pg_url:
        kinds = [k for k in ("sqlite", "postgres") if args.only in (None, k)]
        if "postgres" in kinds and pg_url is None:
            print("note: no PostgreSQL (set ASSAY_TEST_POSTGRES_URL or install it): skipped")
            kinds.remove("postgres")
        results: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
        for number in range(1, args.rounds + 1):
            for kind in kinds if number % 2 else kinds[::-1]:  # alternate which goes first
                found = one_round(kind, args, pg_url)
                results[kind].append(found)
                shown = "  ".join(f"{name} {value:.1f}" for name, value in found.items())
                print(f"round {number} {kind:8} {shown}  load {os.getloadavg()[0]:.2f}")
    for kind, rounds in results.items():
        print(f"{kind}: (ms, or saves per second)")
        for name in rounds[0]:
            values = [r[name] for r in rounds]
            print(f"  {name:18} min {min(values):8.1f} / median {statistics.median(values):8.1f}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
