"""Writing results of a run: a batch of units per transaction, in any order.

A result is keyed by (experiment, pipeline, task): writing one replaces the stored one of
that key (only failed results are run again), so batches may arrive in any order and from
any worker. The experiment's counts move with each batch, so pages watch the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from assay.experiments.scoring import Outcome
from assay.experiments.tasks import Task
from assay.store.db import utcnow
from assay.store.schema import experiment_results, experiments


@dataclass(frozen=True, slots=True)
class Scored:
    task: Task
    pipeline: str
    outcome: Outcome
    metrics: dict[str, Any]
    details: dict[str, Any]

    @property
    def stored_details(self) -> dict[str, Any]:
        """The outcome's details (usage of the stages) with the scoring's (judges)."""
        return {**self.outcome.details, **self.details}


def _stored_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A retrieved entry as stored: a passage placed in a document without its text (the
    document holds it), one outside the corpus (no offsets) with it, as its only copy."""
    if entry.get("start") is None:
        return dict(entry)
    return {k: v for k, v in entry.items() if k != "text"}


def _row(experiment_id: int, scored: Scored, at: Any) -> dict[str, Any]:
    outcome = scored.outcome
    return {
        "experiment_id": experiment_id,
        "pipeline": scored.pipeline,
        "task_id": scored.task.task_id,
        "retrieved": [_stored_entry(e) for e in outcome.retrieved],
        "answer": outcome.answer,
        "contexts": list(outcome.contexts),
        "timings": outcome.timings,
        "metrics": scored.metrics,
        "details": scored.stored_details,
        "error": outcome.error,
        "created_at": at,
    }


def write_results(conn: sa.Connection, experiment_id: int, batch: Sequence[Scored]) -> None:
    """Store a batch of results (replacing stored ones of the same keys) and move the
    experiment's done and error counts by what changed."""
    if not batch:
        return
    results = experiment_results.c
    by_pipeline: dict[str, list[str]] = {}
    for scored in batch:
        by_pipeline.setdefault(scored.pipeline, []).append(scored.task.task_id)
    replaced_good = replaced_failed = 0
    for pipeline, task_ids in by_pipeline.items():
        key = (
            (results.experiment_id == experiment_id)
            & (results.pipeline == pipeline)
            & results.task_id.in_(task_ids)
        )
        for failed in conn.scalars(sa.select(results.error.is_not(None)).where(key)):
            if failed:
                replaced_failed += 1
            else:
                replaced_good += 1
        conn.execute(experiment_results.delete().where(key))
    at = utcnow()
    conn.execute(experiment_results.insert(), [_row(experiment_id, s, at) for s in batch])
    failed_now = sum(1 for s in batch if s.outcome.error)
    conn.execute(
        experiments.update()
        .where(experiments.c.id == experiment_id)
        .values(
            done_count=experiments.c.done_count + (len(batch) - failed_now) - replaced_good,
            error_count=experiments.c.error_count + failed_now - replaced_failed,
            updated_at=at,
        )
    )
