"""Server-side web sessions: the browser keeps a random secret, the table its SHA-256.

A session ends when it has not been used for ``ASSAY_SESSION_IDLE_MINUTES`` or is older than
``ASSAY_SESSION_MAX_HOURS``, on sign-out, and for every session of an account that is
disabled or gets a new password.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from assay.store.db import as_utc, transaction, utcnow
from assay.store.schema import accounts, sessions
from assay.store.workspace import Workspace

TOUCH_EVERY = timedelta(seconds=60)
"""``last_seen_at`` is written at most this often: a page load should not always write."""


@dataclass(frozen=True)
class Session:
    account_id: int
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_session(
    ws: Workspace, account_id: int, *, conn: sa.Connection | None = None
) -> tuple[str, Session]:
    """A new session for the account: the secret for the cookie (shown nowhere else), and
    the session. Every sign-in makes a new one, so a planted session id is never promoted."""
    secret = secrets.token_urlsafe(32)
    now = utcnow()
    session = Session(account_id, now, now, now + timedelta(hours=ws.settings.session_max_hours))
    with transaction(ws.engine, conn) as conn:
        conn.execute(
            sessions.insert().values(
                id_hash=hash_secret(secret),
                account_id=account_id,
                created_at=now,
                last_seen_at=now,
                expires_at=session.expires_at,
            )
        )
    return secret, session


ACCOUNT = "account_"
"""Prefix of the account's columns in the session read (``account_username``...)."""


@functools.cache
def _session_read() -> sa.Select[Any]:
    """Read on every signed-in request, the session with its account: built once per
    process (bound parameter)."""
    return (
        sa.select(*session_columns())
        .join(accounts, accounts.c.id == sessions.c.account_id)
        .where(sessions.c.id_hash == sa.bindparam("id_hash", type_=sa.String))
    )


def touch_session(
    ws: Workspace, secret: str, *, conn: sa.Connection | None = None
) -> Session | None:
    """The live session of ``secret`` (marked as used now), or None when there is none: never
    made, signed out, revoked, idle too long, too old, or its account is disabled. An
    expired row is deleted on the way."""
    found = live_session(ws, secret, conn=conn)
    return None if found is None else found[0]


def live_session(
    ws: Workspace, secret: str, *, conn: sa.Connection | None = None
) -> tuple[Session, dict[str, Any]] | None:
    """:func:`touch_session`, and the columns of the session's account read with it (by
    name: ``id``, ``username``...), so a signed-in request reads both in one statement."""
    key = session_key(secret)
    if key is None:
        return None
    with transaction(ws.engine, conn) as conn:
        row = conn.execute(_session_read(), {"id_hash": key}).first()
        return judge_session(ws, conn, key, row)


def session_key(secret: str) -> str | None:
    """What the sessions table keeps of a cookie's ``secret`` (None: no session could have
    it: empty, or longer than any secret this module hands out)."""
    if not secret or len(secret) > 200:
        return None
    return hash_secret(secret)


def session_columns() -> list[sa.ColumnElement[Any]]:
    """The columns :func:`judge_session` reads: the session's, and its account's prefixed
    with :data:`ACCOUNT` (a statement joining ``accounts`` to ``sessions`` selects them)."""
    account = [column.label(ACCOUNT + column.name) for column in accounts.c if column.name != "id"]
    return [*sessions.c, *account]


def judge_session(
    ws: Workspace, conn: sa.Connection, key: str, row: Any
) -> tuple[Session, dict[str, Any]] | None:
    """:func:`live_session` of a session row already read (the columns of
    :func:`session_columns`, None when there is no such session): an expired one is deleted
    (None), a live one marked as used at most every :data:`TOUCH_EVERY`."""
    if row is None:
        return None
    now = utcnow()
    idle = timedelta(minutes=ws.settings.session_idle_minutes)
    last_seen = as_utc(row.last_seen_at)
    expires = as_utc(row.expires_at)
    if row.account_disabled or now >= expires or now - last_seen >= idle:
        conn.execute(sessions.delete().where(sessions.c.id_hash == key))
        return None
    if now - last_seen >= TOUCH_EVERY:
        conn.execute(sessions.update().where(sessions.c.id_hash == key).values(last_seen_at=now))
        last_seen = now
    session = Session(row.account_id, as_utc(row.created_at), last_seen, expires)
    fields = row._mapping.items()  # account_id (the session's column) gives the id
    return session, {k[len(ACCOUNT) :]: v for k, v in fields if k.startswith(ACCOUNT)}


def end_session(ws: Workspace, secret: str, *, conn: sa.Connection | None = None) -> None:
    """Sign out: the session of ``secret`` is gone (no error when it already was)."""
    with transaction(ws.engine, conn) as conn:
        conn.execute(sessions.delete().where(sessions.c.id_hash == hash_secret(secret)))


def revoke_sessions(ws: Workspace, account_id: int, *, conn: sa.Connection | None = None) -> int:
    """End every session of an account; how many there were."""
    with transaction(ws.engine, conn) as conn:
        result = conn.execute(sessions.delete().where(sessions.c.account_id == account_id))
    return int(result.rowcount or 0)


def end_expired_sessions(ws: Workspace, *, conn: sa.Connection | None = None) -> int:
    """Delete sessions past their absolute or idle end (housekeeping; they never work)."""
    now = utcnow()
    idle_cutoff = now - timedelta(minutes=ws.settings.session_idle_minutes)
    with transaction(ws.engine, conn) as conn:
        result = conn.execute(
            sessions.delete().where(
                sa.or_(sessions.c.expires_at <= now, sessions.c.last_seen_at <= idle_cutoff)
            )
        )
    return int(result.rowcount or 0)
