"""What a reverse proxy in front of a team server may tell the app, believed only from the
addresses in ``ASSAY_TRUSTED_PROXIES`` (default: none; loopback is not trusted unless named,
since anyone on the server machine, or a tunnel ending there, connects from loopback): the
client's address (``X-Forwarded-For``), whether the client used https (``X-Forwarded-Proto``,
so cookies get ``Secure`` and links the right scheme), and who signed in
(``ASSAY_TRUSTED_USER_HEADER``). From anyone else these headers are ignored, so a client
cannot name itself.

The client's address is the right-most ``X-Forwarded-For`` entry that is not itself a
trusted proxy: entries further left were written by the client and prove nothing.
"""

from __future__ import annotations

import ipaddress

from fastapi import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from assay.store.settings import Settings


class ProxyHeadersMiddleware:
    """For requests from a trusted proxy: the client address and scheme it forwarded, and a
    mark (``scope["state"]["trusted_proxy"]``) that the user header may be believed."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.networks = settings.trusted_networks

    def trusts(self, peer: str) -> bool:
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return False
        return any(address in network for network in self.networks)

    def client_of(self, forwarded_for: str) -> str | None:
        """The client address an ``X-Forwarded-For`` chain names: from the right, the first
        entry that is not a trusted proxy; None when it names no valid address."""
        for entry in reversed(forwarded_for.split(",")):
            candidate = entry.strip().strip("[]")
            try:
                ipaddress.ip_address(candidate)
            except ValueError:
                return None
            if not self.trusts(candidate):
                return candidate
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if scope["type"] in ("http", "websocket") and client and self.trusts(client[0]):
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            proto = headers.get("x-forwarded-proto", "").split(",")[-1].strip().lower()
            if proto in ("http", "https"):
                secure = proto == "https"
                if scope["type"] == "websocket":
                    scope["scheme"] = "wss" if secure else "ws"
                else:
                    scope["scheme"] = proto
            forwarded = self.client_of(headers.get("x-forwarded-for", ""))
            if forwarded:
                scope["client"] = (forwarded, 0)
            scope.setdefault("state", {})["trusted_proxy"] = True
        await self.app(scope, receive, send)


def client_address(request: Request) -> str:
    """The client's address (the one a trusted proxy forwarded, else the peer's)."""
    return request.client.host if request.client else ""


def proxy_user(request: Request, settings: Settings) -> str | None:
    """The user name the trusted proxy signed in, or None (no header configured, none sent,
    or not from a trusted proxy)."""
    if not settings.trusted_user_header or not request.scope.get("state", {}).get("trusted_proxy"):
        return None
    name = request.headers.get(settings.trusted_user_header, "").strip()
    return name or None
