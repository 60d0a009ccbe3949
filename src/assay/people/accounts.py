"""Accounts: who can sign in, as whom, and whether they are a workspace admin.

``origin`` says where an account came from: ``local`` (the owner personal mode acts as, made
by the migration; it has no password), ``created`` (``assay users add``) or ``imported``
(an author name from an older workspace). Only created accounts sign in.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import sqlalchemy as sa

from assay.errors import Conflict, InvalidInput, NotFound
from assay.people.passwords import check_password, hash_password
from assay.people.sessions import Session, live_session, revoke_sessions
from assay.store.db import as_utc, reading, transaction, utcnow
from assay.store.schema import accounts
from assay.store.workspace import Workspace

LOCAL = "local"
"""User name of the local owner personal mode acts as; no one else may take it."""

USERNAME = re.compile(r"^[a-z0-9][a-z0-9._@-]{0,63}$")


@dataclass(frozen=True)
class Account:
    id: int
    username: str
    display_name: str
    is_admin: bool
    disabled: bool
    origin: str
    has_password: bool
    failed_logins: int
    locked_until: datetime | None
    created_at: datetime

    @property
    def can_sign_in(self) -> bool:
        return self.has_password and not self.disabled


def _account(row: Any) -> Account:
    return Account(
        id=row.id,
        username=row.username,
        display_name=row.display_name,
        is_admin=bool(row.is_admin),
        disabled=bool(row.disabled),
        origin=row.origin,
        has_password=bool(row.password_hash),
        failed_logins=row.failed_logins,
        locked_until=as_utc(row.locked_until) if row.locked_until else None,
        created_at=as_utc(row.created_at),
    )


def session_account(
    ws: Workspace, secret: str, *, conn: sa.Connection | None = None
) -> tuple[Session, Account] | None:
    """The live session of ``secret`` and its account, read together
    (:func:`assay.people.sessions.live_session`); None when there is no live session."""
    return with_account(live_session(ws, secret, conn=conn))


def with_account(
    found: tuple[Session, dict[str, Any]] | None,
) -> tuple[Session, Account] | None:
    """A live session as :func:`assay.people.sessions.judge_session` found it (its account's
    columns by name), with its :class:`Account`."""
    if found is None:
        return None
    session, columns = found
    return session, _account(SimpleNamespace(**columns))


def check_username(name: str) -> str:
    """User names are lower case (``Alice`` signs in as ``alice``): letters, digits and
    ``. _ @ -``, at most 64 characters."""
    cleaned = name.strip().lower()
    if not USERNAME.match(cleaned):
        raise InvalidInput(
            f"user name {name!r} is not valid: use 1-64 letters, digits, '.', '_', '@' or '-', "
            "starting with a letter or digit"
        )
    return cleaned


def create_account(
    ws: Workspace,
    username: str,
    password: str,
    *,
    display_name: str = "",
    admin: bool = False,
    conn: sa.Connection | None = None,
) -> Account:
    """A new account that signs in with ``password`` (checked, then stored as Argon2)."""
    username = check_username(username)
    if username == LOCAL:
        raise InvalidInput(f"the user name {LOCAL!r} is reserved for the local owner")
    hashed = hash_password(check_password(password, username))
    with transaction(ws.engine, conn) as conn:
        if conn.execute(sa.select(accounts.c.id).where(accounts.c.username == username)).first():
            raise Conflict(f"an account named {username!r} already exists")
        shown = display_name.strip()[:200] or username
        insert_account(conn, username, shown, origin="created", password_hash=hashed, admin=admin)
        return get_account(ws, username, conn=conn)


def insert_account(
    conn: sa.Connection,
    username: str,
    display_name: str,
    *,
    origin: str,
    password_hash: str | None = None,
    admin: bool = False,
) -> int:
    """Write an account row as given (callers check the names); returns its id."""
    now = utcnow()
    inserted = conn.execute(
        accounts.insert().values(
            username=username,
            display_name=display_name,
            password_hash=password_hash,
            is_admin=admin,
            disabled=False,
            origin=origin,
            failed_logins=0,
            locked_until=None,
            created_at=now,
            updated_at=now,
        )
    )
    return int(inserted.inserted_primary_key[0])  # type: ignore[index]


def get_account(ws: Workspace, username: str, *, conn: sa.Connection | None = None) -> Account:
    with reading(ws.engine, conn) as reader:
        row = reader.execute(
            sa.select(accounts).where(accounts.c.username == username.strip().lower())
        ).first()
    if row is None:
        raise NotFound(f"no account named {username!r} (see `assay users list`)")
    return _account(row)


@functools.cache
def _by_id() -> sa.Select[Any]:
    """Read on every signed-in request: built once per process (bound parameter)."""
    return sa.select(accounts).where(accounts.c.id == sa.bindparam("id", type_=sa.Integer))


def account_by_id(ws: Workspace, account_id: int, *, conn: sa.Connection | None = None) -> Account:
    with reading(ws.engine, conn) as reader:
        row = reader.execute(_by_id(), {"id": account_id}).first()
    if row is None:
        raise NotFound(f"no account with id {account_id}")
    return _account(row)


def local_account(ws: Workspace, *, conn: sa.Connection | None = None) -> Account:
    """The local owner: the actor of personal mode and of the CLI on the server machine."""
    return get_account(ws, LOCAL, conn=conn)


def list_accounts(ws: Workspace, *, conn: sa.Connection | None = None) -> list[Account]:
    with reading(ws.engine, conn) as reader:
        rows = reader.execute(sa.select(accounts).order_by(accounts.c.username)).all()
    return [_account(row) for row in rows]


def _update(conn: sa.Connection, account: Account, **values: Any) -> None:
    conn.execute(
        accounts.update().where(accounts.c.id == account.id).values(updated_at=utcnow(), **values)
    )


def set_password(
    ws: Workspace, username: str, password: str, *, conn: sa.Connection | None = None
) -> Account:
    """A new password; ends every session of the account and lifts a lockout."""
    with transaction(ws.engine, conn) as conn:
        account = get_account(ws, username, conn=conn)
        if account.origin == "local":
            raise InvalidInput(f"the local owner {LOCAL!r} has no password; it never signs in")
        hashed = hash_password(check_password(password, account.username))
        _update(conn, account, password_hash=hashed, failed_logins=0, locked_until=None)
        revoke_sessions(ws, account.id, conn=conn)
        return get_account(ws, username, conn=conn)


def set_disabled(
    ws: Workspace, username: str, disabled: bool = True, *, conn: sa.Connection | None = None
) -> Account:
    """Disable (or enable again) an account; disabling ends all its sessions at once, and its
    tokens stop working. The last enabled workspace admin cannot be disabled."""
    with transaction(ws.engine, conn) as conn:
        account = get_account(ws, username, conn=conn)
        if account.origin == "local":
            raise InvalidInput(f"the local owner {LOCAL!r} cannot be disabled")
        if disabled and account.is_admin:
            _keep_an_admin(ws, account, conn)
        _update(conn, account, disabled=disabled)
        if disabled:
            revoke_sessions(ws, account.id, conn=conn)
        return get_account(ws, username, conn=conn)


def set_admin(
    ws: Workspace, username: str, admin: bool, *, conn: sa.Connection | None = None
) -> Account:
    """Make an account a workspace admin (manages users, creates projects) or not."""
    with transaction(ws.engine, conn) as conn:
        account = get_account(ws, username, conn=conn)
        if account.origin == "local":
            raise InvalidInput(f"the local owner {LOCAL!r} is always an admin")
        if not admin and account.is_admin:
            _keep_an_admin(ws, account, conn)
        _update(conn, account, is_admin=admin)
        return get_account(ws, username, conn=conn)


def signing_in_admins(ws: Workspace, *, conn: sa.Connection | None = None) -> list[Account]:
    """Enabled workspace admins with a password: who can run a team server's accounts."""
    return [a for a in list_accounts(ws, conn=conn) if a.is_admin and a.can_sign_in]


def _keep_an_admin(ws: Workspace, account: Account, conn: sa.Connection) -> None:
    others = [a for a in signing_in_admins(ws, conn=conn) if a.id != account.id]
    if account.can_sign_in and not others:
        raise Conflict(
            f"{account.username!r} is the last workspace admin who can sign in; make another "
            "account an admin first (`assay users set-role NAME admin`)"
        )
