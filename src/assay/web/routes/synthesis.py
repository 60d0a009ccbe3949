"""LLM-drafted items (JSON): what ``assay synthesize`` does, for scripts that use the API."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from assay.gold.synthesis import DEFAULT_TYPES, synthesize
from assay.records import to_json
from assay.store.projects import get_project
from assay.web.state import workspace

router = APIRouter()


class SynthesisIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = Field(20, ge=1, le=1000)
    """How many chunks to sample (one draft each)."""
    types: list[str] = Field(default_factory=lambda: list(DEFAULT_TYPES))
    """Query types, assigned to the sampled chunks in turn."""
    seed: int = 0
    chunking: str | None = None
    """Chunking to sample from (default: the project's default)."""


@router.post("/api/projects/{name}/synthesize", tags=["items"])
def api_synthesize(request: Request, name: str, body: SynthesisIn) -> Any:
    """Draft items from sampled chunks with the project's generator; each is stored as a
    draft marked as an LLM suggestion. Returns the report: ids created, drafts skipped and
    why, counts per query type."""
    ws = workspace(request)
    report = synthesize(
        ws,
        get_project(ws, name),
        n=body.n,
        types=body.types,
        seed=body.seed,
        chunking=body.chunking,
    )
    return to_json(report)
