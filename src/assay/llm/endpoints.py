"""Outgoing endpoints are the workspace admin's: the registry, and a workspace's policy.

In team mode a project lead could otherwise point the generator at a host of their own and
receive the workspace's API key with the first question. So there:

- every URL a project setting or an experiment names (generator and judge base URLs,
  rerankers, pool sources, external systems) must lie under an endpoint a workspace admin
  registered: a lead chooses among them (:func:`check_chosen`);
- loopback is refused whatever ``ASSAY_OUTGOING_ALLOW_LOOPBACK`` says, and loopback or
  private hosts are admitted only when an admin registered them with ``allow_private`` (or
  the server's ``ASSAY_OUTGOING_HOSTS`` names them);
- requests, and with them an API key, go only to the origin of a registered endpoint,
  checked on every request (:attr:`OutgoingPolicy.origins`), so removing an endpoint stops
  them at once, even for settings saved before.

In personal mode nothing changes: the environment's policy applies, the registry is unused.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import datetime

import httpx
import sqlalchemy as sa

from assay.errors import Conflict, InvalidInput, NotFound
from assay.llm.outgoing import (
    METADATA_ADDRESSES,
    METADATA_NAMES,
    SCHEMES,
    OutgoingPolicy,
    OutgoingRefused,
    normal_host,
    origin,
)
from assay.people.mode import team_mode
from assay.store.db import reading, transaction, utcnow
from assay.store.endpoint_schema import outgoing_endpoints
from assay.store.workspace import Workspace

NAME_LIMIT = 100
URL_LIMIT = 2000
NOTE_LIMIT = 500
HOW_TO_REGISTER = (
    "a workspace admin registers endpoints on the Endpoints page (/endpoints) or with "
    "`assay endpoints add NAME URL`"
)


@dataclass(frozen=True, slots=True)
class Endpoint:
    name: str
    url: str
    allow_private: bool
    note: str
    created_at: datetime

    def covers(self, url: str) -> bool:
        """Whether ``url`` lies under this endpoint: same origin, and its path is the
        endpoint's path or below it."""
        mine, theirs = httpx.URL(self.url), _parsed(url)
        if theirs is None or origin(mine) != origin(theirs):
            return False
        base = mine.path.rstrip("/")
        return theirs.path == base or theirs.path.startswith(base + "/") or not base

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "url": self.url,
            "allow_private": self.allow_private,
            "note": self.note,
            "created_at": self.created_at.isoformat(),
        }


def _parsed(url: str) -> httpx.URL | None:
    try:
        return httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        return None


def normal_url(url: str) -> str:
    """``url`` as stored: http(s), a host, no user name, query or fragment, no final ``/``."""
    parsed = _parsed(url.strip()) if isinstance(url, str) else None
    if parsed is None or parsed.scheme not in SCHEMES or not normal_host(parsed.host):
        raise InvalidInput(f"endpoint url: give an http or https URL with a host, not {url!r}")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise InvalidInput(f"endpoint url: port {parsed.port} is not a TCP port (1-65535)")
    if parsed.userinfo or parsed.query or parsed.fragment:
        raise InvalidInput(
            "endpoint url: no user name, password, query or fragment in the URL (API keys are "
            "server settings)"
        )
    try:
        stored = str(parsed.copy_with(path=parsed.path.rstrip("/") or "/")).rstrip("/")
    except (httpx.InvalidURL, TypeError, ValueError):
        raise InvalidInput(f"endpoint url: {url!r} is not a valid URL") from None
    if len(stored) > URL_LIMIT:
        raise InvalidInput(f"endpoint url: at most {URL_LIMIT} characters")
    return stored


def _check_name(name: str) -> str:
    clean = name.strip() if isinstance(name, str) else ""
    if not clean or len(clean) > NAME_LIMIT or any(ord(ch) < 32 for ch in clean):
        raise InvalidInput(
            f"endpoint name: 1 to {NAME_LIMIT} characters without control characters"
        )
    return clean


def list_endpoints(ws: Workspace, *, conn: sa.Connection | None = None) -> list[Endpoint]:
    with reading(ws.engine, conn) as reader:
        rows = reader.execute(
            sa.select(outgoing_endpoints).order_by(outgoing_endpoints.c.name)
        ).all()
    return [Endpoint(r.name, r.url, r.allow_private, r.note, r.created_at) for r in rows]


def add_endpoint(
    ws: Workspace,
    name: str,
    url: str,
    *,
    allow_private: bool = False,
    note: str = "",
    created_by: int | None = None,
) -> Endpoint:
    """Register an endpoint (the caller checked that a workspace admin asks). Its address is
    checked now against the workspace's policy, with its own host admitted when
    ``allow_private``; cloud metadata hosts are refused even then."""
    name, url = _check_name(name), normal_url(url)
    if len(note) > NOTE_LIMIT:
        raise InvalidInput(f"endpoint note: at most {NOTE_LIMIT} characters")
    host = normal_host(httpx.URL(url).host)
    if host in METADATA_NAMES or _is_metadata_address(host):
        raise OutgoingRefused(f"endpoint url: {host} is a cloud metadata host")
    policy = outgoing_policy(ws)
    if allow_private:
        policy = _with_host(policy, host)
    try:
        policy.check_url(url, strict=False)
    except OutgoingRefused as exc:
        raise OutgoingRefused(f"endpoint {name!r}: {exc}") from None
    with transaction(ws.engine, None) as conn:
        taken = conn.execute(
            sa.select(outgoing_endpoints.c.id).where(outgoing_endpoints.c.name == name)
        ).first()
        if taken is not None:
            raise Conflict(f"an endpoint named {name!r} exists; remove it first to change it")
        conn.execute(
            outgoing_endpoints.insert().values(
                name=name,
                url=url,
                allow_private=allow_private,
                note=note.strip(),
                created_by=created_by,
                created_at=utcnow(),
            )
        )
    return next(e for e in list_endpoints(ws) if e.name == name)


def remove_endpoint(ws: Workspace, name: str) -> None:
    """Forget an endpoint: from the next request on no key goes to it (settings naming it
    stay, and fail in team mode until another endpoint covers them)."""
    with transaction(ws.engine, None) as conn:
        gone = conn.execute(
            outgoing_endpoints.delete().where(outgoing_endpoints.c.name == name)
        ).rowcount
    if not gone:
        raise NotFound(f"no endpoint named {name!r}")


def _is_metadata_address(host: str) -> bool:
    try:
        return ipaddress.ip_address(host) in METADATA_ADDRESSES
    except ValueError:
        return False


def _with_host(policy: OutgoingPolicy, host: str) -> OutgoingPolicy:
    return OutgoingPolicy(
        policy.hosts | {host}, policy.allow_loopback, policy.resolve, policy.origins
    )


def outgoing_policy(ws: Workspace) -> OutgoingPolicy:
    """The policy for requests made for ``ws``: the environment's in personal mode; in team
    mode without loopback, with the hosts of endpoints registered with ``allow_private``, and
    with requests and API keys going only to registered endpoints."""
    base = OutgoingPolicy.from_settings()
    if not team_mode(ws):
        return base
    endpoints = list_endpoints(ws)
    private = {normal_host(httpx.URL(e.url).host) for e in endpoints if e.allow_private}
    origins = frozenset(origin(httpx.URL(e.url)) for e in endpoints)
    return OutgoingPolicy(base.hosts | private, False, base.resolve, origins)


def check_chosen(
    ws: Workspace, url: str, where: str, *, policy: OutgoingPolicy | None = None
) -> None:
    """Refuse ``url`` (named by a setting, at ``where``) when the workspace's policy refuses
    it, or, in team mode, when no registered endpoint covers it."""
    policy = policy if policy is not None else outgoing_policy(ws)
    if policy.origins is not None:
        endpoints = list_endpoints(ws)
        if not any(e.covers(url) for e in endpoints):
            known = ", ".join(f"{e.name} ({e.url})" for e in endpoints) or "none yet"
            raise OutgoingRefused(
                f"{where}: {url!r} is not a registered endpoint; in team mode outgoing URLs "
                f"are chosen among the endpoints a workspace admin registered (registered: "
                f"{known}); {HOW_TO_REGISTER}"
            )
    try:
        policy.check_url(url, strict=False)
    except OutgoingRefused as exc:
        raise OutgoingRefused(f"{where}: {exc}") from None
