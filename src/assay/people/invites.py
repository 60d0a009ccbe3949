"""Invitations: how a workspace admin gives someone an account without choosing (or
sending) their password.

The admin names the account (user name, display name, admin or not, optionally a role in one
project) and gets a link holding a random secret, shown once; the workspace keeps only the
secret's SHA-256. Whoever opens the link before it expires chooses a password, and the
account is made and the invite used up in one transaction, so a link works once. The user
name is checked when the invite is made (not taken, not invited already) and again when it
is used.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from assay.errors import Conflict, InvalidInput, NotFound
from assay.people.accounts import LOCAL, Account, check_username, create_account
from assay.people.members import set_role
from assay.people.roles import check_role
from assay.people.sessions import hash_secret
from assay.store.db import as_utc, reading, transaction, utcnow
from assay.store.invite_schema import invites
from assay.store.schema import accounts, projects
from assay.store.workspace import Workspace

DEFAULT_DAYS = 7
MAX_DAYS = 30


@dataclass(frozen=True)
class Invite:
    id: int
    username: str
    display_name: str
    is_admin: bool
    project: str | None
    role: str | None
    created_by: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None

    def state(self, now: datetime) -> str:
        """``open``, ``used`` or ``expired``."""
        if self.used_at is not None:
            return "used"
        return "expired" if now >= self.expires_at else "open"

    def as_json(self, now: datetime) -> dict[str, Any]:
        return {
            "id": self.id,
            "username": self.username,
            "display_name": self.display_name,
            "is_admin": self.is_admin,
            "project": self.project,
            "role": self.role,
            "created_by": self.created_by,
            "created_at": self.created_at.isoformat(),
            "expires_at": self.expires_at.isoformat(),
            "used_at": self.used_at.isoformat() if self.used_at else None,
            "state": self.state(now),
        }


def _select() -> sa.Select[Any]:
    return (
        sa.select(invites, projects.c.name.label("project_name"), accounts.c.username.label("by"))
        .join(accounts, accounts.c.id == invites.c.created_by)
        .outerjoin(projects, projects.c.id == invites.c.project_id)
    )


def _invite(row: Any) -> Invite:
    return Invite(
        id=row.id,
        username=row.username,
        display_name=row.display_name,
        is_admin=bool(row.is_admin),
        project=row.project_name,
        role=row.role,
        created_by=row.by,
        created_at=as_utc(row.created_at),
        expires_at=as_utc(row.expires_at),
        used_at=as_utc(row.used_at) if row.used_at else None,
    )


def create_invite(
    ws: Workspace,
    username: str,
    *,
    created_by: int,
    display_name: str = "",
    admin: bool = False,
    project_id: int | None = None,
    role: str | None = None,
    days: int = DEFAULT_DAYS,
    conn: sa.Connection | None = None,
) -> tuple[str, Invite]:
    """A new invite and its secret (for the link; shown nowhere else). Refused when the
    user name is taken or has an open invite, or for a role without a project."""
    username = check_username(username)
    if username == LOCAL:
        raise InvalidInput(f"the user name {LOCAL!r} is reserved for the local owner")
    if not 1 <= days <= MAX_DAYS:
        raise InvalidInput(f"an invite lasts 1 to {MAX_DAYS} days, not {days}")
    if (role is None) != (project_id is None):
        raise InvalidInput("give a project and a role together, or neither")
    if role is not None:
        check_role(role)
    secret = secrets.token_urlsafe(32)
    now = utcnow()
    with transaction(ws.engine, conn) as conn:
        _refuse_taken(conn, username, now)
        inserted = conn.execute(
            invites.insert().values(
                token_hash=hash_secret(secret), username=username,
                display_name=display_name.strip()[:200] or username, is_admin=admin,
                project_id=project_id, role=role, created_by=created_by, created_at=now,
                expires_at=now + timedelta(days=days), used_at=None, account_id=None,
            )
        )  # fmt: skip
        invite_id = int(inserted.inserted_primary_key[0])  # type: ignore[index]
        row = conn.execute(_select().where(invites.c.id == invite_id)).one()
    return secret, _invite(row)


def _refuse_taken(conn: sa.Connection, username: str, now: datetime) -> None:
    if conn.execute(sa.select(accounts.c.id).where(accounts.c.username == username)).first():
        raise Conflict(f"an account named {username!r} already exists")
    open_invite = conn.execute(
        sa.select(invites.c.id).where(
            invites.c.username == username, invites.c.used_at.is_(None), invites.c.expires_at > now
        )
    ).first()
    if open_invite is not None:
        raise Conflict(
            f"{username!r} has an open invite already (number {open_invite.id}); revoke it "
            "first to make a new link"
        )


def list_invites(ws: Workspace, *, conn: sa.Connection | None = None) -> list[Invite]:
    """Every invite, newest first."""
    with reading(ws.engine, conn) as reader:
        rows = reader.execute(_select().order_by(invites.c.created_at.desc(), invites.c.id.desc()))
        return [_invite(row) for row in rows]


def revoke_invite(ws: Workspace, invite_id: int, *, conn: sa.Connection | None = None) -> None:
    """Delete an invite that was not used (its link stops working); a used one stays as the
    record of who made the account."""
    with transaction(ws.engine, conn) as conn:
        row = conn.execute(sa.select(invites.c.used_at).where(invites.c.id == invite_id)).first()
        if row is None:
            raise NotFound(f"no invite number {invite_id}")
        if row.used_at is not None:
            raise Conflict(f"invite {invite_id} was used already; disable the account instead")
        conn.execute(invites.delete().where(invites.c.id == invite_id))


def open_invite(ws: Workspace, secret: str, *, conn: sa.Connection | None = None) -> Invite:
    """The invite of a link, when it can still be used; else NotFound (unknown or revoked)
    or Conflict (used, expired), saying which."""
    with reading(ws.engine, conn) as reader:
        row = reader.execute(_select().where(invites.c.token_hash == hash_secret(secret))).first()
    if row is None:
        raise NotFound("this invite link is not valid (revoked, or mistyped)")
    found = _invite(row)
    state = found.state(utcnow())
    if state == "used":
        raise Conflict("this invite link was used already; sign in with the account it made")
    if state == "expired":
        raise Conflict("this invite link has expired; ask an admin for a new one")
    return found


def accept_invite(ws: Workspace, secret: str, password: str) -> Account:
    """Make the invite's account with ``password`` (checked as any password), give it the
    invite's role, and use the invite up: all in one transaction, so a link works once."""
    with ws.engine.begin() as conn:
        found = open_invite(ws, secret, conn=conn)
        used = conn.execute(
            invites.update()
            .where(invites.c.id == found.id, invites.c.used_at.is_(None))
            .values(used_at=utcnow())
        ).rowcount
        if used != 1:  # another request used it between the read and this write
            raise Conflict("this invite link was used already; sign in with the account it made")
        account = create_account(
            ws,
            found.username,
            password,
            display_name=found.display_name,
            admin=found.is_admin,
            conn=conn,
        )
        conn.execute(invites.update().where(invites.c.id == found.id).values(account_id=account.id))
        if found.role is not None:
            project_id = conn.scalar(
                sa.select(invites.c.project_id).where(invites.c.id == found.id)
            )
            if project_id is not None:
                set_role(ws, int(project_id), account.id, found.role, conn=conn)
        return account
