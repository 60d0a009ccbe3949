"""Personal or team mode, a workspace setting stored in the database so every server
process sharing it agrees.

Personal mode (the default) serves this machine only and everyone who reaches it acts as the
local owner. Team mode requires signing in; only it may serve beyond loopback.
"""

from __future__ import annotations

import functools
import ipaddress
import secrets
from typing import Any

import sqlalchemy as sa

from assay.errors import Conflict, Forbidden
from assay.people.accounts import create_account, list_accounts, signing_in_admins
from assay.store.db import reading, transaction, utcnow
from assay.store.schema import workspace_settings
from assay.store.workspace import Workspace

KEY = "team_mode"
FIRST_OWNER = "admin"
"""User name of the workspace admin ``assay serve --team`` creates when nobody can sign in."""
HOW_TO_TURN_ON = (
    "create the first owner with `assay users add NAME --owner`, then turn team mode on with "
    "`assay team on`"
)


@functools.cache
def team_mode_read() -> sa.Select[Any]:
    """Read on every request: built once per process (see ``assay.store.projects._by_name``)."""
    return sa.select(workspace_settings.c.value).where(workspace_settings.c.key == KEY)


def team_mode(ws: Workspace, *, conn: sa.Connection | None = None) -> bool:
    with reading(ws.engine, conn) as reader:
        value = reader.execute(team_mode_read()).scalar()
    return value is True


def set_team_mode(ws: Workspace, on: bool, *, conn: sa.Connection | None = None) -> None:
    """Turn team mode on (needs a workspace admin who can sign in, or nobody could) or off
    (refused while accounts other than one admin can sign in: they would lose their sign-in
    and everyone reaching the server would act as the owner)."""
    with transaction(ws.engine, conn) as conn:
        if on and not signing_in_admins(ws, conn=conn):
            raise Conflict(f"team mode needs a workspace admin who can sign in: {HOW_TO_TURN_ON}")
        if not on:
            active = [a.username for a in list_accounts(ws, conn=conn) if a.can_sign_in]
            if len(active) > 1:
                raise Conflict(
                    "team mode cannot be switched off while other accounts exist ("
                    + ", ".join(active)
                    + "); disable all but one with `assay users disable NAME` first"
                )
        exists = conn.execute(
            sa.select(workspace_settings.c.key).where(workspace_settings.c.key == KEY)
        ).first()
        values = {"value": on, "updated_at": utcnow()}
        if exists:
            conn.execute(
                workspace_settings.update().where(workspace_settings.c.key == KEY).values(**values)
            )
        else:
            conn.execute(workspace_settings.insert().values(key=KEY, **values))


def ensure_first_owner(ws: Workspace, *, conn: sa.Connection | None = None) -> str | None:
    """Turn team mode on for ``assay serve --team``. When no workspace admin can sign in yet,
    first create one named ``admin`` with a random password and return that password (the
    caller shows it once; only its hash is stored); else return None."""
    with transaction(ws.engine, conn) as conn:
        password = None
        if not signing_in_admins(ws, conn=conn):
            if FIRST_OWNER in {a.username for a in list_accounts(ws, conn=conn)}:
                raise Conflict(
                    f"no workspace admin can sign in, and the account {FIRST_OWNER!r} exists but "
                    f"cannot sign in: {HOW_TO_TURN_ON}"
                )
            password = secrets.token_urlsafe(18)  # 24 characters, 144 random bits
            create_account(ws, FIRST_OWNER, password, admin=True, conn=conn)
        if not team_mode(ws, conn=conn):
            set_team_mode(ws, True, conn=conn)
        return password


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` serves this machine only (``localhost``, 127.0.0.0/8, ::1)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_serve_host(ws: Workspace, host: str, *, conn: sa.Connection | None = None) -> None:
    """Refuse serving beyond this machine in personal mode: nobody signs in there, so anyone
    who reached the port could read and change everything."""
    if is_loopback(host) or team_mode(ws, conn=conn):
        return
    how = "turn team mode on with `assay team on`"
    if not signing_in_admins(ws, conn=conn):
        how = HOW_TO_TURN_ON
    raise Forbidden(
        f"refusing to serve on {host}: personal mode serves this machine only (127.0.0.1), "
        f"as nobody signs in; to serve a team, {how}"
    )
