"""Pools as JSON: one question's pool (the editor's and the workbench's "pool" view), an item
turn's pool judged by its gold, and the project's pool coverage (the dashboard's section)."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter, Query, Request

from assay.corpus.documents import document_names
from assay.experiments.pools import Pool, pool_strong_hits, project_pool, question_pool
from assay.gold.project_config import update_settings
from assay.records import Project
from assay.search.pool_settings import PoolSettings, pool_settings, with_sources
from assay.store.workspace import Workspace
from assay.web.render import open_project

router = APIRouter()

Depth = Query(None, ge=1, le=100, description="Passages from each source (default: settings).")


def _payload(ws: Workspace, project: Project, pool: Pool, settings: PoolSettings) -> dict[str, Any]:
    names = document_names(ws, project, {entry.doc_id for entry in pool.entries})
    strong = [dataclasses.asdict(hit) for hit in pool_strong_hits(pool, settings)]
    return {
        **pool.to_json(),
        "documents": names,
        "strong_hits": strong,
        "strong_rule": {
            "coverage": settings.strong_coverage,
            "min_words": settings.strong_min_words,
        },
    }


@router.get("/api/projects/{name}/pool", tags=["search"])
def api_pool(
    request: Request, name: str, q: str, depth: int | None = Depth, chunking: str | None = None
) -> Any:
    """The pool of a free question: every pool source's first ``depth`` passages, passages
    overlapping by the documented policy counted once, each with the sources that found it
    (``found_by``: source → rank); ``strong_hits`` are the passages the unanswerable check
    would warn about; ``errors`` name the sources that failed."""
    ws, project = open_project(request, name)
    settings = with_sources(pool_settings(project.settings), depth=depth)
    pool = question_pool(ws, project, settings, query=q, chunking=chunking)
    return _payload(ws, project, pool, settings)


@router.get("/api/projects/{name}/items/{item_id}/pool", tags=["items"])
def api_item_pool(
    request: Request,
    name: str,
    item_id: str,
    turn: int | None = Query(None, ge=1, description="1-based turn (default: the last)."),
    q: str | None = Query(None, description="Another wording to pool instead of the turn's."),
    depth: int | None = Depth,
    chunking: str | None = None,
) -> Any:
    """The pool of an item's turn, judged by its gold: ``judged`` on each entry is the
    strongest label of the evidence mapping to it, ``coverage`` judged over pooled."""
    ws, project = open_project(request, name)
    settings = with_sources(pool_settings(project.settings), depth=depth)
    pool = question_pool(
        ws, project, settings, query=q, item_id=item_id, turn=turn, chunking=chunking
    )
    return _payload(ws, project, pool, settings)


@router.get("/api/projects/{name}/pool/summary", tags=["search"])
def api_pool_summary(
    request: Request,
    name: str,
    statuses: str = "all",
    depth: int | None = Depth,
    chunking: str | None = None,
) -> Any:
    """The project's pool, computed now over every question of its items: pooled and judged
    passages, coverage overall and per source, and the unanswerable questions with strong
    hits."""
    ws, project = open_project(request, name)
    settings = with_sources(pool_settings(project.settings), depth=depth)
    whole = project_pool(ws, project, settings, statuses=statuses, chunking=chunking)
    warnings = []
    for pool in whole.pools:
        if pool.marked_unanswerable:
            hits = pool_strong_hits(pool, settings)
            if hits:
                warnings.append(
                    {"task_id": pool.task_id, "query": pool.query, **dataclasses.asdict(hits[0])}
                )
    return {"summary": whole.summary(), "unanswerable_with_strong_hits": warnings}


@router.get("/api/projects/{name}/pool-settings", tags=["search"])
def api_pool_settings(request: Request, name: str) -> Any:
    """The pool settings: sources, depth, the strong-hit rule, and ``chat`` (what the
    conversation workbench retrieves from)."""
    _, project = open_project(request, name)
    return pool_settings(project.settings).model_dump()


@router.put("/api/projects/{name}/pool-settings", tags=["search"])
def api_save_pool_settings(request: Request, name: str, body: dict[str, Any]) -> Any:
    """Change some pool settings (fields left out keep their values); invalid settings and
    endpoints the outgoing-HTTP policy refuses get 422 and nothing is stored."""
    ws, project = open_project(request, name)
    merged = {**pool_settings(project.settings).model_dump(), **body}
    saved = update_settings(ws, project, {"pool": merged})
    return pool_settings(saved.settings).model_dump()
