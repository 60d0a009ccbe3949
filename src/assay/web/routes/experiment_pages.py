"""The experiment pages: the list with the form that creates one, an experiment with its
comparison and plots, and one task across the pipelines."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from assay.corpus.chunkings import list_chunkings
from assay.experiments import DEFAULT_METRICS, list_experiments
from assay.experiments.catalogue import CATALOGUE
from assay.experiments.judge_agreement import judge_agreement
from assay.experiments.tasks import TURN_SELECTIONS
from assay.gold.project_config import generator_settings, retriever_settings
from assay.gold.taxonomy import query_types
from assay.llm.response_cache import cache_summary
from assay.metrics import METRICS
from assay.records import STATUSES, Project
from assay.review.versions import list_versions
from assay.store.workspace import Workspace
from assay.web import experiments_view as view
from assay.web.bounds import PageNumber
from assay.web.experiment_jobs import progress_json, summary
from assay.web.experiment_stages import stage_options
from assay.web.experiment_task import drill_down
from assay.web.render import language, open_project, render

router = APIRouter()
MODES = ("retrieval", "generation", "rag")


def form_options(request: Request, ws: Workspace, project: Project) -> dict[str, Any]:
    retriever = retriever_settings(project)
    generator = generator_settings(project)
    lang = language(request)
    return {
        "modes": list(MODES),
        "default_metrics": {mode: list(names) for mode, names in DEFAULT_METRICS.items()},
        "metric_kinds": metric_kinds(),
        "statuses": list(STATUSES),
        "turns": list(TURN_SELECTIONS),
        "chunkings": [c.name for c in list_chunkings(ws, project)],
        "versions": [v.name for v in list_versions(ws, project)],
        "embedder": retriever.embedder,
        "generator": {"kind": generator.kind, "model": generator.model},
        **stage_options(project),
        "query_types": [
            {"id": q.id, "label": q.label.get(lang) or q.id} for q in query_types(project)
        ],
        "api": f"/api/projects/{quote(project.name)}/experiments",
        "files_api": f"/api/projects/{quote(project.name)}/experiment-files",
    }


def metric_kinds() -> list[dict[str, Any]]:
    """The metrics registry by family, then the LLM metric catalogue, for the form."""
    kinds: dict[str, list[dict[str, Any]]] = {}
    for spec in METRICS.values():
        kinds.setdefault(spec.kind, []).append(
            {"name": spec.name, "cutoff": spec.cutoff, "higher_is_better": spec.higher_is_better}
        )
    for name, entry in CATALOGUE.items():  # the LLM metrics: answers, or passages only
        kind = "llm_answer" if "answer" in entry.needs else "llm_context"
        kinds.setdefault(kind, []).append(
            {"name": name, "cutoff": "none", "higher_is_better": True, "calls": entry.calls}
        )
    return [{"kind": kind, "metrics": metrics} for kind, metrics in kinds.items()]


@router.get("/projects/{name}/experiments", response_class=HTMLResponse, include_in_schema=False)
def experiments_page(request: Request, name: str) -> HTMLResponse:
    ws, project = open_project(request, name)
    return render(
        request,
        "experiments.html",
        project=project,
        section="experiments",
        experiments=[summary(request, e) for e in list_experiments(ws, project)],
        options=form_options(request, ws, project),
        llm_cache=cache_summary(ws.engine, project.id),
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
    ws, project = open_project(request, name)
    chosen = view.load_comparison(ws, project, ref, compare)
    cols = view.columns(chosen)
    main = chosen[0]
    total, rows = view.task_rows(ws, project, main, (page - 1) * view.PAGE_SIZE, view.PAGE_SIZE)
    return render(
        request,
        "experiment.html",
        project=project,
        section="experiments",
        experiment=main,
        progress=progress_json(request, main),
        compared=chosen[1:],
        others=[e for e in list_experiments(ws, project) if e.id != main.id],
        columns=cols,
        metrics=view.metric_union(chosen),
        plots=view.plots(ws, project, chosen, cols),
        tasks=rows,
        total_tasks=total,
        page=page,
        pages=max(1, -(-total // view.PAGE_SIZE)),
        compare_refs=[str(e.id) for e in chosen[1:]],
        task_counts=view.task_counts(ws, main),
        judge_agreement=judge_agreement(ws, project, main.id, experiment=main),
    )


@router.get(
    "/projects/{name}/experiments/{ref}/tasks/{task_id}",
    response_class=HTMLResponse,
    include_in_schema=False,
)
def task_page(request: Request, name: str, ref: str, task_id: str) -> HTMLResponse:
    ws, project = open_project(request, name)
    return render(
        request,
        "experiment_task.html",
        project=project,
        section="experiments",
        data=drill_down(ws, project, ref, task_id),
    )
