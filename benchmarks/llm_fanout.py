"""Synthesis drafts against an endpoint of fixed latency: one request at a time vs the gate.

Serves an OpenAI-compatible ``/v1/chat/completions`` on loopback that answers every request
after ``--latency`` seconds (a served model of that speed, as many at once as asked) and
counts the requests in flight. ``assay synthesize``'s loop drafts ``--n`` items from the demo
project with ``max_in_flight`` 1 (the old behaviour) and ``--limit``, alternating, for
``--rounds`` rounds; then asks the same drafts again and counts the requests the response
cache left (0 expected). Prints min/median seconds, drafts per second, the peak in flight
and the load average.

    python benchmarks/llm_fanout.py [--n 48] [--latency 0.25] [--limit 16] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from assay.demo import open_demo
from assay.gold.project_config import update_settings
from assay.gold.synthesis import synthesize
from assay.llm.response_cache import clear_cache
from assay.store.projects import get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace


class Endpoint:
    """A fixed-latency chat endpoint that counts requests and the most in flight at once."""

    def __init__(self, latency: float) -> None:
        import uvicorn
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        self.latency, self.count, self.in_flight, self.peak = latency, 0, 0, 0

        async def chat(request: Request) -> JSONResponse:
            body = await request.json()
            self.count += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            await asyncio.sleep(self.latency)
            self.in_flight -= 1
            asked = body["messages"][-1]["content"][-60:]
            content = json.dumps({"question": f"What about {asked[:30]}?", "answer": asked})
            return JSONResponse(
                {
                    "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 50, "completion_tokens": 20},
                    "model": "bench",
                }
            )

        app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="critical")
        self.server = uvicorn.Server(config)
        threading.Thread(target=self.server.run, daemon=True).start()
        while not self.server.started:
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1"


def draft(ws: Workspace, project: Any, endpoint: Endpoint, n: int, limit: int) -> float:
    generator = {"kind": "openai", "base_url": endpoint.url, "model": "bench"}
    project = update_settings(ws, project, {"generator": {**generator, "max_in_flight": limit}})
    clear_cache(ws.engine)
    endpoint.peak = 0
    start = time.perf_counter()
    report = synthesize(ws, project, n=n, seed=1)
    took = time.perf_counter() - start
    assert len(report.created) == report.sampled, report.skipped[:3]
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=48)
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--limit", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    endpoint = Endpoint(args.latency)
    with tempfile.TemporaryDirectory() as home, Workspace.open(Settings(home=Path(home))) as ws:
        project, _ = open_demo(ws)
        times: dict[int, list[float]] = {1: [], args.limit: []}
        peaks: dict[int, int] = {}
        for _ in range(args.rounds):
            for limit in times:  # alternating, so load changes hit both alike
                times[limit].append(draft(ws, project, endpoint, args.n, limit))
                peaks[limit] = endpoint.peak
        ideal = args.n * args.latency
        for limit, rounds in times.items():
            best, median = min(rounds), statistics.median(rounds)
            print(
                f"max_in_flight {limit:>3}: min {best:6.2f} s, median {median:6.2f} s, "
                f"{args.n / median:6.1f} drafts/s, peak in flight {peaks[limit]}, "
                f"ideal {ideal / limit:5.2f} s"
            )
        before = endpoint.count
        synthesize(
            ws, get_project(ws, project.name), n=args.n, seed=1
        )  # the same drafts again, cache kept
        print(f"re-run with the cache: {endpoint.count - before} requests")
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    endpoint.server.should_exit = True


if __name__ == "__main__":
    main()
