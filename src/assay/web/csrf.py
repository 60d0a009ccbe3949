"""Protection against cross-site request forgery (double-submit cookie).

Every page sets a random token cookie; every state-changing request must echo it in the
``X-CSRF-Token`` header (every fetch and upload adds it, see static/app.js). Another site can
neither read the cookie nor set the header. A request whose ``Origin`` names another site is
refused outright. Requests with an ``Authorization: Bearer`` token (scripts, the CLI) need no
CSRF token: a browser never adds that header by itself, and another site cannot add it
without a CORS preflight, which this server never grants.
"""

from __future__ import annotations

import secrets
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "assay_csrf"
HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class CSRFMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        cookie = request.cookies.get(COOKIE, "")
        bearer = request.headers.get("authorization", "").lower().startswith("bearer ")
        if scope["method"] not in SAFE_METHODS and not bearer:
            problem = await _problem(request, cookie)
            if problem:
                await JSONResponse({"detail": problem}, status_code=403)(scope, receive, send)
                return
        token = cookie or secrets.token_urlsafe(32)
        scope.setdefault("state", {})["csrf_token"] = token

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start" and not cookie:
                response = Response()
                response.set_cookie(COOKIE, token, httponly=False, samesite="strict", path="/")
                message.setdefault("headers", []).extend(
                    (k, v) for k, v in response.raw_headers if k == b"set-cookie"
                )
            await send(message)

        await self.app(scope, receive, send_with_cookie)


async def _problem(request: Request, cookie: str) -> str:
    origin = request.headers.get("origin")
    if origin and origin != "null":
        host = request.headers.get("host", "")
        if urlsplit(origin).netloc != host:
            return f"cross-site request from {origin} refused"
    sent = request.headers.get(HEADER, "")
    if not cookie or not sent or not secrets.compare_digest(cookie, sent):
        return "missing or wrong CSRF token: reload the page and try again"
    return ""
