"""The outgoing endpoints a workspace admin registered: the ``/endpoints`` page and
``/api/endpoints``.

Everyone signed in reads the list (a lead chooses among these URLs in the project settings
and experiments); adding and removing is ``workspace.endpoints``, for workspace admins only
(the access guard decides, as for every route). Rules: :mod:`assay.llm.endpoints`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.llm.endpoints import add_endpoint, list_endpoints, remove_endpoint
from assay.people.mode import team_mode
from assay.web.actors import actor_id
from assay.web.render import render
from assay.web.state import workspace

router = APIRouter()


class EndpointIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=100)
    url: str = Field(max_length=2000)
    allow_private: bool = False
    note: str = Field(default="", max_length=500)


@router.get("/endpoints", response_class=HTMLResponse, include_in_schema=False)
def endpoints_page(request: Request) -> Response:
    """The registered endpoints; for workspace admins also the form to add and remove."""
    ws = workspace(request)
    return render(
        request,
        "endpoints.html",
        endpoints=list_endpoints(ws),
        team=team_mode(ws),
        section="endpoints",
    )


@router.get("/api/endpoints", tags=["endpoints"])
def api_endpoints(request: Request) -> list[dict[str, Any]]:
    """The registered endpoints by name: ``name``, ``url``, ``allow_private``, ``note``,
    ``created_at``."""
    return [e.to_json() for e in list_endpoints(workspace(request))]


@router.post("/api/endpoints", status_code=201, tags=["endpoints"])
def api_add_endpoint(request: Request, body: EndpointIn, response: Response) -> dict[str, Any]:
    """Register an endpoint (workspace admins). ``allow_private``: admit its host although
    it is a loopback, private or link-local address. 409 when the name is taken, 422 when
    the URL is not http(s) or the outgoing policy refuses it."""
    endpoint = add_endpoint(
        workspace(request),
        body.name,
        body.url,
        allow_private=body.allow_private,
        note=body.note,
        created_by=actor_id(request),
    )
    response.headers["location"] = f"/api/endpoints/{quote(endpoint.name, safe='')}"
    return endpoint.to_json()


@router.delete("/api/endpoints/{endpoint}", status_code=204, tags=["endpoints"])
def api_remove_endpoint(request: Request, endpoint: str) -> Response:
    """Remove an endpoint (workspace admins): no API key goes to it from the next request."""
    remove_endpoint(workspace(request), endpoint)
    return Response(status_code=204)
