"""A scripted rerank server on a loopback port, for reranker tests.

It serves both shapes: ``POST /v1/rerank`` (``{model, query, documents, top_n}`` →
``{"results": [{"index", "relevance_score"}]}``, as llama.cpp, vLLM, Jina and Cohere do) and
``POST /rerank`` (TEI: ``{query, texts}`` → ``[{"index", "score"}]``). Each request takes the
next behaviour of the script (the last one repeats). ``Overlap`` really reranks: the score
of a document is the number of distinct query words it contains, so tests can tell a
reranked order from the first search's.

    with FakeReranker([Status(503), Overlap()]) as fake:
        HttpReranker(RerankerSettings(url=fake.url), ...)
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.served import Served


@dataclass(frozen=True)
class Overlap:
    """Scores by shared words; ``usage`` is sent with standard replies when given."""

    usage: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Status:
    code: int
    body: str = '{"error": "scripted failure"}'


@dataclass(frozen=True)
class Raw:
    """Any body with status 200 (garbage, wrong shapes, wrong indexes)."""

    body: str


@dataclass(frozen=True)
class Slow:
    seconds: float = 5.0


Behaviour = Overlap | Status | Raw | Slow

_WORD = re.compile(r"\w+")


def overlap(query: str, text: str) -> int:
    wanted = {w for w in _WORD.findall(query.lower()) if len(w) > 2}
    return len(wanted & set(_WORD.findall(text.lower())))


class FakeReranker(Served):
    what = "fake rerank server"

    def __init__(self, script: Sequence[Behaviour] = (Overlap(),)) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        app = Starlette(
            routes=[
                Route("/v1/rerank", self._standard, methods=["POST"]),
                Route("/rerank", self._tei, methods=["POST"]),
            ]
        )
        self.serve(app)

    @property
    def url(self) -> str:
        """The standard endpoint (``/v1/rerank``)."""
        return f"http://127.0.0.1:{self.port}/v1/rerank"

    @property
    def tei_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/rerank"

    def reset(self, script: Sequence[Behaviour]) -> FakeReranker:
        self.script = list(script)
        self.requests.clear()
        self.headers.clear()
        return self

    async def _next(self, request: Request) -> tuple[Behaviour, dict[str, Any]]:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        behaviour = self.script[min(len(self.requests), len(self.script)) - 1]
        if isinstance(behaviour, Slow):
            waited = 0.0
            while waited < behaviour.seconds and not self._closing:
                await asyncio.sleep(0.02)
                waited += 0.02
            behaviour = Overlap()
        return behaviour, body

    def _other(self, behaviour: Behaviour) -> Response:
        if isinstance(behaviour, Status):
            return Response(
                behaviour.body, status_code=behaviour.code, media_type="application/json"
            )
        assert isinstance(behaviour, Raw)
        return Response(behaviour.body, media_type="application/json")

    async def _standard(self, request: Request) -> Response:
        behaviour, body = await self._next(request)
        if not isinstance(behaviour, Overlap):
            return self._other(behaviour)
        scores = [overlap(body["query"], text) for text in body["documents"]]
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[: body.get("top_n")]
        reply: dict[str, Any] = {
            "model": body.get("model", "fake-reranker"),
            "results": [{"index": i, "relevance_score": float(scores[i])} for i in order],
        }
        if behaviour.usage:
            reply["usage"] = dict(behaviour.usage)
        return JSONResponse(reply)

    async def _tei(self, request: Request) -> Response:
        behaviour, body = await self._next(request)
        if not isinstance(behaviour, Overlap):
            return self._other(behaviour)
        scores = [overlap(body["query"], text) for text in body["texts"]]
        return Response(
            json.dumps([{"index": i, "score": float(s)} for i, s in enumerate(scores)]),
            media_type="application/json",
        )
