"""Two experiments side by side: where one system differs from the other, biggest first.

Each side is one pipeline of one experiment (the first unless named; B of the same experiment
as A, with no pipeline named, is the pipeline after A's, so a pipeline is never compared with
itself by default). The comparison holds,
for every metric both sides measured: the two means, how many tasks each mean is over, and
the difference ``b - a``; the same per query type; and, for one metric, every task both
sides scored with its two values. Each list is sorted by the size of the difference, largest
first (rows without a difference last). A positive difference means B is higher, which is
better unless the metric says lower is better (``better`` names the side that is ahead).
Judge metrics, whose values are labels, have no mean unless their labels are numbers.

Each metric row also holds ``test``: a paired significance test of B against A over the
tasks both sides scored with a number (:mod:`assay.metrics.significance`: the randomisation
test with a fixed seed and number of rounds, and the paired t-test), so a small difference
over few tasks is not read as a win.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from assay.errors import InvalidInput
from assay.experiments.results import iter_results
from assay.experiments.store import Experiment, experiment_tasks_of, get_experiment
from assay.metrics import METRICS
from assay.metrics.significance import ALPHA, ROUNDS, SEED, paired_test
from assay.records import Project
from assay.store.workspace import Workspace

TASK_ROWS = 100
"""Tasks listed at most (the largest differences)."""


@dataclass(frozen=True, slots=True)
class Side:
    experiment: Experiment
    pipeline: str

    def summary(self) -> dict[str, Any]:
        return dict(self.experiment.aggregates.get(self.pipeline) or {})

    def to_json(self) -> dict[str, Any]:
        part = self.summary()
        return {
            "experiment": self.experiment.id,
            "name": self.experiment.name,
            "mode": self.experiment.mode,
            "status": self.experiment.status,
            "pipeline": self.pipeline,
            "pipelines": [str(p["name"]) for p in self.experiment.pipelines],
            "scored_tasks": int(part.get("tasks", 0)),
            "errors": int(part.get("errors", 0)),
        }


def higher_is_better(metric: str) -> bool:
    spec = METRICS.get(metric.partition("@")[0])
    return spec.higher_is_better if spec is not None else True


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    try:
        number = float(str(value))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _row(metric: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    mean_a, mean_b = _number(a.get("mean")), _number(b.get("mean"))
    diff = None if mean_a is None or mean_b is None else mean_b - mean_a
    return {
        "metric": metric,
        "a": mean_a,
        "b": mean_b,
        "a_n": int(a.get("count", 0)),
        "b_n": int(b.get("count", 0)),
        "diff": diff,
        "better": _better(metric, diff),
    }


def _better(metric: str, diff: float | None) -> str | None:
    if diff is None or diff == 0:
        return None
    return "b" if (diff > 0) == higher_is_better(metric) else "a"


def _by_size(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Largest absolute difference first; rows without one last, in their order."""
    listed = list(rows)
    return sorted(listed, key=lambda r: (r["diff"] is None, -abs(r["diff"] or 0.0)))


def side(ws: Workspace, project: Project, ref: int | str, pipeline: str | None) -> Side:
    experiment = get_experiment(ws, project, ref)
    names = [str(p["name"]) for p in experiment.pipelines]
    chosen = pipeline or (names[0] if names else "")
    if chosen not in names:
        raise InvalidInput(
            f"experiment {experiment.name!r} has no pipeline {chosen!r}; "
            f"its pipelines: {', '.join(names)}"
        )
    return Side(experiment, chosen)


def _next_pipeline(a: Side) -> str:
    """The pipeline after A's in its experiment (A's own when it has only one)."""
    names = [str(p["name"]) for p in a.experiment.pipelines]
    return names[(names.index(a.pipeline) + 1) % len(names)]


def shared_metrics(a: Side, b: Side) -> list[str]:
    theirs = set(b.experiment.metric_names)
    return [m for m in a.experiment.metric_names if m in theirs]


def _paired_tests(
    ws: Workspace, project: Project, a: Side, b: Side, rows: list[dict[str, Any]]
) -> None:
    """Add ``test`` to each metric row: B against A over the tasks both scored."""
    scored = [
        {
            r.task_id: r.metrics
            for r in iter_results(ws, project, s.experiment.id, s.pipeline)
            if r.error is None
        }
        for s in (a, b)
    ]
    shared = [t for t in scored[0] if t in scored[1]]
    for row in rows:
        first: list[float] = []
        second: list[float] = []
        for task_id in shared:
            x = _number(scored[0][task_id].get(row["metric"]))
            y = _number(scored[1][task_id].get(row["metric"]))
            if x is not None and y is not None:
                first.append(x)
                second.append(y)
        row["test"] = paired_test(first, second).to_json()


def task_values(ws: Workspace, project: Project, one: Side, metric: str) -> dict[str, Any]:
    """``{task_id: value}`` of one side's results without an error."""
    return {
        r.task_id: r.metrics.get(metric)
        for r in iter_results(ws, project, one.experiment.id, one.pipeline)
        if r.error is None
    }


def compare_experiments(
    ws: Workspace,
    project: Project,
    a_ref: int | str,
    b_ref: int | str,
    *,
    pipeline_a: str | None = None,
    pipeline_b: str | None = None,
    metric: str | None = None,
    limit: int = TASK_ROWS,
) -> dict[str, Any]:
    """The comparison of two experiments (see the module docstring) as plain JSON."""
    a, b = side(ws, project, a_ref, pipeline_a), side(ws, project, b_ref, pipeline_b)
    if not pipeline_b and b.experiment.id == a.experiment.id:
        b = Side(b.experiment, _next_pipeline(a))
    metrics = shared_metrics(a, b)
    overall_a, overall_b = a.summary().get("overall", {}), b.summary().get("overall", {})
    rows = _by_size(_row(m, overall_a.get(m, {}), overall_b.get(m, {})) for m in metrics)
    types_a, types_b = a.summary().get("by_query_type", {}), b.summary().get("by_query_type", {})
    by_type = _by_size(
        {"query_type": query_type, **_row(m, types_a.get(query_type, {}).get(m, {}), part)}
        for query_type, parts in types_b.items()
        if query_type in types_a
        for m, part in parts.items()
        if m in metrics
    )
    _paired_tests(ws, project, a, b, rows)
    numeric = [r["metric"] for r in rows if r["diff"] is not None]
    chosen = metric or (numeric[0] if numeric else (metrics[0] if metrics else None))
    if chosen is not None and chosen not in metrics:
        raise InvalidInput(
            f"metric {chosen!r} is not measured by both experiments; shared: "
            f"{', '.join(metrics) or '(none)'}"
        )
    return {
        "a": a.to_json(),
        "b": b.to_json(),
        "metrics": rows,
        "significance": {
            "alpha": ALPHA,
            "rounds": ROUNDS,
            "seed": SEED,
            "decided_by": "p_randomisation",
        },
        "only_a": [m for m in a.experiment.metric_names if m not in metrics],
        "only_b": [m for m in b.experiment.metric_names if m not in metrics],
        "by_query_type": by_type,
        "tasks": _tasks(ws, project, a, b, chosen, limit),
    }


def _tasks(
    ws: Workspace, project: Project, a: Side, b: Side, metric: str | None, limit: int
) -> dict[str, Any]:
    if metric is None:
        return {"metric": None, "shared": 0, "only_a": 0, "only_b": 0, "rows": []}
    values_a = task_values(ws, project, a, metric)
    values_b = task_values(ws, project, b, metric)
    tasks = {t.task_id: t for t in experiment_tasks_of(ws, a.experiment.id)}
    shared = [t for t in tasks if t in values_b and t in values_a]
    rows = []
    for task_id in shared:
        first, second = _number(values_a[task_id]), _number(values_b[task_id])
        diff = None if first is None or second is None else second - first
        task = tasks[task_id]
        rows.append(
            {
                "task_id": task_id,
                "query": task.query(),
                "query_type": task.query_type,
                "unanswerable": task.unanswerable,
                "a": values_a[task_id],
                "b": values_b[task_id],
                "diff": diff,
                "better": _better(metric, diff),
            }
        )
    ordered = _by_size(rows)
    return {
        "metric": metric,
        "higher_is_better": higher_is_better(metric),
        "shared": len(shared),
        "differing": sum(1 for r in rows if r["diff"]),
        "only_a": len(values_a.keys() - values_b.keys()),
        "only_b": len(values_b.keys() - values_a.keys()),
        "rows": ordered[:limit],
    }
