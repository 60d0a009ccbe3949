"""Bounded request bodies, enforced while they arrive.

A declared ``Content-Length`` over the limit is refused before anything is read; a body without
one (chunked) is counted as it streams in and refused (413) as soon as it passes the limit, so
a client cannot make the server hold a 100 MB save in memory. File uploads
(``multipart/form-data``) have a larger cap here; the upload routes apply the per-file limit
(``ASSAY_MAX_FILE_MB``) themselves while reading.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` when the body passes its limit; answers 413 wherever it is read
    (FastAPI passes HTTP exceptions through its body parsing, the middleware catches the rest).
    """

    def __init__(self, limit: int, setting: str) -> None:
        megabytes = f"{limit / 1024 / 1024:g}"
        super().__init__(
            413,
            f"the request body is larger than {megabytes} MB ({setting}); nothing was read "
            "or changed",
        )


class BodyLimitMiddleware:
    """``json_limit`` bytes for every body except file uploads, which get ``upload_limit``."""

    def __init__(self, app: ASGIApp, json_limit: int, upload_limit: int) -> None:
        self.app = app
        self.json_limit = json_limit
        self.upload_limit = upload_limit

    def limit_for(self, scope: Scope) -> tuple[int, str]:
        headers = dict(scope["headers"])
        content_type = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if content_type == b"multipart/form-data":
            return self.upload_limit, "uploads: ASSAY_MAX_FILE_MB"
        return self.json_limit, "ASSAY_MAX_BODY_MB"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, setting = self.limit_for(scope)
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.strip().isdigit() and int(declared) > limit:
            await _refuse(BodyTooLarge(limit, setting), scope, receive, send)
            return
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit, setting)
            return message

        async def watching_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except BodyTooLarge as exc:
            if started:
                raise
            await _refuse(exc, scope, receive, send)


async def _refuse(exc: BodyTooLarge, scope: Scope, receive: Receive, send: Send) -> None:
    response = JSONResponse(
        {"detail": exc.detail}, status_code=413, headers={"connection": "close"}
    )
    await response(scope, receive, send)
