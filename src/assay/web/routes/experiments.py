"""Experiments: list and create, run in the background with live progress (server-sent
events), cancel and resume, compare pipelines and experiments. Run and answers files come in
as uploads first (``experiment-files``); a pipeline then names the stored file, never a path.

One task's drill-down and the downloads are in ``routes.experiment_results``, the pages in
``routes.experiment_pages``."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from assay.errors import Conflict
from assay.experiments import (
    cancel_experiment,
    create_experiment,
    delete_experiment,
    get_experiment,
    list_experiments,
)
from assay.experiments.budget import Budget, check_budget
from assay.experiments.imported import refuse_run
from assay.experiments.runfiles import display_name, keep_file
from assay.gold.project_config import retriever_settings
from assay.store.db import transaction
from assay.store.projects import get_project
from assay.web import experiments_view as view
from assay.web.actors import actor_id
from assay.web.experiment_jobs import (
    drop_queued_run,
    progress_json,
    running,
    start_run,
    summary,
    waiting,
)
from assay.web.render import open_project
from assay.web.state import workspace
from assay.web.uploads import read_upload, too_large, upload_body

router = APIRouter()
STREAM_POLL_S = 0.25
STREAM_HEARTBEAT_S = 15.0
STREAM_MAX_S = 3600.0


class ExperimentIn(BaseModel):
    """A new experiment. Pipelines are preset names (keyword, dense, hybrid) or pipeline
    objects ``{name, kind, retriever, generator, ...}`` (see docs/evaluation.md)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    mode: str = "retrieval"
    pipelines: list[str | dict[str, Any]] = Field(min_length=1)
    metrics: list[str | dict[str, Any]] | None = Field(
        default=None,
        description="Metric names (nDCG@10, token_f1, ...; the LLM metrics faithfulness, "
        "answer_relevancy, context_precision, context_recall and answer_correctness are "
        "judged by the project's generator) or objects: a judge metric, or "
        '{"kind": "llm", "metric": ..., "generator": {...}}. None: the defaults of the mode.',
    )
    statuses: list[str] = Field(default_factory=lambda: ["accepted"])
    turns: str = "all"
    seed: int = 0
    chunking: str | None = None
    version: str | None = Field(
        default=None,
        description="Run on this frozen dataset version's items (not the live ones); "
        "its statuses and chunking are then the experiment's.",
    )
    concurrency: int | None = Field(
        default=None,
        description="Units (a task through a pipeline) to run at once in each worker; "
        "default: the sum of max_in_flight of the endpoints the experiment calls.",
    )
    start: bool = Field(default=True, description="Start running right away.")
    cache: bool = Field(
        default=True,
        description="For the run that start begins: false asks every model again instead "
        "of answering from the response cache (as cache=false on the run route).",
    )


class RunIn(BaseModel):
    """The cap of a run (none by default): it stops cleanly once reached, results kept."""

    model_config = ConfigDict(extra="forbid")
    max_cost: float | None = Field(
        default=None, description="US dollars (priced with ASSAY_LLM_PRICES); > 0."
    )
    max_requests: int | None = Field(default=None, description="Model requests; >= 1.")


# ---------------------------------------------------------------- JSON


@router.get("/api/projects/{name}/experiments", tags=["experiments"])
def api_experiments(request: Request, name: str) -> Any:
    ws, project = open_project(request, name)
    return [summary(request, e) for e in list_experiments(ws, project)]


@router.post("/api/projects/{name}/experiments", status_code=201, tags=["experiments"])
def api_create(request: Request, name: str, body: ExperimentIn) -> Any:
    ws, project = open_project(request, name)
    with transaction(ws.engine, None) as conn:
        experiment = create_experiment(
            ws,
            project,
            body.name,
            pipelines=body.pipelines,
            mode=body.mode,
            metrics=body.metrics or None,
            statuses=body.statuses,
            turns=body.turns,
            seed=body.seed,
            chunking=body.chunking,
            embedder=retriever_settings(project).embedder,
            author=actor_id(request),
            version=body.version or None,
            concurrency=body.concurrency,
            conn=conn,
        )
    if body.start:  # after the commit: the run reads the experiment in its own transactions
        start_run(request, ws, experiment.id, cache=body.cache)
    return summary(request, experiment)


FILE_BODY = upload_body(
    {"kind": {"type": "string", "enum": ["run", "answers"]}}, required=("kind",)
)


@router.post(
    "/api/projects/{name}/experiment-files",
    status_code=201,
    tags=["experiments"],
    openapi_extra=FILE_BODY,
)
async def api_upload_file(request: Request, name: str) -> Response:
    """Upload a run file (``kind=run``, TREC) or answers (``kind=answers``, JSONL) for a
    pipeline of kind ``file``: it is checked and stored, and the reply
    ``{"sha256", "name", "kind", "size", "queries"}`` goes into the pipeline as
    ``run_file`` / ``answers_file`` (``{"sha256", "name"}``). 413 over the size limit,
    422 naming the line when the file cannot be read (its content is never echoed)."""
    ws = workspace(request)
    await run_in_threadpool(get_project, ws, name)
    upload = await read_upload(request, ws.settings.max_file_bytes)
    if upload.too_large:
        return too_large(
            request, "documents.too_large", display_name(upload.filename), ws.settings.max_file_mb
        )
    kind = upload.fields.get("kind", "")
    data = bytes(upload.data)
    ref, queries = await run_in_threadpool(keep_file, ws, data, upload.filename, kind)
    body = {**ref.model_dump(), "kind": kind, "size": len(data), "queries": queries}
    return JSONResponse(body, status_code=201)


@router.get("/api/projects/{name}/experiments/{ref}", tags=["experiments"])
def api_experiment(
    request: Request, name: str, ref: str, compare: list[str] = Query(default=[])
) -> Any:
    """The experiment with aggregates per pipeline; ``compare`` adds other experiments."""
    ws, project = open_project(request, name)
    chosen = view.load_comparison(ws, project, ref, compare)
    return {
        "experiment": summary(request, chosen[0]),
        "compare": [summary(request, e) for e in chosen[1:]],
        "columns": [
            {"experiment": c.experiment.name, "pipeline": c.pipeline, "summary": c.summary}
            for c in view.columns(chosen)
        ],
    }


@router.delete("/api/projects/{name}/experiments/{ref}", status_code=204, tags=["experiments"])
def api_delete(request: Request, name: str, ref: str) -> Response:
    ws, project = open_project(request, name)
    with transaction(ws.engine, None) as conn:
        experiment = get_experiment(ws, project, ref, with_aggregates=False, conn=conn)
        if running(request, experiment.id):
            raise Conflict(
                f"experiment {experiment.name!r} is running; cancel it first",
                key="raised.experiment_running",
                name=experiment.name,
            )
        delete_experiment(ws, project, experiment.id, conn=conn)
    return Response(status_code=204)


@router.post("/api/projects/{name}/experiments/{ref}/run", status_code=202, tags=["experiments"])
def api_run(
    request: Request, name: str, ref: str, body: RunIn | None = None, cache: bool = True
) -> Any:
    """Start or resume: tasks with a good result are kept, failed ones are tried again.
    ``max_cost`` / ``max_requests`` cap the run; ``cache=false`` asks every model again
    instead of answering from the response cache; ``progress.waiting`` is ``no_worker`` when
    no process runs jobs (the run stays queued until one starts)."""
    ws, project = open_project(request, name)
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    refuse_run(experiment.name, experiment.selection)
    budget = Budget.from_json(body.model_dump() if body else None)
    check_budget(experiment, budget)
    if not start_run(request, ws, experiment.id, budget, cache=cache):
        if experiment.status != "running" and waiting(request, ws):
            raise Conflict(
                f"experiment {experiment.name!r} is queued, but no process is running jobs: "
                "start one with `assay worker` (on any machine that reaches the database), or "
                "start the server with ASSAY_SERVER_RUNS_JOBS=true",
                key="raised.experiment_waits_for_worker",
                name=experiment.name,
            )
        raise Conflict(
            f"experiment {experiment.name!r} is already running",
            key="raised.experiment_already_running",
            name=experiment.name,
        )
    return summary(request, get_experiment(ws, project, experiment.id, with_aggregates=False))


@router.post("/api/projects/{name}/experiments/{ref}/cancel", tags=["experiments"])
def api_cancel(request: Request, name: str, ref: str) -> Any:
    """Stop after the current task; the results so far are kept (resume with run)."""
    ws, project = open_project(request, name)
    with transaction(ws.engine, None) as conn:
        experiment = cancel_experiment(ws, project, ref, conn=conn)
    drop_queued_run(request, experiment.id)
    return summary(request, experiment)


@router.get("/api/projects/{name}/experiments/{ref}/events", tags=["experiments"])
async def api_events(request: Request, name: str, ref: str) -> StreamingResponse:
    """Server-sent events: a ``progress`` event whenever the counts change, then one ``end``
    event once the run is over (the stream then closes)."""
    ws = workspace(request)
    project = await run_in_threadpool(get_project, ws, name)
    first = await run_in_threadpool(get_experiment, ws, project, ref, with_aggregates=False)

    async def stream() -> AsyncIterator[str]:
        last = ""
        started = beat = time.monotonic()
        yield "retry: 2000\n\n"
        while True:
            experiment = await run_in_threadpool(
                get_experiment, ws, project, first.id, with_aggregates=False
            )
            progress = await run_in_threadpool(progress_json, request, experiment)
            going = progress["running"]
            data = json.dumps(progress)
            if data != last:
                yield f"event: progress\ndata: {data}\n\n"
                last = data
            if not going and experiment.status != "running":
                yield f"event: end\ndata: {data}\n\n"
                return
            now = time.monotonic()
            if now - started > STREAM_MAX_S:
                return  # the browser reconnects
            if now - beat > STREAM_HEARTBEAT_S:
                yield ": still here\n\n"
                beat = now
            if await request.is_disconnected():
                return
            await asyncio.sleep(STREAM_POLL_S)

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)
