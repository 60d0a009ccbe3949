"""The autosave and the item JSON of a signed-in annotator: statements and CPU per request.

Works on a workspace that ``benchmarks/team_load.py`` prepared (team mode on, annotators
``annotator00``...; e.g. ``--items 20000 --chunks-per-doc 100 --annotators 20``). In this
process (FastAPI TestClient, so no network and no uvicorn), ``annotator00`` signs in, then for
``--items`` of their own items reads the item's JSON once and autosaves it three times, each
save sending the version it read and changing the answer (as the editor does). Printed per
request kind:

- statements: SQL statements the request sent (SQLAlchemy's ``before_cursor_execute``),
- checkouts, pings: pooled connections taken, pings sent (a round trip each),
- tx commands (PostgreSQL): BEGIN, COMMIT, ROLLBACK and DEALLOCATE psycopg sent (a round
  trip each, no statement count shows them),
- CPU: process CPU time per request (``time.process_time``: this process's threads, the test
  client's share included, PostgreSQL's own work not), the median of ``--blocks`` blocks.

``--sides A,B`` compares source trees: each round runs this script once per side (in turn,
``PYTHONPATH`` set to the side's ``src``), ``--rounds`` rounds, and prints each figure's
min / median over the rounds with the load average. Every acknowledged save is checked
against the database at the end of a run (a save answered 200 whose answer is not stored
stops the run).

    python benchmarks/save_path.py --database-url URL [--items 40] [--blocks 5]
        [--sides /tmp/before/src,src --rounds 3]

Recorded on the shared 2-core machine while other work ran on it (load 7-10), on the
workspace of ``team_load.py --items 20000 --chunks-per-doc 100 --annotators 20``, 20 items x
3 blocks per run, 3 rounds alternating sides; before = main at dfa20fc, after = the autosave
path's changes; min / median over the rounds:

    per request                     SQLite before / after       PostgreSQL before / after
    autosave: statements            31.9 / 17.3                 31.7 / 17.3
    autosave: checkouts, pings      7.3, 0 / 3.0, 0             7.3, 7.3 / 3.0, 0
    autosave: tx commands           -                           15.3 / 2.0
    autosave: CPU us                8662 / 8805 -> 6811 / 7555  23177 / 24196 -> 10334 / 10969
    item JSON: statements           11 / 7                      11 / 7
    item JSON: checkouts, pings     4, 0 / 3, 0                 4, 4 / 3, 0
    item JSON: tx commands          -                           8 / 0
    item JSON: CPU us               4776 / 4802 -> 4409 / 4816  10496 / 11144 -> 6196 / 6708

Round trips to PostgreSQL per autosave (statements + pings + tx commands): 54.3 -> 19.3; per
item JSON 23 -> 7. The CPU is this process's (test client included), not PostgreSQL's own.
On SQLite the item JSON's CPU barely moved at this load although ``get_item`` alone went from
126-174 to 84-90 us (one joined statement instead of three).

``PostgreSQL CPU us``: the CPU time of PostgreSQL's server processes serving this database
(found in ``pg_stat_activity`` after the warm-up, read from ``/proc/PID/schedstat``, so the
server must run on this machine), per request. ``--show`` prints the statements of the last
request of each kind.

The access check in one statement (``assay.people.guard_read``; before = main at 283dbc3, after
= that and the autosave's import-lock check in its update and its turns' ids reused), same
workspace, 20 items x 3 blocks, 3 rounds alternating sides, load 2.7-3.4 (other work ran);
min / median:

    per request                     SQLite before / after       PostgreSQL before / after
    autosave: statements            18.3 / 12.3                 18.3 / 12.3
    autosave: tx commands           -                           2.0 / 2.0
    autosave: CPU us                5224 / 5566 -> 4450 / 5128  7029 / 8464 -> 6602 / 8674
    autosave: PostgreSQL CPU us     -                           1952 / 2372 -> 1713 / 2343
    item JSON: statements           7 / 3                       7 / 3
    item JSON: CPU us               3351 / 3572 -> 2927 / 3270  4388 / 4982 -> 3946 / 5049
    item JSON: PostgreSQL CPU us    -                           573 / 737 -> 425 / 665

Six statements fewer per autosave cost 0.4-0.8 ms less CPU in this process and 0.2 ms less in
PostgreSQL's (about 100 us and 40 us a statement); the rest of a request's CPU is the web
framework, the test client, building the item and its JSON. Under a team's load the round
trips count more than their CPU: each is a wait for PostgreSQL's process to be scheduled on
cores the server's own processes also need (``team_load.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import sqlalchemy as sa

USER = "annotator00"
PASSWORD = "team-load-password-1"  # benchmarks/team_load.py's
PROJECT = "bench"


def measure(url: str, home: Path, count: int, blocks: int, show: bool = False) -> dict[str, Any]:
    """One run: sign in, then ``blocks`` blocks of ``count`` items (read, save three times)."""
    from fastapi.testclient import TestClient

    from assay.store.schema import accounts, items, turns
    from assay.store.settings import Settings
    from assay.store.workspace import Workspace
    from assay.web import create_app

    ws = Workspace.open(Settings(home=home, database_url=url, server_runs_jobs=False))
    tally: Counter[str] = Counter()
    engine = ws.engine

    sent: list[str] = []
    shown: dict[str, list[str]] = {}

    def on_statement(*args: Any) -> None:
        tally["statements"] += 1
        sent.append(" ".join(str(args[2]).split())[:110])

    sa.event.listen(engine, "before_cursor_execute", on_statement)
    sa.event.listen(engine.pool, "checkout", lambda *_: tally.update(["checkouts"]))
    do_ping = engine.dialect.do_ping

    def counted_ping(dbapi_connection: Any) -> bool:
        tally["pings"] += 1
        return bool(do_ping(dbapi_connection))

    engine.dialect.do_ping = counted_ping  # type: ignore[method-assign]
    count_transaction_commands(tally)
    with engine.connect() as conn:
        me = conn.scalar(sa.select(accounts.c.id).where(accounts.c.username == USER))
        ids = list(
            conn.scalars(
                sa.select(items.c.id)
                .where(items.c.author_id == me, items.c.kind == "qa")
                .order_by(items.c.id)
                .limit(count * blocks)
            )
        )
    client = TestClient(create_app(ws), base_url="http://127.0.0.1:8765")
    client.__enter__()  # one event loop thread for all requests, as a server has
    client.get("/login")
    client.headers["X-CSRF-Token"] = client.cookies.get("assay_csrf", "")
    client.post("/api/session", json={"username": USER, "password": PASSWORD}).raise_for_status()
    api = f"/api/projects/{PROJECT}/items"
    per_kind: dict[str, Counter[str]] = {"item JSON": Counter(), "autosave": Counter()}
    cpu: dict[str, list[float]] = {"item JSON": [], "autosave": []}
    db_cpu: dict[str, list[float]] = {"item JSON": [], "autosave": []}
    saved: dict[str, str] = {}
    stamp = time.time()

    backends = Backends(url)

    def run(kind: str, call: Any) -> Any:
        tally.clear()
        sent.clear()
        began, began_db = time.process_time(), backends.cpu()
        reply = call()
        spent = time.process_time() - began
        per_kind[kind]["db cpu"] += backends.cpu() - began_db  # type: ignore[assignment]
        if reply.status_code != 200:
            raise SystemExit(f"{kind}: {reply.status_code} {reply.text[:300]}")
        per_kind[kind].update(tally)
        shown[kind] = list(sent)
        per_kind[kind]["requests"] += 1
        per_kind[kind]["cpu"] += spent  # type: ignore[assignment]
        return reply.json()

    client.get(f"{api}/{ids[0]}")  # warm: first-use costs (compiled statements) are not timed
    for block in range(blocks):
        backends.find()  # the pool's connections, opened by now
        spent = {kind: per_kind[kind]["cpu"] for kind in per_kind}
        spent_db = {kind: per_kind[kind]["db cpu"] for kind in per_kind}
        done = {kind: per_kind[kind]["requests"] for kind in per_kind}
        for item_id in ids[block * count : (block + 1) * count]:
            payload = run("item JSON", lambda i=item_id: client.get(f"{api}/{i}"))
            version, body = payload["item"]["version"], payload["input"]
            first = body["turns"][0]["answer"].split(" (bench ")[0]
            for edit in range(3):
                body["turns"][0]["answer"] = answer = f"{first} (bench {stamp:.3f}, edit {edit})"
                url = f"{api}/{item_id}"
                reply = run(
                    "autosave",
                    lambda u=url, v=version, b=body: client.put(u, json={"version": v, "item": b}),
                )
                version = reply["item"]["version"]
                saved[item_id] = answer
        for kind in per_kind:
            n = per_kind[kind]["requests"] - done[kind]
            cpu[kind].append((per_kind[kind]["cpu"] - spent[kind]) / n * 1e6)
            db_cpu[kind].append((per_kind[kind]["db cpu"] - spent_db[kind]) / n * 1e6)
    with engine.connect() as conn:
        stored = dict(
            conn.execute(
                sa.select(turns.c.item_id, turns.c.answer).where(
                    turns.c.item_id.in_(list(saved)), turns.c.ordinal == 0
                )
            ).all()
        )
    lost = [i for i, answer in saved.items() if stored.get(i) != answer]
    if lost:
        raise SystemExit(f"{len(lost)} acknowledged saves are not stored: {lost[:3]}")
    client.__exit__(None, None, None)
    ws.close()
    backends.close()
    if show:
        for kind, statements in shown.items():
            print(f"{kind}: the last request's {len(statements)} statements", file=sys.stderr)
            for text in statements:
                print(f"    {text}", file=sys.stderr)
    figures: dict[str, Any] = {}
    for kind, seen in per_kind.items():
        n = seen["requests"]
        for what in ("statements", "checkouts", "pings", "tx commands"):
            figures[f"{kind}: {what}"] = seen[what] / n
        figures[f"{kind}: CPU us"] = statistics.median(cpu[kind])
        if backends.engine is not None:
            figures[f"{kind}: PostgreSQL CPU us"] = statistics.median(db_cpu[kind])
    return figures


class Backends:
    """PostgreSQL's server processes serving this database (the pool's connections): their
    CPU time from ``/proc/PID/schedstat`` (nanoseconds; the server runs on this machine).
    Nothing on SQLite."""

    def __init__(self, url: str) -> None:
        self.engine = sa.create_engine(url) if url.startswith("postgresql") else None
        self.pids: list[int] = []

    def find(self) -> None:
        if self.engine is None:
            return
        with self.engine.connect() as conn:
            self.pids = list(
                conn.scalars(
                    sa.text(
                        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                        "AND pid <> pg_backend_pid()"
                    )
                )
            )

    def cpu(self) -> float:
        total = 0
        for pid in self.pids:
            try:
                with open(f"/proc/{pid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
        return total / 1e9

    def close(self) -> None:
        if self.engine is not None:
            self.engine.dispose()


def count_transaction_commands(tally: Counter[str]) -> None:
    """On PostgreSQL, count what psycopg sends besides the statements (BEGIN, COMMIT,
    ROLLBACK, DEALLOCATE): each a round trip. Reaches into psycopg's internals (its
    ``_exec_command``); a psycopg without it is left uncounted."""
    try:
        from psycopg._connection_base import BaseConnection
    except ImportError:
        return
    original = getattr(BaseConnection, "_exec_command", None)
    if original is None:
        return

    def counted(self: Any, command: Any, *args: Any, **kwargs: Any) -> Any:
        tally["tx commands"] += 1
        return original(self, command, *args, **kwargs)

    BaseConnection._exec_command = counted  # type: ignore[method-assign]


def compare(args: argparse.Namespace) -> None:
    sides = [str(Path(side).resolve()) for side in args.sides.split(",")]
    found: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()}", flush=True)
    for number in range(args.rounds):
        for side in sides:
            command = [sys.executable, __file__, "--database-url", args.database_url]
            command += ["--home", args.home, "--items", str(args.items)]
            command += ["--blocks", str(args.blocks), "--json"]
            env = {**os.environ, "PYTHONPATH": side}
            out = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
            for key, value in json.loads(out.stdout.splitlines()[-1]).items():
                found[side].setdefault(key, []).append(value)
        print(f"  round {number + 1}/{args.rounds} done, load {os.getloadavg()[0]:.2f}", flush=True)
    keys = list(found[sides[0]])
    print(f"{'':<28}" + "".join(f"{Path(s).parent.name[:24]:>26}" for s in sides))
    for key in keys:
        cells = []
        for side in sides:
            values = found[side][key]
            cells.append(f"{min(values):>12.1f} / {statistics.median(values):>9.1f}")
        print(f"{key:<28}" + "".join(f"{c:>26}" for c in cells))
    print(f"(min / median over {args.rounds} rounds; load {os.getloadavg()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--home", default="/tmp/assay-save-path")
    parser.add_argument("--items", type=int, default=40, help="items per block")
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--sides", help="comma-separated src folders to compare, in turn")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="one line of JSON figures")
    parser.add_argument("--show", action="store_true", help="print each kind's statements")
    args = parser.parse_args()
    if args.sides:
        compare(args)
        return
    figures = measure(args.database_url, Path(args.home), args.items, args.blocks, args.show)
    if args.json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key:<28} {value:10.1f}")


if __name__ == "__main__":
    main()
