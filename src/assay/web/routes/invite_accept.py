"""Opening an invite link (public: the invitee has no account yet): ``GET /invite/{token}``
shows the account it makes and asks for a password; ``POST /api/invite-accept`` makes the
account, uses the invite up and signs the new account in (a session cookie, as a sign-in).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.errors import AssayError
from assay.people.invites import accept_invite, open_invite
from assay.web.i18n import said
from assay.web.render import render, translator
from assay.web.routes.signin import signed_in
from assay.web.state import workspace

router = APIRouter()


class AcceptIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    token: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=1, max_length=1024)


@router.get("/invite/{token}", response_class=HTMLResponse, include_in_schema=False)
def invite_page(request: Request, token: str) -> HTMLResponse:
    """The form to choose a password; a used, expired or unknown link says so instead."""
    try:
        found: Any = open_invite(workspace(request), token)
        problem = ""
    except AssayError as exc:
        found, problem = None, said(exc, translator(request))
    return render(
        request,
        "invite.html",
        section="login",
        invite=found,
        problem=problem,
        token=token if found else "",
    )


@router.post("/api/invite-accept", tags=["session"])
def api_accept_invite(request: Request, body: AcceptIn) -> JSONResponse:
    """Make the invite's account with this password and sign it in; 404 for an unknown
    link, 409 for a used or expired one, 422 for a password that is refused (too short, the
    user name)."""
    account = accept_invite(workspace(request), body.token, body.password)
    return signed_in(request, account.id, {"username": account.username, "next": "/"})
