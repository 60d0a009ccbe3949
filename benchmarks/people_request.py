"""What signing in and the access guard add to one request: p50 and p95, single client.

Run: python benchmarks/people_request.py [--requests N] [--items N]

One workspace with a project of N items; the same JSON list request
(``/api/projects/bench/items``) is timed in-process (FastAPI TestClient) with the guard
switched off (the "before"), in personal mode, and in team mode with a session cookie and
with a Bearer token (a lead of the project).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from assay import open_workspace
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.tokens import create_token
from assay.store.projects import create_project
from assay.web import create_app
from assay.web.actors import guard

PASSWORD = "correct horse battery"
URL = "/api/projects/bench/items"


def client(app: object) -> TestClient:
    return TestClient(app, base_url="http://127.0.0.1")  # type: ignore[arg-type]


def timed(client: TestClient, requests: int, **kw: object) -> tuple[float, float]:
    for _ in range(20):  # warm up
        client.get(URL, **kw).raise_for_status()  # type: ignore[arg-type]
    times = []
    for _ in range(requests):
        start = time.perf_counter()
        client.get(URL, **kw).raise_for_status()  # type: ignore[arg-type]
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--items", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(Path(home))
        project = create_project(ws, "bench", "en")
        writer = client(create_app(ws))
        writer.get("/api/session")
        writer.headers["X-CSRF-Token"] = writer.cookies["assay_csrf"]
        for n in range(args.items):
            body = {"turns": [{"query": f"Question {n}?"}]}
            writer.post(URL, json=body).raise_for_status()
        rows = []
        bare = create_app(ws)
        bare.dependency_overrides[guard] = lambda: None
        rows.append(("no guard (before)", timed(client(bare), args.requests)))
        rows.append(("personal mode", timed(client(create_app(ws)), args.requests)))
        lead = create_account(ws, "lead", PASSWORD, admin=False)
        create_account(ws, "root", PASSWORD, admin=True)
        set_role(ws, project.id, lead.id, "lead")
        set_team_mode(ws, True)
        browser = client(create_app(ws))
        browser.get("/api/session")
        browser.headers["X-CSRF-Token"] = browser.cookies["assay_csrf"]
        browser.post("/api/session", json={"username": "lead", "password": PASSWORD})
        rows.append(("team mode, session cookie", timed(browser, args.requests)))
        secret, _ = create_token(ws, lead.id, "bench", "read")
        script = client(create_app(ws))
        headers = {"Authorization": f"Bearer {secret}"}
        rows.append(("team mode, Bearer token", timed(script, args.requests, headers=headers)))
        ws.close()
    base = rows[0][1][0]
    print(f"GET {URL} ({args.items} items, {args.requests} requests, in-process)")
    for name, (p50, p95) in rows:
        print(f"  {name:28s} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms  (+{p50 - base:5.2f} ms p50)")


if __name__ == "__main__":
    main()
