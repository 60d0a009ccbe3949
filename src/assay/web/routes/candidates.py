"""Production candidates: the page (upload a log, see topics, groups, coverage and the sample
with its reasons, take it into assigned tasks) and its JSON twins."""

from __future__ import annotations

import io
from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from assay.candidates.coverage import coverage
from assay.candidates.importing import SHAPES, import_candidates
from assay.candidates.listing import list_candidates, list_clusters, list_groups, list_imports
from assay.candidates.logs import parse_mapping
from assay.candidates.sampling import MAX_SAMPLE, sample
from assay.candidates.scrubbing import Scrubber, parse_patterns
from assay.candidates.taking import take
from assay.errors import Conflict
from assay.people.members import list_members
from assay.store.projects import get_project
from assay.web.actors import actor_id
from assay.web.bounds import MAX_OFFSET, Offset, Storable
from assay.web.render import open_project, render
from assay.web.state import workspace
from assay.web.uploads import read_upload, too_large, upload_body

router = APIRouter()

Size = Query(20, ge=1, le=MAX_SAMPLE, description="How many questions to pick.")
Difficulty = Query(
    None, ge=0, le=500, description="Groups the project's retrievers are asked about."
)


class TakeIn(BaseModel):
    """Take the sample of ``n`` into assigned items. ``groups``: the group ids the page showed,
    in order; when given and the sample is no longer the same, 409 and nothing is made."""

    model_config = ConfigDict(extra="forbid")
    n: int = Field(20, ge=1, le=MAX_SAMPLE)
    difficulty: int | None = Field(None, ge=0, le=500)
    groups: list[int] = Field(default_factory=list, max_length=MAX_SAMPLE)
    to: list[Storable] = Field(default_factory=list, max_length=500)
    overlap: int = Field(1, ge=1, le=50)
    method: Literal["round-robin", "balanced"] = "round-robin"


@router.post(
    "/api/projects/{name}/candidates/imports",
    status_code=201,
    tags=["candidates"],
    openapi_extra=upload_body(
        {
            "shape": {"type": "string", "enum": list(SHAPES)},
            "map": {"type": "string", "description": "FIELD=PATH, comma separated"},
            "mask": {"type": "string", "description": "NAME=REGEX, one a line"},
            "skip_bad": {"type": "string", "enum": ["true", "false"]},
        }
    ),
)
async def api_import(request: Request, name: str) -> Any:
    """Import a log (multipart ``file``) as candidates: scrubbed, passages anchored, grouped.
    422 naming the line and field when a line cannot be read (nothing of the file stored)
    unless ``skip_bad`` is true. The answer is the import's report."""
    ws = workspace(request)
    project = await run_in_threadpool(get_project, ws, name)
    upload = await read_upload(request, ws.settings.max_file_bytes)
    if upload.too_large:
        return too_large(
            request, "documents.too_large", upload.filename or "the file", ws.settings.max_file_mb
        )
    fields = upload.fields
    mapping = parse_mapping([fields.get("map", "")])
    masks = [line for line in fields.get("mask", "").splitlines() if line.strip()]
    scrubber = Scrubber(patterns=parse_patterns(masks))
    text = io.StringIO(bytes(upload.data).decode("utf-8", "replace"))
    report = await run_in_threadpool(
        lambda: import_candidates(
            ws,
            project,
            text,
            name=upload.filename or "log.jsonl",
            shape=fields.get("shape", "jsonl") or "jsonl",
            mapping=mapping,
            scrubber=scrubber,
            skip_bad=fields.get("skip_bad", "") == "true",
            created_by=actor_id(request),
        )
    )
    return JSONResponse(report.as_json(), status_code=201)


@router.get("/api/projects/{name}/candidates/imports", tags=["candidates"])
def api_imports(request: Request, name: str) -> Any:
    """The project's log imports, newest first, each with its report."""
    ws, project = open_project(request, name)
    return {"imports": list_imports(ws, project)}


@router.get("/api/projects/{name}/candidates", tags=["candidates"])
def api_candidates(
    request: Request,
    name: str,
    group: int | None = Query(
        None, ge=1, le=MAX_OFFSET, description="Only this group's candidates."
    ),
    limit: int = Query(50, ge=1, le=1000),
    offset: Offset = 0,
) -> Any:
    """Imported candidates (as scrubbed), oldest first."""
    ws, project = open_project(request, name)
    return list_candidates(ws, project, group=group, limit=limit, offset=offset)


@router.get("/api/projects/{name}/candidates/groups", tags=["candidates"])
def api_groups(
    request: Request,
    name: str,
    cluster: int | None = Query(None, ge=0, le=MAX_OFFSET),
    open_only: bool = Query(False, alias="open"),
    limit: int = Query(50, ge=1, le=1000),
    offset: Offset = 0,
) -> Any:
    """Groups of near-duplicate questions, most asked first, and the topic clusters."""
    ws, project = open_project(request, name)
    found = list_groups(
        ws, project, cluster=cluster, open_only=open_only, limit=limit, offset=offset
    )
    return {**found, "clusters": list_clusters(ws, project)}


@router.get("/api/projects/{name}/candidates/sample", tags=["candidates"])
def api_sample(
    request: Request, name: str, n: int = Size, difficulty: int | None = Difficulty
) -> Any:
    """The sample the policy picks now, each pick with its reasons (nothing is stored)."""
    ws, project = open_project(request, name)
    return sample(ws, project, n, difficulty=difficulty).as_json()


@router.post("/api/projects/{name}/candidates/assignments", status_code=201, tags=["candidates"])
def api_take(request: Request, name: str, body: TakeIn) -> Any:
    """Take the sample into the gold work: one draft item per pick, assigned to ``to`` (the
    shared pool when empty) in the same transaction."""
    ws, project = open_project(request, name)
    picked = sample(ws, project, body.n, difficulty=body.difficulty)
    if body.groups and [p.group_id for p in picked.picks] != body.groups:
        raise Conflict("the sample changed since it was shown (new imports or tasks); look again")
    with ws.engine.begin() as conn:
        taken = take(
            ws, project, picked.picks, body.to, assigned_by=actor_id(request),
            overlap=body.overlap, method=body.method, conn=conn,
        )  # fmt: skip
    return taken.as_json()


@router.get("/api/projects/{name}/coverage", tags=["candidates"])
def api_coverage(request: Request, name: str) -> Any:
    """Which documents, sections and topics of real questions the gold covers, and the gaps
    (documents and topics without gold, most asked first) as the next work."""
    ws, project = open_project(request, name)
    return coverage(ws, project)


@router.get("/projects/{name}/candidates", response_class=HTMLResponse, include_in_schema=False)
def candidates_page(request: Request, name: str) -> HTMLResponse:
    ws, project = open_project(request, name)
    members = [m for m in list_members(ws, project.id) if m.role != "viewer" and not m.disabled]
    return render(
        request,
        "candidates.html",
        project=project,
        section="candidates",
        imports=list_imports(ws, project)[:5],
        clusters=list_clusters(ws, project),
        groups=list_groups(ws, project, open_only=True, limit=20),
        cover=coverage(ws, project),
        members=members,
        shapes=SHAPES,
    )
