"""LLM-drafted items: what ``assay synthesize`` does. ``POST .../synthesize`` drafts in the
request (for scripts); ``POST .../synthesis-jobs`` queues a job that the page
``/projects/{name}/synthesis`` starts and follows (its progress and result are those of a
transfer job: ``GET .../transfer/jobs/{id}`` and its ``events``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from assay.corpus.chunkings import get_chunking, list_chunkings
from assay.errors import InvalidInput
from assay.gold.synthesis import DEFAULT_TYPES, synthesize
from assay.gold.taxonomy import query_types
from assay.jobs.synthesis_work import start_synthesis
from assay.jobs.transfer_jobs import SYNTHESIS, project_jobs
from assay.records import to_json
from assay.store.projects import get_project
from assay.web.render import language, open_project, render
from assay.web.state import jobs, workspace
from assay.web.transfer_jobs import job_json

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


@router.post("/api/projects/{name}/synthesis-jobs", status_code=202, tags=["items"])
def api_start_synthesis(request: Request, name: str, body: SynthesisIn) -> JSONResponse:
    """Queue drafting as a job (the same work as ``POST .../synthesize``); follow it at
    ``events`` or by polling the job; its ``result`` lists the drafts made and skipped."""
    ws, project = open_project(request, name)
    known = {q.id for q in query_types(project)}
    unknown = [t for t in body.types if t not in known]
    if unknown or not body.types:
        raise InvalidInput(
            f"unknown query type(s) {', '.join(unknown) or '(none given)'}; this project's "
            f"types are: {', '.join(sorted(known))}"
        )
    if body.chunking:
        get_chunking(ws, project, body.chunking)  # 404 naming the chunkings there are
    job = start_synthesis(
        ws,
        jobs(request),
        project.name,
        n=body.n,
        types=body.types,
        seed=body.seed,
        chunking=body.chunking or None,
    )
    return JSONResponse(job_json(ws, job), status_code=202)


@router.get("/projects/{name}/synthesis", response_class=HTMLResponse, include_in_schema=False)
def synthesis_page(request: Request, name: str) -> HTMLResponse:
    """The form that starts LLM drafts, the progress of a running job and the last jobs."""
    ws, project = open_project(request, name)
    lang = language(request)
    types = [{"id": q.id, "label": q.text(lang)[0]} for q in query_types(project)]
    quoted = quote(project.name)
    return render(
        request,
        "synthesis.html",
        project=project,
        section="items",
        query_types=types,
        default_types=list(DEFAULT_TYPES),
        chunkings=list_chunkings(ws, project),
        jobs=[job_json(ws, job) for job in project_jobs(ws, project.name, (SYNTHESIS,))[:10]],
        api=f"/api/projects/{quoted}/synthesis-jobs",
        items_url=f"/projects/{quoted}/items",
    )
