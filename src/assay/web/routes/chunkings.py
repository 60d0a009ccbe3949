"""Named chunkings of a project (JSON): list them, create one; what ``assay chunkings`` and
``assay chunk`` do on the command line."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from assay.corpus.chunkings import count_chunks, create_chunking, list_chunkings
from assay.records import Chunking
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.web.routes.documents import sync_quietly
from assay.web.state import workspace

router = APIRouter()


class ChunkingIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    method: str
    """recursive, tokens or sentences"""
    params: dict[str, Any] = Field(default_factory=dict)
    default: bool = False
    """Make it the project's default chunking."""


def chunking_json(ws: Workspace, chunking: Chunking) -> dict[str, Any]:
    return {
        "name": chunking.name,
        "method": chunking.method,
        "params": chunking.params,
        "default": chunking.is_default,
        "chunks": count_chunks(ws, chunking),
    }


@router.get("/api/projects/{name}/chunkings", tags=["documents"])
def api_chunkings(request: Request, name: str) -> list[dict[str, Any]]:
    """The project's chunkings with their method, parameters and number of chunks."""
    ws = workspace(request)
    return [chunking_json(ws, c) for c in list_chunkings(ws, get_project(ws, name))]


@router.post("/api/projects/{name}/chunkings", status_code=201, tags=["documents"])
def api_create_chunking(request: Request, name: str, body: ChunkingIn) -> dict[str, Any]:
    """Create a chunking and chunk every document with it (existing chunkings stay); the
    search index follows."""
    ws = workspace(request)
    project = get_project(ws, name)
    created = create_chunking(
        ws, project, body.name, body.method, body.params, make_default=body.default
    )
    sync_quietly(ws, project)
    return chunking_json(ws, created)
