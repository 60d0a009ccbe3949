"""What the app keeps for every request: the workspace it serves (``app.state.ws``) and its
background jobs (``app.state.jobs``), both set by ``create_app``. Its own module so that the
access guard and the page renderer, which both need it, do not import each other."""

from __future__ import annotations

from starlette.requests import Request

from assay.jobs import Jobs
from assay.store.workspace import Workspace


def workspace(request: Request) -> Workspace:
    ws = request.app.state.ws
    assert isinstance(ws, Workspace)
    return ws


def jobs(request: Request) -> Jobs:
    found = request.app.state.jobs
    assert isinstance(found, Jobs)
    return found
