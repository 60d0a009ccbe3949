"""An experiment's results for download: flat records (JSON) and CSV rows that no
spreadsheet runs as formulas."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from assay.experiments import Experiment, iter_results
from assay.experiments.store import experiment_tasks_of
from assay.records import Project
from assay.store.workspace import Workspace

RESULT_FIELDS = (
    "experiment",
    "pipeline",
    "task_id",
    "query_id",
    "item_id",
    "query_type",
    "error",
)
"""``query_id`` is the id qrels and runs Assay writes give the question (docs/formats.md)."""


def results_rows(
    ws: Workspace, project: Project, experiment: Experiment
) -> Iterator[dict[str, Any]]:
    """Every result as a flat record (tasks joined in for item id and query type)."""
    tasks = {t.task_id: t for t in experiment_tasks_of(ws, experiment.id)}
    for result in iter_results(ws, project, experiment.id):
        task = tasks.get(result.task_id)
        yield {
            "experiment": experiment.name,
            "pipeline": result.pipeline,
            "task_id": result.task_id,
            "query_id": task.query_id if task else result.task_id,
            "item_id": task.item_id if task else "",
            "query_type": task.query_type if task else "",
            "query": task.query() if task else "",
            "answer": result.answer,
            "retrieved": [r.get("chunk_id") for r in result.retrieved],
            "metrics": result.metrics,
            "timings": result.timings,
            "error": result.error,
        }


def _cell(value: Any) -> str:
    """A CSV cell that no spreadsheet runs as a formula."""
    if isinstance(value, int | float):
        return str(value)
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def results_csv(ws: Workspace, project: Project, experiment: Experiment) -> Iterator[str]:
    """The results as CSV, one row per task and pipeline, one column per metric."""
    metrics = experiment.metric_names
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([*RESULT_FIELDS, "query", "answer", "retrieved", *metrics])
    yield buffer.getvalue()
    for row in results_rows(ws, project, experiment):
        buffer.seek(0)
        buffer.truncate()
        cells = [row[f] for f in RESULT_FIELDS]
        cells += [row["query"], row["answer"], " ".join(str(c) for c in row["retrieved"])]
        cells += [_metric_cell(row["metrics"].get(m)) for m in metrics]
        writer.writerow([_cell(c) for c in cells])
        yield buffer.getvalue()


def _metric_cell(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, dict | list) else value
