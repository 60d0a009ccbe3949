"""Account admin for workspace admins: the page ``/admin/accounts`` and its JSON twins, what
``assay users`` does on the server machine (create, disable and enable, a new password) plus
invite links (:mod:`assay.people.invites`).

Every route here is the ``workspace.users`` action (route_actions): the guard lets only
workspace admins (and the local owner of personal mode) in. Opening an invite link is
public and lives in ``routes.invite_accept``.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Path, Request, Response
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.people.accounts import Account, create_account, list_accounts, set_disabled, set_password
from assay.people.invites import DEFAULT_DAYS, MAX_DAYS, create_invite, list_invites, revoke_invite
from assay.people.roles import ROLES
from assay.store.db import utcnow
from assay.store.projects import get_project, list_projects
from assay.web.actors import actor_id
from assay.web.bounds import MAX_OFFSET
from assay.web.render import render
from assay.web.state import workspace

router = APIRouter()
A = "/api/accounts"
Password = Field(min_length=1, max_length=1024)


class AccountIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    username: str = Field(max_length=64)
    display_name: str = Field("", max_length=200)
    password: str = Password
    admin: bool = False


class PasswordIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    password: str = Password


class InviteIn(BaseModel):
    """An invite: the account it makes, and for how long the link works."""

    model_config = ConfigDict(extra="forbid")
    username: str = Field(max_length=64)
    display_name: str = Field("", max_length=200)
    admin: bool = False
    project: str | None = Field(None, max_length=200)
    """A project the new account joins, with ``role``."""
    role: str | None = Field(None, max_length=20)
    days: int = Field(DEFAULT_DAYS, ge=1, le=MAX_DAYS)


def account_json(account: Account) -> dict[str, Any]:
    """``state``: ``active``, ``disabled``, ``locked`` or ``no_sign_in`` (the local owner,
    imported authors)."""
    now = utcnow()
    if not account.has_password:
        state = "no_sign_in"
    elif account.disabled:
        state = "disabled"
    elif account.locked_until is not None and account.locked_until > now:
        state = "locked"
    else:
        state = "active"
    return {
        "username": account.username,
        "display_name": account.display_name,
        "is_admin": account.is_admin,
        "origin": account.origin,
        "state": state,
        "created_at": account.created_at.isoformat(),
    }


@router.get(A, tags=["accounts"])
def api_accounts(request: Request) -> list[dict[str, Any]]:
    """Every account of the workspace, by user name."""
    return [account_json(a) for a in list_accounts(workspace(request))]


@router.post(A, status_code=201, tags=["accounts"])
def api_create_account(request: Request, body: AccountIn) -> dict[str, Any]:
    """A new account with a password the admin chose (10 to 1024 characters, not the user
    name); 409 when the name is taken."""
    made = create_account(
        workspace(request),
        body.username,
        body.password,
        display_name=body.display_name,
        admin=body.admin,
    )
    return account_json(made)


@router.post(A + "/{username}/disable", tags=["accounts"])
def api_disable(request: Request, username: str) -> dict[str, Any]:
    """Disable an account: its sessions end at once and its tokens stop working (never the
    last admin who can sign in)."""
    return account_json(set_disabled(workspace(request), username, True))


@router.post(A + "/{username}/enable", tags=["accounts"])
def api_enable(request: Request, username: str) -> dict[str, Any]:
    """Enable a disabled account again: it may sign in (its old sessions stay ended)."""
    return account_json(set_disabled(workspace(request), username, False))


@router.put(A + "/{username}/password", tags=["accounts"])
def api_reset_password(request: Request, username: str, body: PasswordIn) -> dict[str, Any]:
    """Set a new password: every session of the account ends and a lockout is lifted (API
    tokens stay: revoke them with ``assay tokens revoke --all-of NAME``)."""
    return account_json(set_password(workspace(request), username, body.password))


@router.get("/api/invites", tags=["accounts"])
def api_invites(request: Request) -> list[dict[str, Any]]:
    """Every invite, newest first, with its state (open, used, expired); never its link."""
    now = utcnow()
    return [i.as_json(now) for i in list_invites(workspace(request))]


@router.post("/api/invites", status_code=201, tags=["accounts"])
def api_create_invite(request: Request, body: InviteIn) -> dict[str, Any]:
    """An invite and its link, shown only in this answer: whoever opens the link before it
    expires chooses a password and has the account (once)."""
    ws = workspace(request)
    project_id = get_project(ws, body.project).id if body.project else None
    secret, made = create_invite(
        ws,
        body.username,
        created_by=actor_id(request),
        display_name=body.display_name,
        admin=body.admin,
        project_id=project_id,
        role=body.role or None,
        days=body.days,
    )
    return {"invite": made.as_json(utcnow()), "link": invite_link(request, secret)}


def invite_link(request: Request, secret: str) -> str:
    return f"{str(request.base_url).rstrip('/')}/invite/{quote(secret, safe='')}"


@router.delete("/api/invites/{invite_id}", status_code=204, tags=["accounts"])
def api_revoke_invite(
    request: Request, invite_id: Annotated[int, Path(ge=1, le=MAX_OFFSET)]
) -> Response:
    """Revoke an open invite: its link stops working."""
    revoke_invite(workspace(request), invite_id)
    return Response(status_code=204)


@router.get("/admin/accounts", response_class=HTMLResponse, include_in_schema=False)
def accounts_page(request: Request) -> HTMLResponse:
    ws = workspace(request)
    return render(
        request,
        "accounts.html",
        section="accounts",
        accounts=api_accounts(request),
        invites=api_invites(request),
        projects=[p.name for p in list_projects(ws)],
        roles=list(ROLES),
        max_days=MAX_DAYS,
        default_days=DEFAULT_DAYS,
    )
