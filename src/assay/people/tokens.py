"""Personal API tokens for the JSON API and the CLI against a server (``Authorization:
Bearer``): shown once when made, stored as their SHA-256, with a scope and an expiry.

A ``read`` token may only do what reading needs; ``write`` may do whatever its account's
roles allow. Tokens of a disabled account stop working; revoking one is for good.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from assay.errors import InvalidInput, NotAuthenticated, NotFound
from assay.people.sessions import TOUCH_EVERY, hash_secret
from assay.store.db import as_utc, reading, transaction, utcnow
from assay.store.schema import accounts, api_tokens
from assay.store.workspace import Workspace

SCOPES = ("read", "write")
PREFIX = "assay_"
MAX_DAYS = 730


@dataclass(frozen=True)
class Token:
    id: int
    account_id: int
    username: str
    name: str
    prefix: str
    scope: str
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None

    def state(self, now: datetime) -> str:
        """``active``, ``revoked`` or ``expired``."""
        if self.revoked_at is not None:
            return "revoked"
        return "expired" if now >= self.expires_at else "active"


def _token(row: sa.Row[Any]) -> Token:
    return Token(
        id=row.id,
        account_id=row.account_id,
        username=row.username,
        name=row.name,
        prefix=row.prefix,
        scope=row.scope,
        created_at=as_utc(row.created_at),
        expires_at=as_utc(row.expires_at),
        revoked_at=as_utc(row.revoked_at) if row.revoked_at else None,
        last_used_at=as_utc(row.last_used_at) if row.last_used_at else None,
    )


def _select() -> sa.Select[Any]:
    return sa.select(api_tokens, accounts.c.username).join(
        accounts, accounts.c.id == api_tokens.c.account_id
    )


def create_token(
    ws: Workspace,
    account_id: int,
    name: str,
    scope: str = "read",
    days: int = 90,
    *,
    conn: sa.Connection | None = None,
) -> tuple[str, Token]:
    """A new token: its secret (the only time it is seen) and what is stored about it."""
    name = name.strip()
    if not name or len(name) > 100:
        raise InvalidInput("a token needs a name of 1-100 characters (what it is for)")
    if scope not in SCOPES:
        raise InvalidInput(f"unknown token scope {scope!r}; choose one of: {', '.join(SCOPES)}")
    if not 1 <= days <= MAX_DAYS:
        raise InvalidInput(f"a token lasts 1 to {MAX_DAYS} days, not {days}")
    secret = PREFIX + secrets.token_urlsafe(32)
    now = utcnow()
    with transaction(ws.engine, conn) as conn:
        origin = conn.execute(
            sa.select(accounts.c.origin).where(accounts.c.id == account_id)
        ).scalar()
        if origin != "created":
            raise InvalidInput(
                "tokens are for accounts that sign in (made with `assay users add`), "
                "not for the local owner or imported authors"
            )
        token_id = conn.execute(
            api_tokens.insert().values(
                account_id=account_id,
                name=name,
                token_hash=hash_secret(secret),
                prefix=secret[: len(PREFIX) + 4],
                scope=scope,
                created_at=now,
                expires_at=now + timedelta(days=days),
                revoked_at=None,
                last_used_at=None,
            )
        ).inserted_primary_key[0]  # type: ignore[index]
        row = conn.execute(_select().where(api_tokens.c.id == token_id)).one()
    return secret, _token(row)


def verify_token(ws: Workspace, secret: str, *, conn: sa.Connection | None = None) -> Token:
    """The token of ``secret`` when it may be used now (marked as used); else
    :class:`NotAuthenticated` saying whether it is unknown, revoked, expired or its account
    disabled."""
    if not secret.startswith(PREFIX) or len(secret) > 200:
        raise NotAuthenticated("not an Assay API token")
    now = utcnow()
    with transaction(ws.engine, conn) as conn:
        row = conn.execute(
            _select()
            .add_columns(accounts.c.disabled)
            .where(api_tokens.c.token_hash == hash_secret(secret))
        ).first()
        if row is None:
            raise NotAuthenticated("unknown API token")
        token = _token(row)
        state = token.state(now)
        if state != "active":
            raise NotAuthenticated(f"the API token {token.name!r} is {state}")
        if row.disabled:
            raise NotAuthenticated(f"the account {token.username!r} of this token is disabled")
        if token.last_used_at is None or now - token.last_used_at >= TOUCH_EVERY:
            conn.execute(
                api_tokens.update().where(api_tokens.c.id == token.id).values(last_used_at=now)
            )
            token = replace(token, last_used_at=now)
    return token


def list_tokens(
    ws: Workspace, account_id: int | None = None, *, conn: sa.Connection | None = None
) -> list[Token]:
    """Tokens (of one account, or all), newest first; secrets are not stored, so not shown."""
    query = _select().order_by(api_tokens.c.created_at.desc(), api_tokens.c.id.desc())
    if account_id is not None:
        query = query.where(api_tokens.c.account_id == account_id)
    with reading(ws.engine, conn) as reader:
        return [_token(row) for row in reader.execute(query)]


def revoke_token(ws: Workspace, token_id: int, *, conn: sa.Connection | None = None) -> Token:
    """Revoke a token for good (revoking a revoked one changes nothing)."""
    with transaction(ws.engine, conn) as conn:
        row = conn.execute(_select().where(api_tokens.c.id == token_id)).first()
        if row is None:
            raise NotFound(f"no API token with id {token_id} (see `assay tokens list`)")
        if row.revoked_at is None:
            conn.execute(
                api_tokens.update().where(api_tokens.c.id == token_id).values(revoked_at=utcnow())
            )
            row = conn.execute(_select().where(api_tokens.c.id == token_id)).one()
    return _token(row)


def revoke_tokens(ws: Workspace, account_id: int, *, conn: sa.Connection | None = None) -> int:
    """Revoke every live token of an account (after a leak, or when someone leaves); how
    many were live."""
    with transaction(ws.engine, conn) as conn:
        result = conn.execute(
            api_tokens.update()
            .where(api_tokens.c.account_id == account_id, api_tokens.c.revoked_at.is_(None))
            .values(revoked_at=utcnow())
        )
    return int(result.rowcount or 0)
