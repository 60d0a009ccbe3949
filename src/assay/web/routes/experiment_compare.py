"""Two experiments compared (per metric, per query type, per task, differences sorted) and
an experiment's judge against people's labels: pages and their JSON twins."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from assay.experiments import Experiment, list_experiments
from assay.experiments.compare import TASK_ROWS, compare_experiments
from assay.experiments.judge_agreement import judge_agreement, parse_mapping
from assay.web.render import open_project, render

router = APIRouter()


def _comparison(
    request: Request, name: str, a: str, b: str, pa: str | None, pb: str | None, metric: str | None
) -> tuple[Any, Any, dict[str, Any]]:
    ws, project = open_project(request, name)
    data = compare_experiments(
        ws, project, a, b, pipeline_a=pa or None, pipeline_b=pb or None, metric=metric or None
    )
    data["judge_agreement"] = {
        side: judge_agreement(
            ws, project, data[side]["experiment"], pipeline=data[side]["pipeline"]
        )
        for side in ("a", "b")
    }
    return ws, project, data


@router.get("/api/projects/{name}/compare-experiments", tags=["experiments"])
def api_compare(
    request: Request,
    name: str,
    a: str = Query(description="The first experiment (id or name)."),
    b: str = Query(description="The second experiment (id or name)."),
    pa: str | None = Query(default=None, description="Pipeline of A (default: its first)."),
    pb: str | None = Query(
        default=None,
        description="Pipeline of B (default: its first; with B the same experiment as A, "
        "the pipeline after A's, never A's own).",
    ),
    metric: str | None = Query(default=None, description="Metric of the per-task list."),
) -> Any:
    """Two experiments side by side: per metric, per query type and per task (the
    ``tasks.rows`` largest differences of one metric), each sorted by the size of the
    difference ``b - a``; and each side's judge against human labels (that pipeline's)."""
    return _comparison(request, name, a, b, pa, pb, metric)[2]


@router.get("/api/projects/{name}/experiments/{ref}/judge-agreement", tags=["experiments"])
def api_judge_agreement(
    request: Request,
    name: str,
    ref: str,
    map: list[str] = Query(
        default=[], description="HUMAN=JUDGE: read a human label as the judge's label."
    ),
) -> Any:
    """The experiment's judge metrics against people's labels of the same tasks: Cohen's
    kappa, confusion matrix, precision and recall per label, disagreements."""
    ws, project = open_project(request, name)
    return judge_agreement(ws, project, ref, mapping=parse_mapping(map))


@router.get(
    "/projects/{name}/compare-experiments", response_class=HTMLResponse, include_in_schema=False
)
def compare_page(
    request: Request,
    name: str,
    a: str = "",
    b: str = "",
    pa: str | None = None,
    pb: str | None = None,
    metric: str | None = None,
) -> HTMLResponse:
    ws, project = open_project(request, name)
    experiments = list_experiments(ws, project)
    a, b = _two_different(experiments, a, b)
    data = None
    if a and b:
        data = _comparison(request, name, a, b, pa, pb, metric)[2]
    return render(
        request,
        "experiment_compare.html",
        project=project,
        section="experiments",
        experiments=experiments,
        chosen={"a": a, "b": b},
        data=data,
        task_rows=TASK_ROWS,
    )


def _two_different(experiments: list[Experiment], a: str, b: str) -> tuple[str, str]:
    """What the page compares when the address leaves a side open: two different things.
    Nothing chosen: the two newest experiments (older as A); only A: the newest other
    experiment, else A itself (``compare_experiments`` then takes A's next pipeline as B)."""
    if not a and not b and len(experiments) >= 2:
        return str(experiments[1].id), str(experiments[0].id)
    if a and not b:
        others = [e for e in experiments if a not in (str(e.id), e.name)]
        b = str(others[0].id) if others else a
    return a, b
