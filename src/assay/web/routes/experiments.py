"""Experiments: list and create, run in the background with live progress (server-sent
events), cancel and resume, compare pipelines and experiments, drill into one task, download
results (JSON, CSV, InspectorRAGet). Run and answers files come in as uploads first
(``experiment-files``); a pipeline then names the stored file, never a path."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from assay.corpus.chunkings import list_chunkings
from assay.errors import Conflict
from assay.experiments import (
    DEFAULT_METRICS,
    cancel_experiment,
    create_experiment,
    delete_experiment,
    get_experiment,
    list_experiments,
)
from assay.experiments.imported import refuse_run
from assay.experiments.runfiles import display_name, keep_file
from assay.experiments.tasks import TURN_SELECTIONS
from assay.gold.item_inputs import STATUSES
from assay.gold.project_config import generator_settings, retriever_settings
from assay.gold.taxonomy import query_types
from assay.records import Project, to_json
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from assay.web import experiments_view as view
from assay.web.bounds import Offset, PageNumber
from assay.web.render import author, language, render, translator, workspace
from assay.web.uploads import read_upload

router = APIRouter()
MODES = ("retrieval", "generation", "rag")
PAGE_SIZE = 50
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
    metrics: list[str | dict[str, Any]] | None = None
    statuses: list[str] = Field(default_factory=lambda: ["accepted"])
    turns: str = "all"
    seed: int = 0
    chunking: str | None = None
    start: bool = Field(default=True, description="Start running right away.")


def jobs(request: Request) -> view.ExperimentJobs:
    registry = request.app.state.experiment_jobs
    assert isinstance(registry, view.ExperimentJobs)
    return registry


def _open(request: Request, name: str) -> tuple[Workspace, Project]:
    ws = workspace(request)
    return ws, get_project(ws, name)


def _summary(request: Request, experiment: Any) -> dict[str, Any]:
    return {
        **to_json(experiment),
        "progress": view.progress_json(experiment, jobs(request).alive(experiment.id)),
    }


# ---------------------------------------------------------------- JSON


@router.get("/api/projects/{name}/experiments", tags=["experiments"])
def api_experiments(request: Request, name: str) -> Any:
    ws, project = _open(request, name)
    return [_summary(request, e) for e in list_experiments(ws, project)]


@router.post("/api/projects/{name}/experiments", status_code=201, tags=["experiments"])
def api_create(request: Request, name: str, body: ExperimentIn) -> Any:
    ws, project = _open(request, name)
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
        author=author(request),
    )
    if body.start:
        jobs(request).start(ws, project, experiment.id)
    return _summary(request, experiment)


FILE_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file", "kind"],
                    "properties": {
                        "file": {"type": "string", "format": "binary"},
                        "kind": {"type": "string", "enum": ["run", "answers"]},
                    },
                }
            }
        },
    }
}


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
        detail = translator(request)(
            "documents.too_large",
            name=display_name(upload.filename),
            limit=f"{ws.settings.max_file_mb:g}",
        )
        return JSONResponse({"detail": detail}, status_code=413)
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
    ws, project = _open(request, name)
    chosen = view.load_comparison(ws, project, ref, compare)
    return {
        "experiment": _summary(request, chosen[0]),
        "compare": [_summary(request, e) for e in chosen[1:]],
        "columns": [
            {"experiment": c.experiment.name, "pipeline": c.pipeline, "summary": c.summary}
            for c in view.columns(chosen)
        ],
    }


@router.delete("/api/projects/{name}/experiments/{ref}", status_code=204, tags=["experiments"])
def api_delete(request: Request, name: str, ref: str) -> Response:
    ws, project = _open(request, name)
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    if jobs(request).alive(experiment.id):
        raise Conflict(f"experiment {experiment.name!r} is running; cancel it first")
    delete_experiment(ws, project, experiment.id)
    return Response(status_code=204)


@router.post("/api/projects/{name}/experiments/{ref}/run", status_code=202, tags=["experiments"])
def api_run(request: Request, name: str, ref: str) -> Any:
    """Start or resume: tasks with a good result are kept, failed ones are tried again."""
    ws, project = _open(request, name)
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    refuse_run(experiment.name, experiment.selection)
    if not jobs(request).start(ws, project, experiment.id):
        raise Conflict(f"experiment {experiment.name!r} is already running")
    return _summary(request, get_experiment(ws, project, experiment.id, with_aggregates=False))


@router.post("/api/projects/{name}/experiments/{ref}/cancel", tags=["experiments"])
def api_cancel(request: Request, name: str, ref: str) -> Any:
    """Stop after the current task; the results so far are kept (resume with run)."""
    ws, project = _open(request, name)
    experiment = cancel_experiment(ws, project, ref)
    jobs(request).stop(experiment.id)
    return _summary(request, experiment)


@router.get("/api/projects/{name}/experiments/{ref}/events", tags=["experiments"])
async def api_events(request: Request, name: str, ref: str) -> StreamingResponse:
    """Server-sent events: a ``progress`` event whenever the counts change, then one ``end``
    event once the run is over (the stream then closes)."""
    ws = workspace(request)
    project = await run_in_threadpool(get_project, ws, name)
    first = await run_in_threadpool(get_experiment, ws, project, ref, with_aggregates=False)
    registry = jobs(request)

    async def stream() -> AsyncIterator[str]:
        last = ""
        started = beat = time.monotonic()
        yield "retry: 2000\n\n"
        while True:
            experiment = await run_in_threadpool(
                get_experiment, ws, project, first.id, with_aggregates=False
            )
            running = registry.alive(first.id)
            data = json.dumps(view.progress_json(experiment, running))
            if data != last:
                yield f"event: progress\ndata: {data}\n\n"
                last = data
            if not running and experiment.status != "running":
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


@router.get("/api/projects/{name}/experiments/{ref}/tasks", tags=["experiments"])
def api_tasks(
    request: Request,
    name: str,
    ref: str,
    offset: Offset = 0,
    limit: int = Query(default=PAGE_SIZE, ge=1, le=1000),
) -> Any:
    ws, project = _open(request, name)
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    total, rows = view.task_rows(ws, project, experiment, offset, limit)
    return {"total": total, "offset": offset, "tasks": rows}


@router.get("/api/projects/{name}/experiments/{ref}/tasks/{task_id}", tags=["experiments"])
def api_task(request: Request, name: str, ref: str, task_id: str) -> Any:
    """One task across pipelines: gold, retrieved passages with hits marked, answers."""
    ws, project = _open(request, name)
    return view.drill_down(ws, project, ref, task_id)


@router.get("/api/projects/{name}/experiments/{ref}/results.json", tags=["experiments"])
def api_results_json(request: Request, name: str, ref: str) -> StreamingResponse:
    ws, project = _open(request, name)
    experiment = get_experiment(ws, project, ref)

    def body() -> Any:
        head = {k: v for k, v in to_json(experiment).items() if k != "aggregates"}
        yield '{"experiment": ' + json.dumps(head) + ', "aggregates": '
        yield json.dumps(to_json(experiment.aggregates)) + ', "results": ['
        for index, row in enumerate(view.results_rows(ws, project, experiment)):
            yield ("," if index else "") + "\n" + json.dumps(row)
        yield "\n]}\n"

    return StreamingResponse(
        body(), media_type="application/json", headers=_download(experiment.name, "json")
    )


@router.get("/api/projects/{name}/experiments/{ref}/results.csv", tags=["experiments"])
def api_results_csv(request: Request, name: str, ref: str) -> StreamingResponse:
    ws, project = _open(request, name)
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    return StreamingResponse(
        view.results_csv(ws, project, experiment),
        media_type="text/csv; charset=utf-8",
        headers=_download(experiment.name, "csv"),
    )


@router.get("/api/projects/{name}/experiments/{ref}/inspectorraget", tags=["experiments"])
def api_inspectorraget(request: Request, name: str, ref: str) -> JSONResponse:
    """The experiment as an InspectorRAGet file (schema version 2)."""
    from assay.transfer.experiment_file import experiment_to_inspectorraget

    ws, project = _open(request, name)
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    data = experiment_to_inspectorraget(ws, project, experiment.id)
    return JSONResponse(data, headers=_download(experiment.name + ".inspectorraget", "json"))


def _download(stem: str, ext: str) -> dict[str, str]:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem) or "experiment"
    return {
        "Content-Disposition": f'attachment; filename="{safe}.{ext}"; '
        f"filename*=UTF-8''{quote(stem)}.{ext}"
    }


# ---------------------------------------------------------------- pages


def form_options(request: Request, ws: Workspace, project: Project) -> dict[str, Any]:
    retriever = retriever_settings(project)
    generator = generator_settings(project)
    lang = language(request)
    return {
        "modes": list(MODES),
        "default_metrics": {mode: list(names) for mode, names in DEFAULT_METRICS.items()},
        "statuses": list(STATUSES),
        "turns": list(TURN_SELECTIONS),
        "chunkings": [c.name for c in list_chunkings(ws, project)],
        "embedder": retriever.embedder,
        "generator": {"kind": generator.kind, "model": generator.model},
        "query_types": [
            {"id": q.id, "label": q.label.get(lang) or q.id} for q in query_types(project)
        ],
        "api": f"/api/projects/{quote(project.name)}/experiments",
        "files_api": f"/api/projects/{quote(project.name)}/experiment-files",
    }


@router.get("/projects/{name}/experiments", response_class=HTMLResponse, include_in_schema=False)
def experiments_page(request: Request, name: str) -> HTMLResponse:
    ws, project = _open(request, name)
    return render(
        request,
        "experiments.html",
        project=project,
        section="experiments",
        experiments=[_summary(request, e) for e in list_experiments(ws, project)],
        options=form_options(request, ws, project),
    )


@router.get(
    "/projects/{name}/experiments/{ref}", response_class=HTMLResponse, include_in_schema=False
)
def experiment_page(
    request: Request,
    name: str,
    ref: str,
    compare: list[str] = Query(default=[]),
    page: PageNumber = 1,
) -> HTMLResponse:
    ws, project = _open(request, name)
    chosen = view.load_comparison(ws, project, ref, compare)
    cols = view.columns(chosen)
    main = chosen[0]
    total, rows = view.task_rows(ws, project, main, (page - 1) * PAGE_SIZE, PAGE_SIZE)
    return render(
        request,
        "experiment.html",
        project=project,
        section="experiments",
        experiment=main,
        progress=view.progress_json(main, jobs(request).alive(main.id)),
        compared=chosen[1:],
        others=[e for e in list_experiments(ws, project) if e.id != main.id],
        columns=cols,
        metrics=view.metric_union(chosen),
        plots=view.plots(ws, project, chosen, cols),
        tasks=rows,
        total_tasks=total,
        page=page,
        pages=max(1, -(-total // PAGE_SIZE)),
        compare_refs=[str(e.id) for e in chosen[1:]],
    )


@router.get(
    "/projects/{name}/experiments/{ref}/tasks/{task_id}",
    response_class=HTMLResponse,
    include_in_schema=False,
)
def task_page(request: Request, name: str, ref: str, task_id: str) -> HTMLResponse:
    ws, project = _open(request, name)
    return render(
        request,
        "experiment_task.html",
        project=project,
        section="experiments",
        data=view.drill_down(ws, project, ref, task_id),
    )
