"""Sign-in time for unknown and known user names, with Assay's production Argon2 settings:
does the answer tell which names exist?

Makes a team-mode workspace (a temporary SQLite file unless ASSAY_DATABASE_URL names a
database) with one account, then signs in through the web app (``POST /api/session``, the
whole route: limits, database, Argon2) ``--tries`` times per round with a wrong password,
alternating an unknown name and the known one. Each try gets a fresh limiter and the
account's lockout is set high, so every try walks the "wrong password" path. Prints min /
median per kind and round, the ratio of the medians (the goal: within 2x), and the load.

    python benchmarks/signin_timing.py [--tries 40] [--rounds 3]

Recorded (SQLite, 2 cores shared with other work, load 17-19, 40 tries, 3 rounds): medians per
round unknown 1441 / 1384 / 801 ms, known 1453 / 1279 / 814 ms; median of medians 1384 against
1279 ms, ratio 1.08x; again at load 37-39: 1538 against 1500 ms, 1.03x. Before issue 32 an
unknown name answered in ~19 ms and a known one in ~1 s: the hash was skipped for unknown
names.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from assay.people.accounts import create_account
from assay.people.mode import set_team_mode
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.web import create_app
from assay.web.login_limit import LoginLimiter

PASSWORD = "the right password 1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(
            home=Path(folder) / "ws",
            database_url=os.environ.get("ASSAY_DATABASE_URL", ""),
            allowed_hosts="testserver",
            login_max_failures=1_000_000,
        )
        ws = Workspace.open(settings)
        create_account(ws, "known", PASSWORD, admin=True)
        set_team_mode(ws, True)
        app = create_app(ws)
        client = TestClient(app)
        client.get("/api/session")
        client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
        medians: dict[str, list[float]] = {"unknown": [], "known": []}
        for round_no in range(1, args.rounds + 1):
            times: dict[str, list[float]] = {"unknown": [], "known": []}
            for n in range(args.tries):
                for kind, name in (("unknown", f"nobody{n}"), ("known", "known")):
                    app.state.login_limiter = LoginLimiter()
                    body = {"username": name, "password": f"wrong password {n}"}
                    start = time.perf_counter()
                    answer = client.post("/api/session", json=body)
                    times[kind].append(time.perf_counter() - start)
                    assert answer.status_code == 401, answer.text
            for kind, found in times.items():
                medians[kind].append(statistics.median(found))
                print(
                    f"round {round_no} {kind:>7}: min {min(found) * 1000:7.1f} ms, "
                    f"median {statistics.median(found) * 1000:7.1f} ms ({len(found)} tries)"
                )
        ws.close()
    unknown, known = statistics.median(medians["unknown"]), statistics.median(medians["known"])
    ratio = max(unknown, known) / min(unknown, known)
    print(
        f"median of medians: unknown {unknown * 1000:.1f} ms, known {known * 1000:.1f} ms; "
        f"ratio {ratio:.2f}x (goal: within 2x)"
    )
    print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
