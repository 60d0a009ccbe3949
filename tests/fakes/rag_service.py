"""A tiny RAG service speaking Assay's external HTTP contract, on a loopback port.

``answer(body) -> dict | int | "slow"`` decides each reply: a dict is sent as JSON, an int
as an HTTP error status, ``"slow"`` waits past any short client timeout. The service keeps
every request body it received.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tests.fakes.served import Served

Answer = Callable[[dict[str, Any]], Any]


class FakeRag(Served):
    what = "fake RAG service"

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        app = FastAPI()
        app.add_api_route("/rag", self._rag, methods=["POST"])
        self.serve(app)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/rag"

    async def _rag(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        reply = self.answer(body)
        if reply == "slow":
            waited = 0.0
            while waited < 30 and not self._closing:
                await asyncio.sleep(0.02)
                waited += 0.02
            return JSONResponse({"answer": "late", "contexts": []})
        if isinstance(reply, int):
            return JSONResponse({"detail": "scripted failure"}, status_code=reply)
        if isinstance(reply, str):
            return Response(reply, media_type="application/json")
        return JSONResponse(reply)
