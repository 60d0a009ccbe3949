"""Personal or team mode, a workspace setting stored in the database so every server
process sharing it agrees.

Personal mode (the default) serves this machine only and everyone who reaches it acts as the
local owner. Team mode requires signing in; only it may serve beyond loopback.
"""

from __future__ import annotations

import ipaddress

import sqlalchemy as sa

from assay.errors import Conflict, Forbidden
from assay.people.accounts import list_accounts, signing_in_admins
from assay.store.db import reading, transaction, utcnow
from assay.store.schema import workspace_settings
from assay.store.workspace import Workspace

KEY = "team_mode"
HOW_TO_TURN_ON = (
    "create the first owner with `assay users add NAME --owner`, then turn team mode on with "
    "`assay team on`"
)


def team_mode(ws: Workspace, *, conn: sa.Connection | None = None) -> bool:
    with reading(ws.engine, conn) as reader:
        value = reader.execute(
            sa.select(workspace_settings.c.value).where(workspace_settings.c.key == KEY)
        ).scalar()
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
