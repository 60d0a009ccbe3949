"""Experiments whose results were produced elsewhere and imported (InspectorRAGet files).

Such an experiment is stored like one run in Assay, so the compare page, aggregates and
drill-down show it alike: its systems are pipelines of kind ``imported`` (nothing to run),
its tasks are frozen snapshots of the imported items, and each result row holds the answer,
a value per metric (what aggregates use) and, in ``details``, every annotator's score with
its timestamp and duration plus the fields of the file Assay has no column for. What the
file says about its models, metrics, filters and documents is kept in the experiment's
``selection`` under ``imported``, so the file can be written back as it came.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.experiments.store import insert_experiment
from assay.experiments.tasks import Task
from assay.records import Project
from assay.store.db import utcnow
from assay.store.schema import experiment_results, experiments

IMPORTED = "imported"
"""The pipeline kind of a system whose results came in a file."""


def is_imported(selection: Mapping[str, Any]) -> bool:
    return isinstance(selection.get(IMPORTED), Mapping)


def refuse_run(name: str, selection: Mapping[str, Any]) -> None:
    """Imported results have no pipeline to run: asking to run them is an error."""
    if is_imported(selection):
        raise InvalidInput(
            f"experiment {name!r} holds results imported from a file; nothing to run"
        )


def free_name(project: Project, wanted: str, *, conn: sa.Connection) -> str:
    """``wanted``, or ``wanted (2)``, ``(3)``… when the project has an experiment so named."""
    taken = set(
        conn.scalars(sa.select(experiments.c.name).where(experiments.c.project_id == project.id))
    )
    name, number = wanted, 1
    while name in taken:
        number += 1
        name = f"{wanted[:190]} ({number})"
    return name


def store_imported_experiment(
    project: Project,
    *,
    conn: sa.Connection,
    name: str,
    mode: str,
    chunking: str,
    systems: Sequence[str],
    metrics: Sequence[str],
    imported: Mapping[str, Any],
    tasks: Sequence[Task],
    results: Sequence[Mapping[str, Any]],
    author: int,
) -> int:
    """Write a finished experiment with its tasks and results in the caller's transaction
    (``conn``: the import's, so items and experiment come in or stay out together); returns
    its id.

    ``results`` rows hold ``pipeline``, ``task_id``, ``answer``, ``metrics`` and ``details``.
    """
    now = utcnow()
    experiment_id = insert_experiment(
        conn,
        project,
        name,
        mode=mode,
        selection={
            "statuses": "all",
            "turns": "last",
            "chunking": chunking,
            IMPORTED: dict(imported),
        },
        pipelines=[{"name": s, "kind": IMPORTED} for s in systems],
        metrics=list(metrics),
        tasks=tasks,
        author=author,
        at=now,
        done=len(results),
    )
    if results:
        conn.execute(
            experiment_results.insert(),
            [
                {
                    "experiment_id": experiment_id,
                    "pipeline": row["pipeline"],
                    "task_id": row["task_id"],
                    "retrieved": [],
                    "answer": row["answer"],
                    "contexts": [],
                    "timings": {},
                    "metrics": row["metrics"],
                    "details": row["details"],
                    "error": None,
                    "created_at": now,
                }
                for row in results
            ],
        )
    return int(experiment_id)


def annotator_scores(details: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each person's value of each metric, with when and how long (imported results keep
    ``{metric: {annotator: {value, timestamp?, duration?}}}``; ``system`` is no person)."""
    rows = []
    for metric, annotators in (details.get("scores") or {}).items():
        for annotator, entry in (annotators or {}).items():
            if annotator == "system" or not isinstance(entry, Mapping):
                continue
            stamp = entry.get("timestamp")
            when = (
                datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M:%S")
                if isinstance(stamp, int | float) and math.isfinite(stamp)
                else ""
            )
            rows.append(
                {
                    "metric": metric,
                    "annotator": annotator,
                    "value": entry.get("value"),
                    "timestamp": stamp,
                    "when": when,
                    "duration": entry.get("duration"),
                }
            )
    return rows
