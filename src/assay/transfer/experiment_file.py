"""An experiment as an InspectorRAGet file (version 2).

An imported experiment gives back the file it came from: the transfer layer builds its
Bundle (the items of its tasks, the project's documents, the evaluation rebuilt from the
store) and the format writes it. An experiment run in Assay gives its pipelines as models
and every gold and retrieved chunk as a document (a passage the system returned from outside
the corpus too, with its own text).
"""

from __future__ import annotations

from typing import Any

from assay.corpus.documents import get_document
from assay.errors import NotFound
from assay.experiments import Experiment, get_experiment, iter_results
from assay.experiments.imported import is_imported
from assay.experiments.store import experiment_tasks_of
from assay.formats.inspectorraget_write import as_json, build
from assay.records import Project
from assay.store.workspace import Workspace
from assay.transfer.evaluations import evaluation_record
from assay.transfer.exporting import export_bundle


def experiment_to_inspectorraget(ws: Workspace, project: Project, ref: int | str) -> dict[str, Any]:
    """An experiment as a version 2 InspectorRAGet file."""
    experiment = get_experiment(ws, project, ref, with_aggregates=False)
    if not is_imported(experiment.selection):
        return _run_in_assay(ws, project, experiment)
    bundle = export_bundle(ws, project, statuses=None)
    bundle.evaluations = [evaluation_record(ws, project, experiment)]
    return as_json(bundle)


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
        retrieved = []
        for hit in result.retrieved:
            chunk_id = str(hit.get("chunk_id") or "")
            if not chunk_id and hit.get("start") is None and hit.get("text"):
                # outside the corpus: the id the system gave it (else its place), its own text
                place = f"outside:{result.pipeline}:{result.task_id}:{hit.get('rank')}"
                chunk_id = str(hit.get("doc_id") or place)
                passages.setdefault(chunk_id, str(hit["text"]))
            if chunk_id and chunk_id not in passages:
                passages[chunk_id] = text_of(hit.get("doc_id"), hit.get("start"), hit.get("end"))
            if chunk_id:
                retrieved.append(chunk_id)
        result_rows.append(
            {
                "task_id": result.task_id,
                "pipeline": result.pipeline,
                "answer": result.answer,
                "retrieved": retrieved,
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
