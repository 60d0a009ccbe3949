"""The interactive API docs page (``/api/docs``): Swagger UI served from ``static/vendor``.

Everything the page needs comes from this server (no CDN), so the docs work offline and the
page runs under the site-wide Content Security Policy like every other page: Swagger UI is
started by ``static/apidocs.js``, not by an inline script.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from assay.web.render import render

router = APIRouter()


@router.get("/api/docs", response_class=HTMLResponse, include_in_schema=False)
def api_docs(request: Request) -> HTMLResponse:
    return render(request, "api_docs.html", project=None, section="api")
