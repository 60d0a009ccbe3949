"""Signing in with a user name and password, with a lockout after repeated failures.

Unknown user, wrong password and an account that cannot sign in get the same message, and
take as long (a hash is computed either way), so the answer does not reveal which user
names exist. After ``ASSAY_LOGIN_MAX_FAILURES`` wrong passwords in a row the account refuses
every sign-in, the right password included, for ``ASSAY_LOGIN_LOCK_MINUTES``.
"""

from __future__ import annotations

from datetime import timedelta

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


class AccountDisabled(NotAuthenticated):
    """The right password for a disabled account (only then is the state revealed)."""


def authenticate(
    ws: Workspace, username: str, password: str, *, conn: sa.Connection | None = None
) -> Account:
    """The account ``username`` when ``password`` is its password; else
    :class:`NotAuthenticated` (or :class:`AccountLocked`). Counts failures, locks, and
    clears the count on success. The failure count is written even though the caller gets an
    error: callers with their own ``conn`` must commit it."""
    try:
        name = check_username(username)
    except InvalidInput:
        verify_password(None, password)
        raise NotAuthenticated(WRONG) from None
    now = utcnow()
    failure: NotAuthenticated | None = None
    with transaction(ws.engine, conn) as conn:
        row = conn.execute(sa.select(accounts).where(accounts.c.username == name)).first()
        stored = row.password_hash if row is not None and row.origin == "created" else None
        if row is not None and row.locked_until and as_utc(row.locked_until) > now:
            verify_password(None, password)
            until = as_utc(row.locked_until).strftime("%H:%M")
            failure = AccountLocked(
                f"too many wrong passwords: the account is locked until {until} UTC; try again "
                "then, or ask a workspace admin to set a new password",
                until,
            )
        elif row is None or not verify_password(stored, password):
            if row is not None:  # counted in this transaction, which commits: no raise inside
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


def _count_failure(ws: Workspace, conn: sa.Connection, account_id: int) -> None:
    """One more failure, counted in the database (two sign-ins at once both count); at the
    limit the account locks and the count starts again."""
    where = accounts.c.id == account_id
    conn.execute(accounts.update().where(where).values(failed_logins=accounts.c.failed_logins + 1))
    failures = conn.execute(sa.select(accounts.c.failed_logins).where(where)).scalar_one()
    if failures >= ws.settings.login_max_failures:
        lock = utcnow() + timedelta(minutes=ws.settings.login_lock_minutes)
        conn.execute(accounts.update().where(where).values(failed_logins=0, locked_until=lock))
