"""A project's response cache (``assay.llm.response_cache``): what it holds, and dropping it.

Reading is for anyone who reads the project; dropping is for those who run experiments
(owners and leads), since the next runs then pay for every request again.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from assay.llm.response_cache import cache_summary, clear_cache
from assay.web.render import open_project

router = APIRouter()


@router.get("/api/projects/{name}/llm-cache", tags=["experiments"])
def api_cache(request: Request, name: str) -> Any:
    """The project's cached model replies: how many, their size in bytes, the oldest and
    newest, and the same per endpoint and model."""
    ws, project = open_project(request, name)
    return cache_summary(ws.engine, project.id)


@router.delete("/api/projects/{name}/llm-cache", tags=["experiments"])
def api_clear_cache(request: Request, name: str) -> Any:
    """Drop the project's cached replies (``dropped``: how many); every later request goes
    to the model again. Other projects' replies stay."""
    ws, project = open_project(request, name)
    return {"dropped": clear_cache(ws.engine, project.id)}
