"""Evaluations into and out of experiments: the only place they meet the store.

On import, a Bundle's :class:`~assay.formats.EvaluationRecord` (InspectorRAGet's models,
metrics and results) becomes an experiment of imported systems over the items just imported
(:func:`store_evaluation`). On export, :func:`experiment_to_inspectorraget` builds the Bundle
of an experiment, evaluation included, and the format only writes it: an imported experiment
gives back the file it came from; one run in Assay gives its pipelines as models and every
gold and retrieved chunk as a document.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from assay.annotation import get_item
from assay.chunkings import get_chunking
from assay.documents import get_document
from assay.errors import NotFound
from assay.experiments import Experiment, get_experiment, iter_results
from assay.experiments.imported import IMPORTED, free_name, is_imported, store_imported_experiment
from assay.experiments.store import experiment_tasks_of
from assay.experiments.tasks import ChunkMap, Task, tasks_from_item
from assay.formats import (
    Bundle,
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
from assay.formats.inspectorraget_write import as_json, build, scores_json
from assay.models import Project
from assay.transfer.exporting import export_bundle
from assay.transfer.report import ImportReport
from assay.workspace import Workspace

# ---------------------------------------------------------------- import


def store_evaluation(
    ws: Workspace,
    conn: sa.Connection,
    project: Project,
    evaluation: EvaluationRecord,
    *,
    documents: Mapping[str, str],
    items: Mapping[str, tuple[str, str]],
    report: ImportReport,
    author: str,
) -> int:
    """Store the evaluation as an experiment; returns its id. ``documents`` maps Bundle
    document refs to stored document ids, ``items`` Bundle item ids to ``(id now, id at
    the end of the import)``; results of tasks whose item was not imported are reported."""
    try:
        chunk_map = ChunkMap(ws, get_chunking(ws, project, None))
    except NotFound:
        chunk_map = ChunkMap(ws, None)
    tasks: list[Task] = []
    for entry in evaluation.tasks:
        ids = items.get(entry.item_ref)
        if ids is None:
            continue
        made = tasks_from_item(get_item(ws, project, ids[0]), chunk_map, "last")
        tasks += [dataclasses.replace(t, task_id=entry.task_id, item_id=ids[1]) for t in made]
    kept = {t.task_id for t in tasks}
    definitions = {m.name: m for m in evaluation.metrics}
    rows = []
    for result in evaluation.results:
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
                },
            }
        )
    name = free_name(conn, project, (evaluation.name or "imported evaluation")[:200])
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
        conn,
        project,
        name=name,
        mode="rag",
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


def experiment_to_inspectorraget(ws: Workspace, project: Project, ref: int | str) -> dict[str, Any]:
    """An experiment as a version 2 InspectorRAGet file."""
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    if is_imported(experiment.selection):
        return as_json(evaluation_bundle(ws, project, experiment))
    return _run_in_assay(ws, project, experiment)


def evaluation_bundle(ws: Workspace, project: Project, experiment: Experiment) -> Bundle:
    """An imported experiment as a Bundle: its items, the project's documents and the
    evaluation rebuilt from what was stored."""
    imported: Mapping[str, Any] = experiment.selection[IMPORTED]
    tasks = experiment_tasks_of(ws, experiment.id)
    full = export_bundle(ws, project, statuses=None)
    wanted = {t.item_id for t in tasks}
    evaluation = EvaluationRecord(
        name=str(imported.get("name") or ""),
        models=[ModelRecord(**m) for m in imported.get("models") or []],
        metrics=[MetricDefinition(**m) for m in imported.get("metrics") or []],
        filters=imported.get("filters"),
        documents=[EvaluationDocument(**d) for d in imported.get("documents") or []],
        tasks=[EvaluationTask(t.task_id, t.item_id) for t in tasks],
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
            for r in iter_results(ws, project, experiment.id)
        ],
        extra=dict(imported.get("extra") or {}),
    )
    return Bundle(
        project=full.project,
        documents=full.documents,
        items=[i for i in full.items if i.id in wanted],
        provenance=full.provenance,
        evaluations=[evaluation],
    )


def _run_in_assay(ws: Workspace, project: Project, experiment: Experiment) -> dict[str, Any]:
    """An experiment run in Assay: pipelines are models, every gold and retrieved chunk is a
    document."""

    tasks = experiment_tasks_of(ws, experiment.id)
    results = list(iter_results(ws, project, experiment.id))
    texts: dict[str, str] = {}
    passages: dict[str, str] = {}

    def text_of(doc_id: str | None, start: Any, end: Any) -> str:
        if not doc_id or not isinstance(start, int) or not isinstance(end, int):
            return ""
        if doc_id not in texts:
            try:
                texts[doc_id] = get_document(ws, project, doc_id).text
            except NotFound:
                texts[doc_id] = ""
        return texts[doc_id][start:end]

    task_rows = []
    for task in tasks:
        gold = [c for e in task.relevant for c in e.chunk_ids]
        for e in task.relevant:
            for chunk_id in e.chunk_ids:
                passages.setdefault(chunk_id, e.text)
        messages = [{"role": m["role"], "content": m["content"]} for m in task.history]
        messages.append({"role": "user", "content": task.turns[-1] if task.turns else ""})
        task_rows.append(
            {
                "task_id": task.task_id,
                "query_type": task.query_type,
                "messages": messages,
                "gold": gold,
                "references": task.references,
            }
        )
    result_rows = []
    for result in results:
        for hit in result.retrieved:
            chunk_id = str(hit.get("chunk_id") or "")
            if chunk_id and chunk_id not in passages:
                passages[chunk_id] = text_of(hit.get("doc_id"), hit.get("start"), hit.get("end"))
        result_rows.append(
            {
                "task_id": result.task_id,
                "pipeline": result.pipeline,
                "answer": result.answer,
                "retrieved": [h.get("chunk_id") for h in result.retrieved if h.get("chunk_id")],
                "metrics": result.metrics,
                "error": result.error,
            }
        )
    return build(
        experiment.name,
        experiment.pipelines,
        experiment.metrics,
        task_rows,
        result_rows,
        passages,
        owner=experiment.author or "assay",
    )
