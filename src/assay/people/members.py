"""Project members: which account has which role in which project (one role each)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from assay.errors import Conflict, NotFound
from assay.people.roles import ROLES, check_role
from assay.store.db import reading, transaction, utcnow
from assay.store.schema import accounts, project_members
from assay.store.workspace import Workspace


@dataclass(frozen=True)
class Member:
    account_id: int
    username: str
    display_name: str
    role: str
    disabled: bool


def set_role(
    ws: Workspace, project_id: int, account_id: int, role: str, *, conn: sa.Connection | None = None
) -> None:
    """Give the account ``role`` in the project (adding it as a member when it is not one).
    The last owner of a project cannot be given another role."""
    role = check_role(role)
    now = utcnow()
    with transaction(ws.engine, conn) as conn:
        current = role_of(ws, project_id, account_id, conn=conn)
        if current == role:
            return
        if current is None:
            conn.execute(
                project_members.insert().values(
                    project_id=project_id,
                    account_id=account_id,
                    role=role,
                    created_at=now,
                    updated_at=now,
                )
            )
            return
        if current == "owner":
            _keep_an_owner(ws, project_id, account_id, conn)
        conn.execute(
            project_members.update()
            .where(_member(project_id, account_id))
            .values(role=role, updated_at=now)
        )


def remove_member(
    ws: Workspace, project_id: int, account_id: int, *, conn: sa.Connection | None = None
) -> None:
    with transaction(ws.engine, conn) as conn:
        current = role_of(ws, project_id, account_id, conn=conn)
        if current is None:
            raise NotFound("that account is not a member of the project")
        if current == "owner":
            _keep_an_owner(ws, project_id, account_id, conn)
        conn.execute(project_members.delete().where(_member(project_id, account_id)))


def role_of(
    ws: Workspace, project_id: int, account_id: int, *, conn: sa.Connection | None = None
) -> str | None:
    """The account's role in the project; None when it is not a member."""
    with reading(ws.engine, conn) as reader:
        params = {"project_id": project_id, "account_id": account_id}
        role = reader.execute(_role_read(), params).scalar()
    return str(role) if role is not None else None


@functools.cache
def _role_read() -> sa.Select[Any]:
    """Read on every request of a member: built once per process (bound parameters)."""
    return sa.select(project_members.c.role).where(
        project_members.c.project_id == sa.bindparam("project_id", type_=sa.Integer),
        project_members.c.account_id == sa.bindparam("account_id", type_=sa.Integer),
    )


def list_members(
    ws: Workspace, project_id: int, *, conn: sa.Connection | None = None
) -> list[Member]:
    """The project's members, most powerful role first, then by user name."""
    with reading(ws.engine, conn) as reader:
        rows = reader.execute(
            sa.select(project_members.c.role, accounts)
            .join(accounts, accounts.c.id == project_members.c.account_id)
            .where(project_members.c.project_id == project_id)
        ).all()
    order = list(ROLES)
    members = [
        Member(row.id, row.username, row.display_name, row.role, bool(row.disabled)) for row in rows
    ]
    return sorted(members, key=lambda m: (order.index(m.role), m.username))


def member_projects(
    ws: Workspace, account_id: int, *, conn: sa.Connection | None = None
) -> dict[int, str]:
    """The projects the account is a member of: project id → role."""
    with reading(ws.engine, conn) as reader:
        rows = reader.execute(
            sa.select(project_members.c.project_id, project_members.c.role).where(
                project_members.c.account_id == account_id
            )
        ).all()
    return {row.project_id: row.role for row in rows}


def _member(project_id: int, account_id: int) -> sa.ColumnElement[bool]:
    return sa.and_(
        project_members.c.project_id == project_id, project_members.c.account_id == account_id
    )


def _keep_an_owner(ws: Workspace, project_id: int, account_id: int, conn: sa.Connection) -> None:
    owners = [m for m in list_members(ws, project_id, conn=conn) if m.role == "owner"]
    if [m.account_id for m in owners] == [account_id]:
        raise Conflict("this is the project's only owner; make another member owner first")
