"""Evaluations into and out of experiments.

On import, a Bundle's :class:`~assay.formats.EvaluationRecord` (InspectorRAGet's models,
metrics and results) becomes an experiment of imported systems over the items just imported
(:func:`store_evaluation`). On export, :func:`evaluation_record` gives it back from the stored
experiment, so the format writes the file it read (:mod:`assay.transfer.experiment_file`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from assay.corpus.chunkings import get_chunking
from assay.errors import NotFound
from assay.experiments import Experiment, TaskResult, iter_results, list_experiments
from assay.experiments.imported import IMPORTED, free_name, is_imported, store_imported_experiment
from assay.experiments.store import experiment_tasks_of
from assay.experiments.tasks import ChunkMap, Task, tasks_from_item
from assay.formats import (
    EvaluationDocument,
    EvaluationRecord,
    EvaluationTask,
    MetricDefinition,
    ModelRecord,
    ResultRecord,
    ScoreRecord,
)
from assay.formats.inspectorraget import as_number, parse_scores
from assay.formats.inspectorraget_v1 import SYSTEM
from assay.formats.inspectorraget_write import scores_json
from assay.gold.items import get_item
from assay.records import Project
from assay.store.workspace import Workspace
from assay.transfer.report import ImportReport

# ---------------------------------------------------------------- import


def store_evaluation(
    ws: Workspace,
    project: Project,
    evaluation: EvaluationRecord,
    *,
    conn: sa.Connection,
    documents: Mapping[str, str],
    items: Mapping[str, tuple[str, str]],
    report: ImportReport,
    author: int,
) -> int:
    """Store the evaluation as an experiment in the import's transaction (``conn``); returns
    its id. ``documents`` maps Bundle document refs to stored document ids, ``items`` Bundle
    item ids to ``(id now, id at the end of the import)``; results of tasks whose item was
    not imported are reported."""
    try:
        chunk_map = ChunkMap(ws, get_chunking(ws, project, None, conn=conn), conn=conn)
    except NotFound:
        chunk_map = ChunkMap(ws, None)
    tasks: list[Task] = []
    for entry in evaluation.tasks:
        ids = items.get(entry.item_ref)
        if ids is None:
            continue
        made = tasks_from_item(get_item(ws, project, ids[0], conn=conn), chunk_map, "last")
        tasks += [dataclasses.replace(t, task_id=entry.task_id, item_id=ids[1]) for t in made]
    kept = {t.task_id for t in tasks}
    definitions = {m.name: m for m in evaluation.metrics}
    rows = []
    for position, result in enumerate(evaluation.results):
        if result.task_id not in kept:
            where = f"result (task {result.task_id!r}, model {result.model_id!r})"
            report.add("result", where, "skipped", "its task was not imported")
            continue
        rows.append(
            {
                "pipeline": result.model_id,
                "task_id": result.task_id,
                "answer": result.answer,
                "metrics": {
                    metric: summary_value(definitions.get(metric), scores)
                    for metric, scores in result.scores.items()
                },
                "details": {
                    "scores": scores_json(result.scores),
                    "output": result.output,
                    "contexts": result.contexts,
                    "extra": result.extra,
                    "position": position,  # the file's order (rows are read by task)
                },
            }
        )
    name = free_name(project, (evaluation.name or "imported evaluation")[:200], conn=conn)
    imported = {
        "format": "inspectorraget",
        "name": evaluation.name,
        "models": [dataclasses.asdict(m) for m in evaluation.models],
        "metrics": [dataclasses.asdict(m) for m in evaluation.metrics],
        "filters": evaluation.filters,
        "documents": [
            {**dataclasses.asdict(d), "doc_ref": documents.get(d.doc_ref, d.doc_ref)}
            for d in evaluation.documents
        ],
        "extra": evaluation.extra,
    }
    experiment_id = store_imported_experiment(
        project,
        conn=conn,
        name=name,
        mode="rag",
        chunking=chunk_map.chunking.name if chunk_map.chunking else "",
        systems=[m.model_id for m in evaluation.models],
        metrics=[m.name for m in evaluation.metrics],
        imported=imported,
        tasks=tasks,
        results=rows,
        author=author,
    )
    message = f"{len(evaluation.models)} model(s), {len(tasks)} task(s), {len(rows)} result(s)"
    report.add("experiment", name, "imported", message, str(experiment_id))
    return experiment_id


def summary_value(metric: MetricDefinition | None, scores: Sequence[ScoreRecord]) -> Any:
    """The one value per result that aggregates use: the ``system`` annotator's, else the
    only annotator's, else the mean of the annotators' numeric values (a categorical value
    counts as its ``numeric_value``); None when they have none."""
    chosen = [s for s in scores if s.annotator == SYSTEM] or list(scores)
    if len(chosen) == 1:
        return chosen[0].value
    numbers = [_numeric(metric, s.value) for s in chosen]
    found = [n for n in numbers if n is not None]
    return sum(found) / len(found) if found and len(found) == len(numbers) else None


def _numeric(metric: MetricDefinition | None, value: Any) -> float | None:
    if metric is not None and metric.type == "categorical":
        for choice in metric.values or []:
            if str(choice.get("value")) == str(value):
                return as_number(choice.get("numeric_value"))
        return None
    return as_number(value)


# ---------------------------------------------------------------- export


def project_evaluations(ws: Workspace, project: Project) -> list[EvaluationRecord]:
    """The project's imported evaluations, newest first."""
    return [
        evaluation_record(ws, project, e)
        for e in list_experiments(ws, project)
        if is_imported(e.selection)
    ]


def evaluation_record(ws: Workspace, project: Project, experiment: Experiment) -> EvaluationRecord:
    """An imported experiment as it was read: tasks point at the items (by id)."""
    imported: Mapping[str, Any] = experiment.selection[IMPORTED]
    return EvaluationRecord(
        name=str(imported.get("name") or ""),
        models=[ModelRecord(**m) for m in imported.get("models") or []],
        metrics=[MetricDefinition(**m) for m in imported.get("metrics") or []],
        filters=imported.get("filters"),
        documents=[EvaluationDocument(**d) for d in imported.get("documents") or []],
        tasks=[
            EvaluationTask(t.task_id, t.item_id) for t in experiment_tasks_of(ws, experiment.id)
        ],
        results=[
            ResultRecord(
                task_id=r.task_id,
                model_id=r.pipeline,
                answer=r.answer,
                output=r.details.get("output"),
                contexts=r.details.get("contexts"),
                scores=parse_scores(r.details.get("scores") or {}),
                extra=dict(r.details.get("extra") or {}),
            )
            for r in sorted(iter_results(ws, project, experiment.id), key=_file_position)
        ],
        extra=dict(imported.get("extra") or {}),
    )


def _file_position(result: TaskResult) -> int:
    """Where the result stood in the file it came from (-1 for one stored without it, which
    keeps the stored order: the sort is stable)."""
    position = result.details.get("position")
    return position if isinstance(position, int) else -1
