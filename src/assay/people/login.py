"""Signing in with a user name and password, with a lockout after repeated failures.

Unknown user, wrong password and an account that cannot sign in get the same message, and
the same work: every path verifies the password exactly once (against the stored hash, or
against :func:`assay.people.passwords.dummy_hash`), so the answer does not reveal which user
names exist. After ``ASSAY_LOGIN_MAX_FAILURES`` wrong passwords in a row the account refuses
every sign-in, the right password included, for ``ASSAY_LOGIN_LOCK_MINUTES``; the web app
applies the same budget to every name tried, known or not (:mod:`assay.web.login_limit`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from assay.errors import InvalidInput, NotAuthenticated
from assay.people.accounts import Account, account_by_id, check_username
from assay.people.passwords import hash_password, needs_rehash, verify_password
from assay.store.db import as_utc, transaction, utcnow
from assay.store.schema import accounts
from assay.store.workspace import Workspace

WRONG = "wrong user name or password"


class AccountLocked(NotAuthenticated):
    """Too many wrong passwords: the message (and ``until``, HH:MM) say until when (UTC)."""

    def __init__(self, message: str, until: str) -> None:
        super().__init__(message)
        self.until = until


def account_locked(until: datetime) -> AccountLocked:
    """The refusal of a locked account (the same words for a name that has no account)."""
    hhmm = as_utc(until).strftime("%H:%M")
    return AccountLocked(
        f"too many wrong passwords: the account is locked until {hhmm} UTC; try again then, or "
        "ask a workspace admin to set a new password",
        hhmm,
    )


class AccountDisabled(NotAuthenticated):
    """The right password for a disabled account (only then is the state revealed)."""


def authenticate(
    ws: Workspace,
    username: str,
    password: str,
    *,
    conn: sa.Connection | None = None,
    hasher: Any = None,
    unknown_locked: Callable[[str], datetime | None] | None = None,
) -> Account:
    """The account ``username`` when ``password`` is its password; else
    :class:`NotAuthenticated` (or :class:`AccountLocked`). Counts failures, locks, and
    clears the count on success. The failure count is written even though the caller gets an
    error: callers with their own ``conn`` must commit it. ``hasher``: an argon2
    ``PasswordHasher`` (default: Assay's). ``unknown_locked``: until when a name without an
    account is refused (the web app's per-name budget), so that it answers like a locked
    account."""
    try:
        name = check_username(username)
    except InvalidInput:
        verify_password(None, password, hasher)
        raise _no_account(username, unknown_locked) from None
    now = utcnow()
    failure: NotAuthenticated | None = None
    with transaction(ws.engine, conn) as conn:
        row = conn.execute(sa.select(accounts).where(accounts.c.username == name)).first()
        stored = row.password_hash if row is not None and row.origin == "created" else None
        if row is not None and row.locked_until and as_utc(row.locked_until) > now:
            verify_password(None, password, hasher)
            failure = account_locked(row.locked_until)
        elif not verify_password(stored, password, hasher) or row is None:  # verify first
            if row is None:
                failure = _no_account(name, unknown_locked)
            else:  # counted in this transaction, which commits: no raise inside
                _count_failure(ws, conn, row.id)
                failure = NotAuthenticated(WRONG)
        elif row.disabled:
            failure = AccountDisabled("this account is disabled; ask a workspace admin")
        else:
            values: dict[str, object] = {"failed_logins": 0, "locked_until": None}
            if needs_rehash(row.password_hash):
                values["password_hash"] = hash_password(password)
            conn.execute(accounts.update().where(accounts.c.id == row.id).values(**values))
            account = account_by_id(ws, row.id, conn=conn)
    if failure is not None:
        raise failure
    return account


def _no_account(
    name: str, unknown_locked: Callable[[str], datetime | None] | None
) -> NotAuthenticated:
    """The refusal of a name without an account: "wrong", or "locked" past its budget."""
    until = unknown_locked(name) if unknown_locked is not None else None
    return account_locked(until) if until is not None else NotAuthenticated(WRONG)


def _count_failure(ws: Workspace, conn: sa.Connection, account_id: int) -> None:
    """One more failure, counted in the database (two sign-ins at once both count); at the
    limit the account locks and the count starts again."""
    where = accounts.c.id == account_id
    conn.execute(accounts.update().where(where).values(failed_logins=accounts.c.failed_logins + 1))
    failures = conn.execute(sa.select(accounts.c.failed_logins).where(where)).scalar_one()
    if failures >= ws.settings.login_max_failures:
        lock = utcnow() + timedelta(minutes=ws.settings.login_lock_minutes)
        conn.execute(accounts.update().where(where).values(failed_logins=0, locked_until=lock))
