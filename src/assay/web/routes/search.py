"""Search over a project's chunks (JSON; the editor's search panel calls it)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from assay.gold.panel_search import panel_search
from assay.records import to_json
from assay.search.indexes import search
from assay.store.projects import get_project
from assay.web.state import workspace

router = APIRouter()


@router.get("/api/projects/{name}/search", tags=["search"])
def api_search(
    request: Request,
    name: str,
    q: str,
    k: int = 10,
    chunking: str | None = None,
    rerank: bool = False,
) -> Any:
    """Keyword search: hits with doc_id, chunk_id, start, end, score, rank, text, snippet and
    highlights (offsets into the snippet); ``rerank`` reorders them with the project's
    reranker (scores are then the reranker's)."""
    ws = workspace(request)
    project = get_project(ws, name)
    if not rerank:
        return to_json(search(ws, project, q, k, chunking))
    return to_json(panel_search(ws, project, q, k, chunking, rerank=True))
