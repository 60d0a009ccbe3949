"""A scripted OpenAI-compatible server on a loopback port, for client tests.

Each test gives a script: one behaviour per request, the last one repeating. The server
is a real uvicorn socket server in a thread, so the client's whole HTTP path runs (pooling,
timeouts, chunked streaming, dropped connections). It counts and keeps every request.

    with FakeOpenAI([Status(429, headers={"Retry-After": "0"}), Reply("hi")]) as fake:
        client = OpenAICompatGenerator(base_url=fake.url, model="m")
        ...
        assert fake.count == 2
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.fakes.served import Served


@dataclass(frozen=True)
class Reply:
    """A normal, whole chat completion."""

    text: str = "Hello from the fake."
    model: str = "fake-model"
    finish_reason: str = "stop"
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}
    )


@dataclass(frozen=True)
class Computed:
    """A whole chat completion whose text ``answer(request body)`` makes (replies that
    depend on the prompt, such as one judgment per passage asked about); a list of texts
    gives one choice each (a request asking for ``n`` completions)."""

    answer: Callable[[dict[str, Any]], str | list[str]]
    model: str = "fake-model"


@dataclass(frozen=True)
class EchoJson:
    """A JSON object as content, echoing what the request asked for (JSON mode checks)."""


@dataclass(frozen=True)
class Stream:
    """Server-sent events, one per piece.

    ``break_after``: drop the connection after that many pieces. ``garbage_after``: send a
    line that is not JSON after that many pieces. ``hang_after``: go silent after that many
    pieces for ``hang_seconds`` (longer than the client's read timeout), then end.
    ``finish``: send a last event with ``finish_reason``. ``done``: end with ``data: [DONE]``.
    """

    pieces: tuple[str, ...] = ("Hel", "lo", " there", ".")
    break_after: int | None = None
    garbage_after: int | None = None
    hang_after: int | None = None
    hang_seconds: float = 5.0
    finish: bool = True
    done: bool = True


@dataclass(frozen=True)
class Status:
    """An HTTP error status with an OpenAI-style error body (or ``body`` as given)."""

    code: int
    message: str = "scripted failure"
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None


@dataclass(frozen=True)
class Raw:
    """Any body with any content type: malformed JSON, missing fields."""

    body: str
    content_type: str = "application/json"
    status: int = 200


@dataclass(frozen=True)
class Slow:
    """Wait ``seconds`` before replying (longer than the client's timeout)."""

    seconds: float = 5.0


@dataclass(frozen=True)
class Together:
    """Hold each request until ``count`` requests have come in (or ``seconds`` passed), then
    answer as ``then`` does: clients that call at once get their replies at once."""

    then: Reply | Computed
    count: int = 2
    seconds: float = 30.0


@dataclass(frozen=True)
class Latency:
    """Answer as ``then`` does after ``seconds``: a served model of fixed latency, so the
    server's in-flight counter sees how many requests a client keeps open at once."""

    then: Reply | Computed = field(default_factory=Reply)
    seconds: float = 0.2
    until: int = 0
    """When set, requests are answered in rounds: a round is answered as soon as this many
    requests have come in to it (``seconds`` is then only the bound), and the next request
    starts the next round. A client that may keep N open is seen keeping N open, however
    slowly its threads start on a busy machine; replies still on their way out are not
    counted, so rounds stay whole (N, N, ...) and a multiple of N requests never waits."""


@dataclass(frozen=True)
class Capacity:
    """A server of ``slots`` parallel slots: a request beyond them is answered 429 with
    ``Retry-After`` at once (a rate-limit storm when clients send more); the others wait
    ``seconds`` and answer as ``then`` does."""

    slots: int
    then: Reply | Computed = field(default_factory=Reply)
    seconds: float = 0.05
    retry_after: str = "0.05"


@dataclass(frozen=True)
class Redirect:
    """A redirect (302 by default) to ``location``."""

    location: str
    code: int = 302


Behaviour = (
    Reply
    | Computed
    | EchoJson
    | Stream
    | Status
    | Raw
    | Slow
    | Redirect
    | Together
    | Latency
    | Capacity
)


class _Broken(Exception):
    """Raised inside a streaming body to make uvicorn drop the connection mid-response."""


class FakeOpenAI(Served):
    what = "fake OpenAI server"

    def __init__(self, script: Sequence[Behaviour] = (Reply(),), host: str = "127.0.0.1") -> None:
        """``host``: the loopback address to listen on (127.0.0.2 gives a second host)."""
        if not script:
            raise ValueError("the script needs at least one behaviour")
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0  # requests being answered now (the event loop's thread only)
        self._round = 0  # Latency(until=N): rounds of N requests answered together
        self._waiting: Counter[int] = Counter()  # requests that came in during each round
        self.peak_in_flight = 0
        self.limited = 0  # requests answered 429 by a Capacity behaviour
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )
        self.serve(app, host)
        self.host = host

    def reset(self, script: Sequence[Behaviour]) -> FakeOpenAI:
        """A new script and a clean request log, so one server can serve many tests."""
        if not script:
            raise ValueError("the script needs at least one behaviour")
        self.script = list(script)
        self.requests.clear()
        self.headers.clear()
        self.peak_in_flight = self.limited = 0
        self._round += 1  # a round the last script left unfilled is not this one's
        return self

    @property
    def url(self) -> str:
        """The API root, as a user would give it in base_url."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def count(self) -> int:
        return len(self.requests)

    # --- the app --------------------------------------------------------------------------

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    async def _chat(self, request: Request) -> Response:
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            return await self._answer(request)
        finally:
            self.in_flight -= 1

    async def _wait(self, seconds: float) -> None:
        waited = 0.0
        while waited < seconds and not self._closing:
            await asyncio.sleep(min(0.01, seconds))
            waited += min(0.01, seconds)

    async def _answer(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        script = self.script
        behaviour = script[min(len(self.requests), len(script)) - 1]
        if isinstance(behaviour, Slow):
            waited = 0.0
            while waited < behaviour.seconds and not self._closing:
                await asyncio.sleep(0.02)
                waited += 0.02
            behaviour = Reply("slow reply")
        if isinstance(behaviour, Capacity):
            if self.in_flight > behaviour.slots:
                self.limited += 1
                behaviour = Status(429, "too many requests", {"Retry-After": behaviour.retry_after})
            else:
                await self._wait(behaviour.seconds)
                behaviour = behaviour.then
        if isinstance(behaviour, Latency):
            target, waited, arrived = behaviour.until, 0.0, self._round
            self._waiting[arrived] += 1
            while waited < behaviour.seconds and not self._closing:
                if target and arrived == self._round and self._waiting[arrived] >= target:
                    self._round += 1  # this round is full: all of it answers
                if target and self._round > arrived:
                    break
                await asyncio.sleep(0.01)
                waited += 0.01
            behaviour = behaviour.then
        if isinstance(behaviour, Together):
            waited = 0.0
            while (
                len(self.requests) < behaviour.count
                and waited < behaviour.seconds
                and not self._closing
            ):
                await asyncio.sleep(0.01)
                waited += 0.01
            behaviour = behaviour.then
        if isinstance(behaviour, Reply):
            return JSONResponse(_completion(behaviour.text, behaviour, body))
        if isinstance(behaviour, Computed):
            texts = behaviour.answer(body)
            reply = Reply(model=behaviour.model)
            return JSONResponse(_completion(texts, reply, body))
        if isinstance(behaviour, EchoJson):
            content = json.dumps(
                {"response_format": body.get("response_format"), "messages": len(body["messages"])}
            )
            return JSONResponse(_completion(content, Reply(), body))
        if isinstance(behaviour, Stream):
            return StreamingResponse(
                _events(behaviour, lambda: self._closing), media_type="text/event-stream"
            )
        if isinstance(behaviour, Redirect):
            return Response(status_code=behaviour.code, headers={"Location": behaviour.location})
        if isinstance(behaviour, Status):
            text = behaviour.body
            if text is None:
                text = json.dumps({"error": {"message": behaviour.message, "code": behaviour.code}})
            return Response(
                text,
                status_code=behaviour.code,
                headers=behaviour.headers,
                media_type="application/json",
            )
        return Response(
            behaviour.body, status_code=behaviour.status, media_type=behaviour.content_type
        )


def _completion(text: str | list[str], reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    texts = [text] if isinstance(text, str) else text
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": reply.model,
        "choices": [
            {
                "index": index,
                "message": {"role": "assistant", "content": content},
                "finish_reason": reply.finish_reason,
            }
            for index, content in enumerate(texts)
        ],
        "usage": dict(reply.usage),
    }


async def _events(stream: Stream, closing: Callable[[], bool]) -> AsyncIterator[str]:
    yield _event({"role": "assistant"}, None)
    for number, piece in enumerate(stream.pieces):
        if stream.hang_after is not None and number == stream.hang_after:
            waited = 0.0
            while waited < stream.hang_seconds and not closing():
                await asyncio.sleep(0.02)
                waited += 0.02
            return
        if stream.break_after is not None and number == stream.break_after:
            await asyncio.sleep(0.05)  # let the pieces so far reach the client first
            raise _Broken("scripted connection drop")
        if stream.garbage_after is not None and number == stream.garbage_after:
            yield "data: {this is not json\n\n"
            return
        yield _event({"content": piece}, None)
    if stream.finish:
        yield _event({}, "stop")
    if stream.done:
        yield "data: [DONE]\n\n"


def _event(delta: dict[str, Any], finish_reason: str | None) -> str:
    chunk = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }
    return f"data: {json.dumps(chunk)}\n\n"
