"""Search over a project's chunks (JSON; the editor's search panel calls it)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from assay.records import to_json
from assay.search.indexes import search
from assay.store.projects import get_project
from assay.web.state import workspace

router = APIRouter()


@router.get("/api/projects/{name}/search", tags=["search"])
def api_search(
    request: Request, name: str, q: str, k: int = 10, chunking: str | None = None
) -> Any:
    """Keyword search: hits with doc_id, chunk_id, start, end, score, rank, text, snippet and
    highlights (offsets into the snippet)."""
    ws = workspace(request)
    return to_json(search(ws, get_project(ws, name), q, k, chunking))
