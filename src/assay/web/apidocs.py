"""The interactive API docs page (``/api/docs``) with a policy of its own.

Swagger UI comes from a CDN and starts with one inline script; the site-wide policy
(``web/headers.py``) allows neither. This page holds nothing a user typed, so it gets a policy
that names the CDN and the hash of exactly that script, and nothing else is loosened.
"""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import APIRouter
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

CDN = "https://cdn.jsdelivr.net"
INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)

router = APIRouter()


def script_hashes(html: str) -> str:
    digests = (
        hashlib.sha256(script.encode("utf-8")).digest() for script in INLINE_SCRIPT.findall(html)
    )
    return " ".join(f"'sha256-{base64.b64encode(d).decode()}'" for d in digests)


@router.get("/api/docs", include_in_schema=False)
def api_docs() -> HTMLResponse:
    page = get_swagger_ui_html(openapi_url="/api/openapi.json", title="Assay API")
    html = bytes(page.body).decode("utf-8")
    policy = "; ".join(
        [
            "default-src 'self'",
            f"script-src 'self' {CDN} {script_hashes(html)}",
            f"style-src 'self' {CDN} 'unsafe-inline'",
            "img-src 'self' data: https://fastapi.tiangolo.com",
            "connect-src 'self'",
            "frame-ancestors 'none'",
            "object-src 'none'",
            "base-uri 'self'",
        ]
    )
    return HTMLResponse(html, headers={"content-security-policy": policy})
