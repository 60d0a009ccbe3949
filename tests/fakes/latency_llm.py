"""An OpenAI-compatible endpoint that answers after a fixed latency, for throughput work.

Every chat completion waits ``latency_s`` and answers deterministically from the prompt
(the same prompt, the same text: runs can be compared), with a ``<verdict>`` a judge metric
reads. ``limit`` is the server's own cap on requests in flight: one more is refused with 429
and ``Retry-After``, as a served model does. It counts requests, refusals and the peak in
flight; ``GET /stats`` returns them and ``POST /reset`` zeroes them, so a process of its own
(``python -m tests.fakes.latency_llm --latency 0.5 --limit 64``, which prints its URL) can
serve a benchmark's worker processes.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import threading
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.served import Served


def answer_of(body: dict[str, Any]) -> str:
    """A deterministic answer: the prompt's hash picks a verdict and an answer text. A
    prompt that asks for JSON (as Ragas' metrics do) gets ``{"reason", "verdict"}``."""
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    digest = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    if "JSON" in prompt:
        return json.dumps({"reason": f"hash {digest[:8]}", "verdict": int(digest[0], 16) % 2})
    verdict = "yes" if int(digest[0], 16) % 2 == 0 else "no"
    return f"The answer is {digest[:8]}. <verdict>{verdict}</verdict>"


class LatencyLLM(Served):
    what = "fake latency endpoint"

    def __init__(
        self, latency_s: float = 0.5, limit: int | None = None, host: str = "127.0.0.1"
    ) -> None:
        self.latency_s = latency_s
        self.limit = limit
        self.requests = 0
        self.rejected = 0
        self.in_flight = 0
        self.peak = 0
        self.prompts: list[str] = []
        self._lock = threading.Lock()
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/stats", self._stats, methods=["GET"]),
                Route("/reset", self._reset, methods=["POST"]),
            ]
        )
        self.serve(app, host)
        self.host = host

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "requests": self.requests,
                "rejected": self.rejected,
                "in_flight": self.in_flight,
                "peak": self.peak,
            }

    def reset(self) -> None:
        with self._lock:
            self.requests = self.rejected = self.peak = 0
            self.prompts.clear()

    async def _stats(self, request: Request) -> Response:
        return JSONResponse(self.stats())

    async def _reset(self, request: Request) -> Response:
        self.reset()
        return JSONResponse(self.stats())

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            if self.limit is not None and self.in_flight >= self.limit:
                self.rejected += 1
                refused = True
            else:
                refused = False
                self.requests += 1
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
                self.prompts.append(str(body.get("messages", [{}])[-1].get("content", "")))
        if refused:
            return JSONResponse(
                {"error": {"message": "too many requests in flight", "code": 429}},
                status_code=429,
                headers={"Retry-After": "0.05"},
            )
        try:
            await asyncio.sleep(self.latency_s)
        finally:
            with self._lock:
                self.in_flight -= 1
        text = answer_of(body)
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in body["messages"]) // 4
        return JSONResponse(
            {
                "id": "chatcmpl-latency",
                "object": "chat.completion",
                "model": body.get("model", "fake-model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": 12,
                    "total_tokens": prompt_tokens + 12,
                },
            }
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per request")
    parser.add_argument("--limit", type=int, default=None, help="requests in flight at most")
    options = parser.parse_args()
    with LatencyLLM(options.latency, options.limit) as fake:
        sys.stdout.write(fake.url + "\n")
        sys.stdout.flush()
        threading.Event().wait()


if __name__ == "__main__":
    main()
