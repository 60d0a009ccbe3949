"""Signing in and out: the sign-in page and its JSON twin ``/api/session``.

The page posts with fetch (static/signin.js), so the CSRF header applies to signing in and
out as to every other change. A sign-in always makes a new session (an id planted before it
is never promoted), sets it as an HttpOnly, SameSite=Lax cookie (Secure over https), and
ends the session the browser had.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from assay.errors import NotAuthenticated
from assay.people.login import AccountDisabled, AccountLocked, authenticate
from assay.people.mode import team_mode
from assay.people.sessions import create_session, end_expired_sessions, end_session
from assay.web.actors import SESSION_COOKIE, signed_in_actor
from assay.web.proxies import client_address
from assay.web.render import render
from assay.web.routes.projects import local_path
from assay.web.state import workspace

router = APIRouter()


class SignIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    username: str = Field(max_length=200)
    password: str = Field(max_length=2000)
    next: str = Field(default="/", max_length=2000)


@router.get("/login", response_class=HTMLResponse, include_in_schema=False)
def login_page(request: Request, next: str = "/") -> Response:
    """The sign-in form; in personal mode (nobody signs in) straight on to ``next``."""
    if not team_mode(workspace(request)):
        return RedirectResponse(local_path(next), status_code=303)
    return render(request, "login.html", next=local_path(next), section="login")


@router.get("/api/session", tags=["session"])
def who(request: Request) -> dict[str, Any]:
    """Who is signed in: ``{"mode", "username"}``; username null when nobody is."""
    ws = workspace(request)
    actor = signed_in_actor(request)
    return {
        "mode": "team" if team_mode(ws) else "personal",
        "username": actor.username if actor is not None else None,
    }


@router.post("/api/session", tags=["session"])
def sign_in(request: Request, body: SignIn) -> Response:
    """Sign in with a user name and password. Failures answer 401 with ``code``: ``wrong``,
    ``locked`` (and ``until``, HH:MM UTC) or ``disabled``; after 10 failures in a minute from
    one address, or 100 from all addresses together, it answers 429 with ``code``
    ``too_many``. Unknown and known names get the same answers and the same work."""
    ws = workspace(request)
    if not team_mode(ws):
        return JSONResponse({"detail": "personal mode: nobody signs in"}, status_code=409)
    address = client_address(request)
    limiter = request.app.state.login_limiter
    refusal = limiter.refusal(address)
    if refusal is not None:
        where = "from this address" if refusal == "address" else "on this server"
        return JSONResponse(
            {"detail": f"too many failed sign-ins {where}; wait a minute", "code": "too_many"},
            status_code=429,
            headers={"retry-after": "60"},
        )
    try:
        account = authenticate(
            ws, body.username, body.password, unknown_locked=limiter.locked_until
        )
    except NotAuthenticated as exc:
        limiter.failed(address, body.username)
        code = {AccountLocked: "locked", AccountDisabled: "disabled"}.get(type(exc), "wrong")
        extra = {"until": exc.until} if isinstance(exc, AccountLocked) else {}
        return JSONResponse({"detail": str(exc), "code": code, **extra}, status_code=401)
    limiter.succeeded(body.username)
    return signed_in(
        request, account.id, {"username": account.username, "next": local_path(body.next)}
    )


def signed_in(request: Request, account_id: int, answer: dict[str, Any]) -> JSONResponse:
    """Answer ``answer`` with a new session for the account as an HttpOnly cookie, ending
    the session the browser had (a sign-in, or an invite just accepted)."""
    ws = workspace(request)
    old = request.cookies.get(SESSION_COOKIE)
    if old:
        end_session(ws, old)
    end_expired_sessions(ws)  # housekeeping: rows that can never be used again
    secret, session = create_session(ws, account_id)
    response = JSONResponse(answer)
    response.set_cookie(
        SESSION_COOKIE,
        secret,
        max_age=int((session.expires_at - session.created_at).total_seconds()),
        path="/",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="lax",
    )
    return response


@router.delete("/api/session", status_code=204, tags=["session"])
def sign_out(request: Request) -> Response:
    """Sign out: the session ends on the server and the cookie is cleared."""
    secret = request.cookies.get(SESSION_COOKIE)
    if secret:
        end_session(workspace(request), secret)
    response = Response(status_code=204)
    response.delete_cookie(
        SESSION_COOKIE, path="/", secure=request.url.scheme == "https", httponly=True
    )
    return response
