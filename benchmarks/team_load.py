"""A team at work: 50 signed-in annotators on one server, on SQLite and on PostgreSQL.

The workspace holds the project of benchmarks/workbench.py (by default 100k items and 1M
sentence chunks over 1,000 documents). SQLite's is seeded once per ``--home`` and reused;
PostgreSQL's is seeded in every run on a throwaway server (or kept on the server
``ASSAY_TEST_POSTGRES_URL`` names). Team mode is on; every simulated annotator has an
account, is an annotator of the project and signs in through the API as the sign-in page
does. The items are split among the annotators (by a hash of the id), so each one's list holds
their own items, as in a team.

Each annotator repeats what a person at the workbench does, with a think time drawn from an
exponential distribution (mean ``--think`` seconds) before every request:
  1. opens a random page of the items list (one of the first 20);
  2. opens an item from that page through the link the page shows (with its list context);
  3. reads the item's JSON, searches while typing (three growing prefixes of a question);
  4. autosaves 3 times, each save sending the version it read.
Latencies are measured at the client (httpx, HTTP/1.1 keep-alive, one connection per
annotator). Every acknowledged save's answer is checked against the database at the end: a
save answered 200 whose text is not stored counts as lost.

``--warmup S`` lets the team work S seconds before the clock starts (their requests are not
timed, their saves are checked): a fresh server's first requests open the 1M-chunk index, fill
the connection pool and warm the database's caches, which a server that has been up for a while
has done long ago. ``--team-workers N`` runs the team against N server processes.

Then a closed loop (no think time, ``--closed-clients`` clients, ``--closed-seconds``) gives
requests/s for each ``--workers`` count, alternating databases in one run.

The load generator runs in this process on the same machine, so it takes CPU from the server:
figures are a floor for a server with its own cores.

    python benchmarks/team_load.py [--home DIR] [--items 100000] [--docs 1000]
        [--chunks-per-doc 1000] [--annotators 50] [--seconds 120] [--think 1.0]
        [--team-workers 1] [--warmup 0] [--workers 1,2,4] [--closed-clients 16]
        [--closed-seconds 20] [--rounds 1] [--only sqlite|postgres] [--pg-database NAME]

``--pg-database``: the database's name on the PostgreSQL server (default assay_team_load);
give your own on a server others run the benchmark on too.

Goals (issue 13): autosave p95 <= 50 ms, editor p95 <= 150 ms, search-while-typing p95
<= 50 ms, 0 errors, 0 lost saves.

Recorded on the shared 2-core machine (load generator, server and PostgreSQL on the same two
cores; load average 1.2-5.3 at the end of a round), 100k items, 1M sentence chunks, 50
annotators, think time 1 s, 2 minutes, one worker; p50 / p95 in ms:

    after migration 0011    SQLite          PostgreSQL
    autosave                18.5 / 61.5     92.7 / 294.5
    editor page             16.2 / 65.8     186.8 / 844.9
    item JSON               10.4 / 45.7     55.8 / 424.3
    list page               16.4 / 175.7    147.9 / 1203.1
    search while typing     16.4 / 49.5     60.8 / 238.6
    requests/s, errors      51.7, 0         44.1, 0
    acknowledged / lost     746 / 0         655 / 0

Before migration 0011 (an annotator's own list walked the project's time index), SQLite had
autosave 19.7 / 82.8, editor 75.5 / 664.7, list 81.9 / 960.6, search 18.7 / 98.7; PostgreSQL
was about the same as after. Closed loop, 16 clients, 20 s (one round): SQLite 66.0 / 73.8 /
78.7 requests/s with 1 / 2 / 4 workers, PostgreSQL 60.5 / 56.0 / 53.7 (before 0011); after:
SQLite 84.4, PostgreSQL 54.3 with 1 worker. On SQLite the editor and search goals are met and
autosave is not (p95 61.5 ms); on PostgreSQL none of the three is: a save is 27 statements
(the item is read three times) and each pooled checkout pings and resets the connection, all
on the two cores the load generator also uses.

After the team workflow (issue 14) on the same seeded SQLite project, quiet machine (load 1.8),
one worker: autosave 22.2 / 125.1, editor 23.9 / 174.5, item JSON 13.8 / 93.9, list 21.2 /
556.0, search 18.9 / 79.3 (p50 / p95 ms), 50.9 requests/s, 0 errors, 729 saves / 0 lost;
closed loop 74.1 requests/s. An annotator's own list now also counts the items assigned to
them, and those list pages take the CPU the other requests wait for.

Until the annotators signed in before the clock started, every annotator's first list page
waited behind the 50 sign-ins' Argon2 checks: in a 40-second run at load 19-27 (think 3 s,
about one list page each) the list page's p50 was 5.2-6.1 s against 0.2-0.5 s for the editor.
In the 2-minute runs above those 50 first pages were about 8% of the list pages (about 13
each), enough to set the list page's p95 there. This project's annotators have no tasks
(their lists are what they wrote), so the list pages' own cost is that of
benchmarks/own_list.py's "written only".

After the autosave path was cut down (one transaction reading the item once, PostgreSQL
without a ping per checkout and with autocommit reads; ``benchmarks/save_path.py`` has the
statements and CPU per request), a small run only (20k items, 100k chunks, 20 annotators,
30 s, one worker, one round per side, in turn) on a machine busy with other work (load 8-12,
so these are far above the quiet figures above and only the sides' difference means
anything); p50 / p95 ms:

                            SQLite before   SQLite after    PostgreSQL before  after
    autosave                210.8 / 705.5   58.0 / 183.4    120.7 / 286.4   101.5 / 263.0
    item JSON               87.7 / 488.1    42.6 / 173.0    48.4 / 183.5    55.0 / 118.0
    editor page             427.6 / 1138.5  142.7 / 330.3   275.9 / 648.4   292.5 / 660.2
    requests/s, errors      13.9, 0         17.3, 0         15.6, 0         16.4, 0
    acknowledged / lost     63 / 0          81 / 0          71 / 0          77 / 0

(load at the end of each: 11.9, 9.4, 8.3, 7.6). A second round with the item read in one
statement too, load 5.6 / 6.5 / 6.9 / 4.7 at the end of each:

                            SQLite before   SQLite after    PostgreSQL before  after
    autosave                37.8 / 117.4    24.9 / 104.2    140.2 / 313.0   21.2 / 88.8
    item JSON               34.5 / 306.5    19.3 / 214.2    65.6 / 192.8    15.0 / 92.9
    editor page             85.2 / 491.3    85.5 / 325.4    262.7 / 633.2   86.9 / 444.1
    search while typing     34.1 / 113.6    33.3 / 121.5    74.3 / 244.5    17.3 / 88.6
    requests/s, errors      17.9, 0         18.2, 0         16.1, 0         18.4, 0
    acknowledged / lost     81 / 0          82 / 0          76 / 0          82 / 0

The quiet run after all of that (and the editor page's, list page's and search's own cuts:
catalog messages picked once, static URLs kept, Previous/Next in one read, the stale-evidence
index of migration 0018, document names by primary key). Same seeded project, 100k items, 1M
chunks, 50 annotators, think 1 s, 20 s warm-up then 2 minutes, nothing else running (load 0.5-1.4
at the end of each round); p50 / p95 ms:

                            SQLite 1 worker  PostgreSQL 1   SQLite 2 workers  PostgreSQL 2
    autosave                12.9 / 40.9      25.9 / 122.7   14.9 / 44.8       24.9 / 69.7
    editor page             16.1 / 43.2      37.5 / 165.7   19.2 / 44.2       31.9 / 88.8
    item JSON               7.5 / 28.7       13.1 / 58.3    8.2 / 26.7        12.1 / 32.6
    list page               18.0 / 49.4      30.6 / 124.0   21.5 / 47.8       28.4 / 79.5
    search while typing     12.1 / 36.9      18.3 / 92.2    13.7 / 35.3       17.4 / 52.7
    requests/s, errors      53.1, 0          52.0, 0        52.3, 0           51.9, 0
    acknowledged / lost     900 / 0          878 / 0        898 / 0           885 / 0

Closed loop, 16 clients, 20 s, one round, databases alternating: SQLite 94.3 / 184.8 / 179.8
requests/s with 1 / 2 / 4 workers, PostgreSQL 80.0 / 117.5 / 121.7 (a second round of 2
workers, 5 s: 186.1 and 104.3). Two cores: a third and fourth process add nothing.

SQLite meets the three goals with one worker. PostgreSQL meets the editor goal with two
workers and misses autosave (69.7 ms against 50) and search-while-typing (52.7 against 50):
its server processes share the two cores with the load generator and the Python workers, and a
save is still 17 statements.

After the access check became one statement (``assay.people.guard_read``; the role and item
owner it read serve the route's own checks) and the team's reads left their BEGIN/ROLLBACK
(round trips per request on PostgreSQL: autosave 20 -> 14, item JSON 7 -> 3, editor page
35 -> 8, search while typing 11 -> 4, list page 21 -> 5), a small run only: 20k items, 100k
chunks, 20 annotators, think 1 s, 10 s warm-up then 30 s, 2 workers, closed loop 16 clients
10 s with 2 workers; before = main at 283dbc3, after = these changes; PostgreSQL two rounds
alternating sides, then SQLite one round each; other sessions' tests ran meanwhile (load 3.0-6.2
at the start of a run); p50 / p95 ms:

    PostgreSQL          before, round 1  round 2        after, round 1   round 2
    autosave            30.4 / 57.1      28.1 / 68.1    16.6 / 40.0      16.3 / 37.9
    editor page         44.3 / 80.2      39.0 / 76.5    19.9 / 39.2      17.5 / 34.6
    item JSON           14.0 / 34.8      12.8 / 28.9     8.5 / 22.7       9.0 / 20.8
    list page           34.6 / 65.7      30.8 / 71.0    28.0 / 49.6      26.5 / 47.1
    search w. typing    18.8 / 45.2      18.5 / 49.8    12.4 / 28.9      12.3 / 29.1
    closed loop req/s   107.6            84.6           127.4            115.4

    SQLite              before           after
    autosave             9.6 / 20.7      10.5 / 20.9
    editor page         11.5 / 22.7      12.3 / 23.4
    item JSON            4.4 / 14.2       4.8 / 12.0
    list page           14.0 / 24.3      14.5 / 25.6
    search w. typing     8.0 / 18.3       9.5 / 19.6
    closed loop req/s   108.5            152.2

0 errors and 0 lost saves in every run (112-114 acknowledged). On PostgreSQL the autosave's
p95 fell by a third and the editor page's by half; SQLite's latencies did not move (its
statements were cheap, in-process calls). Where the CPU went during these runs (``/proc``
sampled each second): the load generator used 4.3-4.7 s per run, about 2.2 ms per request
(some 12% of one core at the team's 52 requests/s, 30% in the closed loop), PostgreSQL's
processes 3.2-4.8 s (1.6-2.4 ms per request, as ``save_path.py`` finds per autosave), the
server processes most of the rest: the client is not what makes PostgreSQL slower here.

The quiet run after those changes, with the two-process import and the own-list walk merged
(main at 6da2ea0): same seeded 100k-item, 1M-chunk project, 50 annotators, think 1 s, 20 s
warm-up then 2 minutes, 2 workers, nothing else running (load 0.4 / 0.7 at the end of each
round); p50 / p95 ms:

                            SQLite 2 workers   PostgreSQL 2 workers
    autosave                10.3 / 26.6        15.9 / 37.0
    editor page             12.6 / 26.8        16.5 / 34.5
    item JSON                6.0 / 18.1         7.7 / 19.2
    list page               15.2 / 30.1        25.5 / 51.2
    search while typing     10.5 / 25.4        12.3 / 28.2
    requests/s, errors      51.9, 0            52.9, 0
    acknowledged / lost     905 / 0            900 / 0

Both databases meet the three goals (autosave and search-while-typing p95 <= 50 ms, editor
<= 150 ms). Closed loop, 16 clients, one round, databases alternating: SQLite 112.1 / 158.1 /
243.3 requests/s with 1 / 2 / 4 workers, PostgreSQL 112.4 / 141.5 / 145.5 (load 1.7-7.3
during these rounds, the earlier rounds' processes still ending).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import random
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).parent))
from import_autosave import free_port, postgres_server
from workbench import PROJECT, WORDS, seed

from assay.store.settings import Settings
from assay.store.workspace import Workspace

PASSWORD = "team-load-password-1"
LINK = re.compile(r'href="(/projects/[^"/]+/items/([0-9a-f-]{36})\?[^"]*)"')


@dataclass
class Figures:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    saved: dict[str, str] = field(default_factory=dict)
    """item id -> the answer of its last acknowledged save"""
    since: float = 0.0
    """Latencies are kept from this monotonic time on (the warm-up before is not timed)."""


def prepare(kind: str, home: Path, url: str, args: argparse.Namespace) -> None:
    """Seed (once), then accounts, members and team mode (idempotent)."""
    from assay.errors import NotFound
    from assay.people.accounts import create_account, get_account
    from assay.people.members import set_role
    from assay.people.mode import set_team_mode

    ws = Workspace.open(Settings(home=home, database_url=url))
    try:
        project = seed(ws, args)
        names = [f"annotator{n:02d}" for n in range(args.annotators)]
        try:
            get_account(ws, "lead")
        except NotFound:
            create_account(ws, "lead", PASSWORD, admin=True)
        for name in names:
            try:
                get_account(ws, name)
            except NotFound:
                create_account(ws, name, PASSWORD)
            set_role(ws, project.id, get_account(ws, name).id, "annotator")
        hand_out_items(ws, project.id, [get_account(ws, name).id for name in names])
        set_team_mode(ws, True)
    finally:
        ws.close()
    print(f"[{kind}] prepared: {args.annotators} annotator accounts, team mode on", flush=True)


def owner_of(item_id: str, count: int) -> int:
    """Which annotator an item belongs to: the items are split among them by a hash."""
    return int(hashlib.sha1(item_id.encode()).hexdigest(), 16) % count


def hand_out_items(ws: Workspace, project_id: int, account_ids: list[int]) -> None:
    """Make every item one annotator's own, so each works on their own list, as annotators
    do (their lists show only their items)."""
    from assay.store.schema import items

    with ws.engine.begin() as conn:
        ids = conn.scalars(sa.select(items.c.id).where(items.c.project_id == project_id)).all()
        shares: dict[int, list[str]] = defaultdict(list)
        for item_id in ids:
            shares[owner_of(item_id, len(account_ids))].append(item_id)
        for number, share in shares.items():
            for first in range(0, len(share), 5000):
                conn.execute(
                    items.update()
                    .where(items.c.id.in_(share[first : first + 5000]))
                    .values(author_id=account_ids[number])
                )


@contextmanager
def server(home: Path, url: str, workers: int) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "ASSAY_HOME": str(home), "ASSAY_DATABASE_URL": url}
    command = [sys.executable, "-m", "assay", "serve", "--port", str(port)]
    if workers > 1:
        command += ["--workers", str(workers)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/api/session", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start (exit code {process.poll()})")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


async def signed_in(base: str, username: str) -> httpx.AsyncClient:
    client = httpx.AsyncClient(base_url=base, timeout=30)
    await client.get("/login")
    csrf = client.cookies.get("assay_csrf", "")
    client.headers["X-CSRF-Token"] = csrf
    reply = await client.post("/api/session", json={"username": username, "password": PASSWORD})
    reply.raise_for_status()
    return client


async def timed(figures: Figures, label: str, call: Any) -> httpx.Response | None:
    began = time.perf_counter()
    counted = time.monotonic() >= figures.since
    try:
        reply: httpx.Response = await call
    except httpx.HTTPError:
        figures.errors[label] += 1
        return None
    if counted:
        figures.latencies[label].append((time.perf_counter() - began) * 1000)
    if reply.status_code >= 400:
        figures.errors[label] += 1
        return None
    return reply


async def annotator(
    client: httpx.AsyncClient, number: int, count: int, until: float, think: float,
    figures: Figures,
) -> None:  # fmt: skip
    rng = random.Random(number)
    items = f"/projects/{PROJECT}/items"
    api = f"/api/projects/{PROJECT}"

    async def pause() -> None:
        await asyncio.sleep(rng.expovariate(1 / think) if think else 0)

    try:
        while time.monotonic() < until:
            await pause()
            page = await timed(
                figures, "list page", client.get(items, params={"page": rng.randint(1, 20)})
            )
            if page is None:
                continue
            links = [
                (url, item_id)
                for url, item_id in LINK.findall(page.text)
                if owner_of(item_id, count) == number
            ]
            if not links:
                continue
            url, item_id = rng.choice(links)
            await pause()
            if await timed(figures, "editor page", client.get(url.replace("&amp;", "&"))) is None:
                continue
            reply = await timed(figures, "item JSON", client.get(f"{api}/items/{item_id}"))
            if reply is None:
                continue
            payload = reply.json()
            words = [rng.choice(WORDS) for _ in range(3)]
            for typed in range(1, 4):
                await pause()
                query = " ".join(words[:typed])
                await timed(
                    figures,
                    "search while typing",
                    client.get(f"{api}/editor/search", params={"q": query}),
                )
            version, body = payload["item"]["version"], payload["input"]
            first_answer = body["turns"][0]["answer"]
            for edit in range(3):
                await pause()
                answer = f"{first_answer} (annotator {number}, edit {edit}, {time.time():.3f})"
                body["turns"][0]["answer"] = answer
                saved = await timed(
                    figures,
                    "autosave",
                    client.put(f"{api}/items/{item_id}", json={"version": version, "item": body}),
                )
                if saved is None:
                    break
                version = saved.json()["item"]["version"]
                figures.saved[item_id] = answer
    finally:
        await client.aclose()


def lost_saves(url: str, home: Path, saved: dict[str, str]) -> int:
    from assay.store.schema import turns

    ws = Workspace.open(Settings(home=home, database_url=url))
    try:
        with ws.engine.connect() as conn:
            stored = dict(
                conn.execute(
                    sa.select(turns.c.item_id, turns.c.answer).where(
                        turns.c.item_id.in_(list(saved)), turns.c.ordinal == 0
                    )
                ).all()
            )
    finally:
        ws.close()
    return sum(1 for item_id, answer in saved.items() if stored.get(item_id) != answer)


def report(kind: str, label: str, figures: Figures, seconds: float) -> None:
    total = sum(len(values) for values in figures.latencies.values())
    print(f"[{kind}] {label}: {total} requests in {seconds:.0f} s ({total / seconds:.1f}/s), "
          f"errors {dict(figures.errors) or 0}, load {os.getloadavg()[0]:.1f}")  # fmt: skip
    for name, values in sorted(figures.latencies.items()):
        ordered = sorted(values)
        p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
        print(f"    {name:<22} n={len(ordered):<6} p50 {statistics.median(ordered):7.1f} ms   "
              f"p95 {p95:7.1f} ms   max {ordered[-1]:7.1f} ms")  # fmt: skip


def run_clients(
    home: Path,
    url: str,
    workers: int,
    clients: int,
    seconds: float,
    think: float,
    count: int,
    warmup: float = 0.0,
) -> tuple[Figures, float]:
    """``clients`` annotators (numbers 0.., items split ``count`` ways) against a fresh
    server for ``warmup`` seconds not timed, then ``seconds`` timed; the figures and the
    timed seconds."""
    figures = Figures()
    with server(home, url, workers) as base:

        async def everyone() -> float:
            # everyone signs in, one after the other, before the clock starts: a team at work
            # is signed in, and 50 Argon2 checks at once held up the first list pages for
            # seconds (and under load ran past the client's timeout)
            signed = [await signed_in(base, f"annotator{n:02d}") for n in range(clients)]
            began = figures.since = time.monotonic() + warmup
            until = began + seconds
            await asyncio.gather(
                *(annotator(c, n, count, until, think, figures) for n, c in enumerate(signed))
            )
            return began

        began = asyncio.run(everyone())
    return figures, time.monotonic() - began


def team_round(kind: str, home: Path, url: str, args: argparse.Namespace) -> None:
    workers, count = args.team_workers, args.annotators
    figures, elapsed = run_clients(
        home, url, workers, count, args.seconds, args.think, count, args.warmup
    )
    label = (
        f"{count} annotators, think {args.think} s, {workers} worker(s), warm-up {args.warmup} s"
    )
    report(kind, label, figures, elapsed)
    lost = lost_saves(url, home, figures.saved)
    print(f"[{kind}]     acknowledged saves {len(figures.saved)}, lost {lost}")


def closed_round(kind: str, home: Path, url: str, workers: int, args: argparse.Namespace) -> float:
    figures, elapsed = run_clients(
        home, url, workers, args.closed_clients, args.closed_seconds, 0.0, args.annotators
    )
    total = sum(len(values) for values in figures.latencies.values())
    errors = sum(figures.errors.values())
    print(
        f"[{kind}] closed loop, {workers} worker(s), {args.closed_clients} clients: "
        f"{total / elapsed:.1f} requests/s, errors {errors}, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return total / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", default="/tmp/assay-bench-team")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--chunks-per-doc", type=int, default=1000)
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--think", type=float, default=1.0, help="mean think time, seconds")
    parser.add_argument("--workers", default="1,2,4", help="worker counts for the closed loop")
    parser.add_argument(
        "--team-workers", type=int, default=1, help="server processes for the team round"
    )
    parser.add_argument(
        "--warmup", type=float, default=0.0, help="seconds the team works before the clock starts"
    )
    parser.add_argument("--closed-clients", type=int, default=16)
    parser.add_argument("--closed-seconds", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=1, help="closed-loop rounds per worker count")
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    parser.add_argument(
        "--pg-database", default="assay_team_load", help="database name on a shared server"
    )
    args = parser.parse_args()
    args.workers = [int(n) for n in args.workers.split(",")]
    kinds = [args.only] if args.only else ["sqlite", "postgres"]
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()}", flush=True)
    with postgres_server() as pg_url:
        targets: dict[str, tuple[Path, str]] = {}
        for kind in kinds:
            home = Path(args.home) / kind
            home.mkdir(parents=True, exist_ok=True)
            if kind == "sqlite":
                targets[kind] = (home, f"sqlite:///{home / 'assay.db'}")
            elif pg_url is None:
                print("[postgres] no PostgreSQL server: skipped")
            else:
                targets[kind] = (home, database(pg_url, args.pg_database))
        for kind, (home, url) in targets.items():
            args.home = str(home)  # seed() reports where it reuses a project
            prepare(kind, home, url, args)
        for kind, (home, url) in targets.items():
            team_round(kind, home, url, args)
        rates: dict[tuple[str, int], list[float]] = defaultdict(list)
        for _ in range(args.rounds):
            for workers in args.workers:
                for kind, (home, url) in targets.items():  # databases alternate
                    rates[kind, workers].append(closed_round(kind, home, url, workers, args))
        for (kind, workers), values in sorted(rates.items()):
            print(
                f"[{kind}] closed loop {workers} worker(s): min {min(values):.1f}, median "
                f"{statistics.median(values):.1f} requests/s over {len(values)} round(s)"
            )


def database(server_url: str, name: str) -> str:
    """The benchmark's database on the server (created once, kept for reuse)."""
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if (
            conn.scalar(sa.text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name})
            is None
        ):
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return sa.make_url(server_url).set(database=name).render_as_string(hide_password=False)


if __name__ == "__main__":
    main()
