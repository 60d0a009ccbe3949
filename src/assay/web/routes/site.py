"""What every site answers besides its pages: the icon browsers ask for at ``/favicon.ico``.

Pages link ``static/favicon.svg`` from ``base.html``; this route serves the same picture to
browsers and tools that ask the old address without reading the page.
"""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter
from fastapi.responses import Response

router = APIRouter()


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> Response:
    picture = (resources.files("assay.web") / "static" / "favicon.svg").read_bytes()
    return Response(
        picture, media_type="image/svg+xml", headers={"cache-control": "public, max-age=86400"}
    )
