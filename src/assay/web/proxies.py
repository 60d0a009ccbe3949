"""What a reverse proxy in front of a team server may tell the app: the client's address
(``X-Forwarded-For``) and who signed in (``ASSAY_TRUSTED_USER_HEADER``), believed only from
the addresses in ``ASSAY_TRUSTED_PROXIES``. From anyone else both headers are ignored, so a
client cannot name itself.
"""

from __future__ import annotations

import ipaddress

from fastapi import Request

from assay.store.settings import Settings


def from_trusted_proxy(request: Request, settings: Settings) -> bool:
    """Whether the request came straight from one of the trusted proxies."""
    peer = request.client.host if request.client else ""
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return False
    return any(address in network for network in settings.trusted_networks)


def client_address(request: Request, settings: Settings) -> str:
    """The client's address: the last ``X-Forwarded-For`` entry (the one the trusted proxy
    added) when the request came through it, else the address the request came from."""
    peer = request.client.host if request.client else ""
    forwarded = request.headers.get("x-forwarded-for", "")
    if forwarded and from_trusted_proxy(request, settings):
        return forwarded.split(",")[-1].strip() or peer
    return peer


def proxy_user(request: Request, settings: Settings) -> str | None:
    """The user name the trusted proxy signed in, or None (no header configured, none sent,
    or not from a trusted proxy)."""
    if not settings.trusted_user_header or not from_trusted_proxy(request, settings):
        return None
    name = request.headers.get(settings.trusted_user_header, "").strip()
    return name or None
