"""A tiny RAG service speaking Assay's external HTTP contract, on a loopback port.

``answer(body) -> dict | int | "slow"`` decides each reply: a dict is sent as JSON, an int
as an HTTP error status, ``"slow"`` waits past any short client timeout. The service keeps
every request body it received.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

Answer = Callable[[dict[str, Any]], Any]


class FakeRag:
    def __init__(self, answer: Answer) -> None:
        import uvicorn

        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self._closing = False
        app = FastAPI()
        app.add_api_route("/rag", self._rag, methods=["POST"])
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="critical", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/rag"

    def __enter__(self) -> FakeRag:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the fake RAG service did not start")
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing = True
        self.server.should_exit = True
        self.thread.join(timeout=10)

    async def _rag(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        reply = self.answer(body)
        if reply == "slow":
            waited = 0.0
            while waited < 3 and not self._closing:
                await asyncio.sleep(0.02)
                waited += 0.02
            return JSONResponse({"answer": "late", "contexts": []})
        if isinstance(reply, int):
            return JSONResponse({"detail": "scripted failure"}, status_code=reply)
        if isinstance(reply, str):
            return Response(reply, media_type="application/json")
        return JSONResponse(reply)
