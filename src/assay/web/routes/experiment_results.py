"""An experiment's results: a page of tasks with each pipeline's metrics, one task across the
pipelines, and the downloads (JSON, CSV, InspectorRAGet)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse

from assay.experiments import get_experiment
from assay.records import to_json
from assay.web import experiments_view as view
from assay.web.bounds import Offset
from assay.web.experiment_downloads import results_csv, results_rows
from assay.web.experiment_task import drill_down
from assay.web.render import open_project

router = APIRouter()


@router.get("/api/projects/{name}/experiments/{ref}/tasks", tags=["experiments"])
def api_tasks(
    request: Request,
    name: str,
    ref: str,
    offset: Offset = 0,
    limit: int = Query(default=view.PAGE_SIZE, ge=1, le=1000),
) -> Any:
    ws, project = open_project(request, name)
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    total, rows = view.task_rows(ws, project, experiment, offset, limit)
    return {"total": total, "offset": offset, "tasks": rows}


@router.get("/api/projects/{name}/experiments/{ref}/tasks/{task_id}", tags=["experiments"])
def api_task(request: Request, name: str, ref: str, task_id: str) -> Any:
    """One task across pipelines: gold, retrieved passages with hits marked, answers."""
    ws, project = open_project(request, name)
    return drill_down(ws, project, ref, task_id)


@router.get("/api/projects/{name}/experiments/{ref}/results.json", tags=["experiments"])
def api_results_json(request: Request, name: str, ref: str) -> StreamingResponse:
    ws, project = open_project(request, name)
    experiment = get_experiment(ws, project, ref)

    def body() -> Any:
        head = {k: v for k, v in to_json(experiment).items() if k != "aggregates"}
        yield '{"experiment": ' + json.dumps(head) + ', "aggregates": '
        yield json.dumps(to_json(experiment.aggregates)) + ', "results": ['
        for index, row in enumerate(results_rows(ws, project, experiment)):
            yield ("," if index else "") + "\n" + json.dumps(row)
        yield "\n]}\n"

    return StreamingResponse(
        body(), media_type="application/json", headers=_download(experiment.name, "json")
    )


@router.get("/api/projects/{name}/experiments/{ref}/results.csv", tags=["experiments"])
def api_results_csv(request: Request, name: str, ref: str) -> StreamingResponse:
    ws, project = open_project(request, name)
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    return StreamingResponse(
        results_csv(ws, project, experiment),
        media_type="text/csv; charset=utf-8",
        headers=_download(experiment.name, "csv"),
    )


@router.get("/api/projects/{name}/experiments/{ref}/inspectorraget", tags=["experiments"])
def api_inspectorraget(request: Request, name: str, ref: str) -> JSONResponse:
    """The experiment as an InspectorRAGet file (schema version 2)."""
    from assay.transfer.experiment_file import experiment_to_inspectorraget

    ws, project = open_project(request, name)
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    data = experiment_to_inspectorraget(ws, project, experiment.id)
    return JSONResponse(data, headers=_download(experiment.name + ".inspectorraget", "json"))


def _download(stem: str, ext: str) -> dict[str, str]:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem) or "experiment"
    return {
        "Content-Disposition": f'attachment; filename="{safe}.{ext}"; '
        f"filename*=UTF-8''{quote(stem)}.{ext}"
    }
