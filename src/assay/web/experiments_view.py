"""What the experiment page shows: comparison columns, plot data and a page of tasks.

Kept apart from the routes so the routes stay thin; background runs are in
``web.experiment_jobs``, one task's drill-down in ``web.experiment_task``, the downloads in
``web.experiment_downloads``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.experiments import Experiment, get_experiment, iter_results
from assay.experiments.store import experiment_tasks_of
from assay.records import Project
from assay.store.workspace import Workspace

PAGE_SIZE = 50
"""Tasks on a page of the experiment page (and by default in the JSON)."""


@dataclass(frozen=True, slots=True)
class Column:
    """One pipeline of one experiment: a column of the comparison."""

    experiment: Experiment
    pipeline: str
    label: str
    summary: dict[str, Any]


def columns(experiments: Sequence[Experiment]) -> list[Column]:
    several = len(experiments) > 1
    return [
        Column(
            e,
            str(p["name"]),
            f"{e.name} / {p['name']}" if several else str(p["name"]),
            e.aggregates.get(str(p["name"]), {}),
        )
        for e in experiments
        for p in e.pipelines
    ]


def load_comparison(
    ws: Workspace, project: Project, ref: str, others: Sequence[str]
) -> list[Experiment]:
    """The experiment and the others to put beside it (each once)."""
    main = get_experiment(ws, project, ref)
    chosen = [main]
    for other in others:
        if not other.strip():
            continue
        found = get_experiment(ws, project, other.strip())
        if all(found.id != e.id for e in chosen):
            chosen.append(found)
    return chosen


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def per_task_values(
    ws: Workspace, project: Project, experiment: Experiment
) -> dict[str, dict[str, list[float]]]:
    """``{pipeline: {metric: [values]}}`` over the experiment's successful results."""
    values: dict[str, dict[str, list[float]]] = {
        str(p["name"]): {m: [] for m in experiment.metric_names} for p in experiment.pipelines
    }
    for result in iter_results(ws, project, experiment.id):
        if result.error is not None:
            continue
        bucket = values.setdefault(result.pipeline, {m: [] for m in experiment.metric_names})
        for metric in experiment.metric_names:
            number = _number(result.metrics.get(metric))
            if number is not None:
                bucket.setdefault(metric, []).append(number)
    return values


def histogram(values: Sequence[float], bins: int = 10) -> dict[str, Any]:
    """Counts in ``bins`` equal bins; metrics in [0, 1] share that fixed range so columns
    can be compared by eye. Also the five numbers of a box plot."""
    if not values:
        return {"lo": 0.0, "hi": 1.0, "counts": [0] * bins, "peak": 0, "box": None, "n": 0}
    lo, hi = min(values), max(values)
    if lo >= 0.0 and hi <= 1.0:
        lo, hi = 0.0, 1.0
    elif hi == lo:
        hi = lo + 1.0
    counts = [0] * bins
    for value in values:
        index = min(bins - 1, int((value - lo) / (hi - lo) * bins))
        counts[index] += 1
    ordered = sorted(values)

    def quantile(q: float) -> float:
        position = q * (len(ordered) - 1)
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    box = [ordered[0], quantile(0.25), quantile(0.5), quantile(0.75), ordered[-1]]
    return {"lo": lo, "hi": hi, "counts": counts, "peak": max(counts), "box": box, "n": len(values)}


def plots(
    ws: Workspace, project: Project, experiments: Sequence[Experiment], cols: Sequence[Column]
) -> dict[str, Any]:
    """Plot data: a histogram per metric and column, and means per query type."""
    values = {e.id: per_task_values(ws, project, e) for e in experiments}
    # labels (a judge's yes/no) have no histogram: their counts are in the table
    metrics = [
        m
        for m in metric_union(experiments)
        if any(pipeline.get(m) for per in values.values() for pipeline in per.values())
    ]
    distributions = {
        metric: [
            {
                "label": c.label,
                **histogram(values[c.experiment.id].get(c.pipeline, {}).get(metric, [])),
            }
            for c in cols
        ]
        for metric in metrics
    }
    types = sorted({t for c in cols for t in c.summary.get("by_query_type", {})})
    by_type: dict[str, list[dict[str, Any]]] = {}
    for metric in metrics:
        groups = []
        for query_type in types:
            bars = []
            for c in cols:
                part = c.summary.get("by_query_type", {}).get(query_type, {}).get(metric, {})
                bars.append({"label": c.label, "mean": part.get("mean")})
            groups.append({"query_type": query_type, "bars": bars})
        by_type[metric] = groups
    return {"metrics": metrics, "distributions": distributions, "by_query_type": by_type}


def metric_union(experiments: Sequence[Experiment]) -> list[str]:
    names: list[str] = []
    for experiment in experiments:
        names.extend(m for m in experiment.metric_names if m not in names)
    return names


def task_rows(
    ws: Workspace, project: Project, experiment: Experiment, offset: int, limit: int
) -> tuple[int, list[dict[str, Any]]]:
    """One page of tasks with each pipeline's metrics (or error)."""
    tasks = experiment_tasks_of(ws, experiment.id)
    page = tasks[offset : offset + limit]
    wanted = {t.task_id for t in page}
    results: dict[str, dict[str, Any]] = {t.task_id: {} for t in page}
    for result in iter_results(ws, project, experiment.id):
        if result.task_id in wanted:
            results[result.task_id][result.pipeline] = (
                {"error": result.error} if result.error else result.metrics
            )
    rows = [
        {
            "task_id": t.task_id,
            "item_id": t.item_id,
            "query": t.query(),
            "query_type": t.query_type,
            "unanswerable": t.unanswerable,
            "results": results[t.task_id],
        }
        for t in page
    ]
    return len(tasks), rows


def task_counts(ws: Workspace, experiment: Experiment) -> dict[str, int]:
    """How many tasks some metrics skip: unanswerable ones (retrieval metrics) and those
    without a reference answer (answer metrics); the page says so beside the means."""
    tasks = experiment_tasks_of(ws, experiment.id)
    return {
        "tasks": len(tasks),
        "unanswerable": sum(1 for t in tasks if t.unanswerable),
        "no_reference": sum(1 for t in tasks if not t.references),
    }
