"""Stored results of an experiment: all of them in task order (:func:`iter_results`), or one
task across pipelines, for drill-down (:func:`task_results`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from assay.errors import NotFound
from assay.experiments.store import find_experiment
from assay.experiments.tasks import Task, task_from_json
from assay.records import Project
from assay.store.db import as_utc, reading, record_from_row
from assay.store.schema import experiment_results, experiment_tasks
from assay.store.workspace import Workspace


@dataclass(frozen=True, slots=True)
class TaskResult:
    """One task through one pipeline, as stored."""

    pipeline: str
    task_id: str
    retrieved: list[dict[str, Any]]
    answer: str
    contexts: list[str]
    timings: dict[str, float]
    metrics: dict[str, Any]
    details: dict[str, Any]
    error: str | None
    created_at: datetime


def _result(row: Any) -> TaskResult:
    return record_from_row(TaskResult, row, created_at=as_utc(row.created_at))


def iter_results(
    ws: Workspace,
    project: Project,
    ref: int | str,
    pipeline: str | None = None,
    *,
    conn: sa.Connection | None = None,
) -> Iterator[TaskResult]:
    """Every stored result of an experiment (optionally of one pipeline), in task order."""
    with reading(ws.engine, conn) as conn:
        row = find_experiment(conn, project, ref)
        query = (
            sa.select(experiment_results)
            .join(
                experiment_tasks,
                sa.and_(
                    experiment_tasks.c.experiment_id == experiment_results.c.experiment_id,
                    experiment_tasks.c.task_id == experiment_results.c.task_id,
                ),
            )
            .where(experiment_results.c.experiment_id == row.id)
            .order_by(experiment_tasks.c.ordinal, experiment_results.c.pipeline)
        )
        if pipeline is not None:
            query = query.where(experiment_results.c.pipeline == pipeline)
        rows = conn.execute(query).all()
    for result in rows:
        yield _result(result)


def task_results(
    ws: Workspace,
    project: Project,
    ref: int | str,
    task_id: str,
    *,
    conn: sa.Connection | None = None,
) -> tuple[Task, dict[str, TaskResult]]:
    """One task of an experiment and its result in each pipeline that has run it."""
    with reading(ws.engine, conn) as conn:
        row = find_experiment(conn, project, ref)
        data = conn.scalar(
            sa.select(experiment_tasks.c.data).where(
                experiment_tasks.c.experiment_id == row.id, experiment_tasks.c.task_id == task_id
            )
        )
        if data is None:
            raise NotFound(f"experiment {row.name!r} has no task {task_id!r}")
        results = conn.execute(
            sa.select(experiment_results).where(
                experiment_results.c.experiment_id == row.id,
                experiment_results.c.task_id == task_id,
            )
        ).all()
    return task_from_json(data), {r.pipeline: _result(r) for r in results}
