"""Strict JSON request bodies: finite numbers, 64-bit integers, valid Unicode, bounded nesting.

Python's ``json`` accepts ``NaN``, ``Infinity``, ``1e999`` (infinity again), integers of any
length and ``"\\ud800"`` (half of a UTF-16 pair, which no database can store). A route would
then either store a value that breaks every later read or fail with a 500. Here every JSON body
is checked once before any route sees it, and refused with 422 naming the first bad place
(``body.turns.0.extra.score: NaN is not a finite number``). Bodies the routes parse as JSON are
the ones FastAPI parses: no content type, ``application/json`` and ``application/*+json``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_DEPTH = 64
INT_LIMIT = 2**63 - 1
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class _Bad:
    """Stands in for a number we refuse, so the walk can say where it was."""

    problem: str


def _constant(text: str) -> _Bad:
    return _Bad(f"{text} is not a finite number")


def _float(text: str) -> float | _Bad:
    value = float(text)
    return value if math.isfinite(value) else _Bad(f"{text[:30]} is too large a number")


def _int(text: str) -> int | _Bad:
    if len(text.lstrip("-")) > 19 or abs(value := int(text)) > INT_LIMIT:
        return _Bad(f"{text[:30]}… is outside the 64-bit integer range")
    return value


def problem(value: Any) -> str:
    """The first problem in a parsed body as ``path: what``, or ``""``."""
    stack: list[tuple[Any, str, int]] = [(value, "body", 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"{path}: nested more than {MAX_DEPTH} levels deep"
        if isinstance(node, _Bad):
            return f"{path}: {node.problem}"
        if isinstance(node, str):
            if SURROGATE.search(node):
                return f"{path}: the text holds an unpaired UTF-16 surrogate (\\ud800–\\udfff)"
        elif isinstance(node, dict):
            for key, child in reversed(node.items()):
                if SURROGATE.search(key):
                    return f"{path}: a key holds an unpaired UTF-16 surrogate (\\ud800–\\udfff)"
                stack.append((child, f"{path}.{key[:60]}", depth + 1))
        elif isinstance(node, list):
            stack.extend(
                (child, f"{path}.{i}", depth + 1) for i, child in reversed(list(enumerate(node)))
            )
    return ""


def check_body(body: bytes) -> str:
    """Why ``body`` is not acceptable JSON, or ``""`` when it is (or is not JSON at all: the
    route then answers its usual 422 for malformed JSON)."""
    try:
        value = json.loads(body, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except UnicodeDecodeError:
        return "body: not valid UTF-8 text"
    except RecursionError:
        return f"body: nested more than {MAX_DEPTH} levels deep"
    except ValueError:
        return ""
    return problem(value)


def is_json(scope: Scope) -> bool:
    headers = dict(scope["headers"])
    content_type = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
    return (
        not content_type
        or content_type == b"application/json"
        or (content_type.startswith(b"application/") and content_type.endswith(b"+json"))
    )


class StrictJSONMiddleware:
    """Reads a JSON body (already bounded by the body limit), checks it, then hands the same
    bytes to the route."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in BODY_METHODS or not is_json(scope):
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([], message, receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        found = check_body(body) if body.strip() else ""
        if found:
            await JSONResponse({"detail": found}, status_code=422)(scope, receive, send)
            return
        await self.app(scope, _replay([body], None, receive), send)


def _replay(chunks: list[bytes], last: Message | None, receive: Receive) -> Receive:
    """A ``receive`` that gives the buffered body first, then passes through."""
    pending: list[Message] = [
        {"type": "http.request", "body": chunk, "more_body": False} for chunk in chunks
    ]
    if last is not None:
        pending.append(last)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay
