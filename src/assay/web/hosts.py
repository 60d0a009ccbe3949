"""The Host header allow-list: protection against DNS rebinding.

A page on another site can point its own host name at 127.0.0.1 and then talk to a local server
as if it were same-origin (cookies, CSRF header and all). The one thing it cannot change is the
Host header the browser sends: it carries the attacker's name. So every request must name an
allowed host: the loopback names (any port), the address the server was told to bind to
(``Settings.host``: ``ASSAY_HOST``, or ``assay serve --host``), and the names in
``ASSAY_ALLOWED_HOSTS``. Everything else gets 400 before any route runs.
"""

from __future__ import annotations

from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from assay.store.settings import Settings

LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]"})
WILDCARD_BINDS = frozenset({"", "0.0.0.0", "::", "[::]"})


def split_host(value: str) -> tuple[str, str]:
    """``(name, port)`` of a Host header, lower-cased, IPv6 addresses kept in brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value.partition("]")
        name += "]"
        port = rest[1:] if rest.startswith(":") else ""
        return name, port
    name, _, port = value.partition(":")
    return name.rstrip("."), port


def allowed_hosts(settings: Settings) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """Names allowed with any port, and ``(name, port)`` pairs allowed with that port only."""
    names = set(LOOPBACK)
    pairs: set[tuple[str, str]] = set()
    bound = settings.host.strip().lower()
    if bound not in WILDCARD_BINDS:
        names.add(f"[{bound}]" if ":" in bound and not bound.startswith("[") else bound)
    for entry in settings.allowed_hosts.split(","):
        if not entry.strip():
            continue
        name, port = split_host(entry)
        if port:
            pairs.add((name, port))
        else:
            names.add(name)
    return frozenset(names), frozenset(pairs)


class HostMiddleware:
    """Refuses (400) any request whose Host header is not on the allow-list."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.names, self.pairs = allowed_hosts(settings)

    def allows(self, host: str) -> bool:
        name, port = split_host(host)
        return bool(name) and (name in self.names or (name, port) in self.pairs)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = next((v for k, v in scope["headers"] if k == b"host"), b"").decode("latin-1")
        if self.allows(host):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        shown = host[:100] or "(none)"
        detail = (
            f"this server does not answer to the host name {shown!r}: open it as "
            "http://127.0.0.1:PORT, or add the name to ASSAY_ALLOWED_HOSTS"
        )
        response: Response
        if scope["path"].startswith("/api/"):
            response = JSONResponse({"detail": detail}, status_code=400)
        else:
            response = PlainTextResponse(detail, status_code=400)
        await response(scope, receive, send)
