"""InspectorRAGet files (IBM's result viewer) read into a Bundle, nothing left behind.

A file is an evaluation: documents (passages), tasks (questions with their input messages,
gold contexts and target answers), models, metrics (algorithmic or human, numerical,
categorical or text) and results (one per model and task, scores ``{metric: {annotator:
{value, timestamp?, duration?}}}``; algorithms use the annotator ``system``). Documents
become DocumentRecords named by their titles; tasks become draft items whose contexts are
evidence spanning the whole passage; models, metrics, filters and results become the Bundle's
:class:`~assay.formats.EvaluationRecord`. Fields Assay has no place for are kept in
``extra`` so the file can be written back as it came (:mod:`inspectorraget_write`).

A result naming an unknown model or task, a repeated result, or a score without a value
becomes an error :class:`~assay.formats.Issue` naming the record: a strict import refuses
the file, a lenient one leaves the record out and reports it. What InspectorRAGet itself
loads is kept as read and reported as a warning: a value outside a numerical metric's
``range`` (a display hint; real BERTScores dip below -1), a value that is not among a
categorical metric's ``values``, a score for a metric the file does not declare. Version 1 files are
migrated first (:mod:`inspectorraget_v1`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.formats import (
    Bundle,
    DocumentRecord,
    EvaluationDocument,
    EvaluationRecord,
    EvaluationTask,
    Issue,
    MetricDefinition,
    ModelRecord,
    ProjectInfo,
    ResultRecord,
    ScoreRecord,
)
from assay.formats.common import FirstSeen, text_document
from assay.formats.inspectorraget_v1 import (
    SCHEMA_VERSION,
    as_message,
    is_number,
    load,
    output_text,
)
from assay.formats.inspectorraget_write import write
from assay.records import Evidence, Item, Turn

TOP_LEVEL = ("schema_version", "name", "models", "metrics", "filters", "documents", "tasks")
"""Top-level keys the Bundle holds in its own records (everything else goes to ``extra``)."""
NAME_LIMIT = 180
MODEL_ID_LIMIT = 200
"""A model is stored as a pipeline, whose name is at most this long; task ids likewise."""
TASK_ID_LIMIT = 300
__all__ = ["read", "write"]


def read(path: Path) -> Bundle:
    data = load(path)
    issues: list[Issue] = []
    documents, entries = _documents(data.get("documents") or [], issues)
    texts = {d.ref: d.text or "" for d in documents}
    items, tasks = _items(data["tasks"], texts, issues)
    models = _models(data["models"], issues)
    metrics = _metrics(data["metrics"])
    results = _results(
        data.get("results") or [], {t.task_id for t in tasks}, models, metrics, issues
    )
    evaluation = EvaluationRecord(
        name=str(data.get("name") or ""),
        models=list(models.values()),
        metrics=list(metrics.values()),
        filters=[str(f) for f in data["filters"]]
        if isinstance(data.get("filters"), list)
        else None,
        documents=entries,
        tasks=tasks,
        results=results,
        extra={k: v for k, v in data.items() if k not in (*TOP_LEVEL, "results")},
    )
    return Bundle(
        project=ProjectInfo(name=evaluation.name),
        documents=documents,
        items=items,
        provenance={"format": "inspectorraget", "schema_version": SCHEMA_VERSION},
        issues=issues,
        evaluations=[evaluation],
    )


def _documents(
    raw: list[Mapping[str, Any]], issues: list[Issue]
) -> tuple[list[DocumentRecord], list[EvaluationDocument]]:
    documents: list[DocumentRecord] = []
    entries: list[EvaluationDocument] = []
    seen = FirstSeen("field 'document_id'", issues)
    for n, entry in enumerate(raw, start=1):
        document_id = str(entry["document_id"])
        if not seen.first(document_id, f"documents[{n}]"):
            continue
        text = entry.get("text")
        text = text if isinstance(text, str) else ""
        fields = {k: v for k, v in entry.items() if k not in ("document_id", "text")}
        title = entry.get("title")
        label = title.strip() if isinstance(title, str) and title.strip() else document_id
        metadata = {"source_id": document_id, **({"title": title} if title else {})}
        documents.append(text_document(document_id, label[:NAME_LIMIT], "passage", text, metadata))
        entries.append(EvaluationDocument(document_id, document_id, fields))
    return documents, entries


def _items(
    raw: list[Mapping[str, Any]], texts: Mapping[str, str], issues: list[Issue]
) -> tuple[list[Item], list[EvaluationTask]]:
    """Tasks as draft items: the last user message is the query, targets are the answer
    and its alternatives, each context is relevant evidence spanning its whole passage."""
    items: list[Item] = []
    tasks: list[EvaluationTask] = []
    seen = FirstSeen("field 'task_id'", issues)
    for n, task in enumerate(raw, start=1):
        task_id = str(task["task_id"])
        where = f"tasks[{n}] ({task_id})"
        if len(task_id) > TASK_ID_LIMIT:
            issues.append(Issue(where, f"task_id is over {TASK_ID_LIMIT} characters"))
            continue
        if not seen.first(task_id, f"tasks[{n}]"):
            continue
        evidence: list[Evidence] = []
        for m, context in enumerate(task.get("contexts") or [], start=1):
            ref = str(context.get("document_id", ""))
            if ref not in texts:
                issues.append(
                    Issue(where, f"contexts[{m}] names document {ref!r}, which the file lacks")
                )
                break
            # the whole passage; no text, so the stored document's (normalised) text is taken
            evidence.append(Evidence(doc_id=ref, start=0, end=len(texts[ref]), origin="imported"))
        else:
            items.append(_item(task_id, task, evidence))
            tasks.append(EvaluationTask(task_id, task_id))
    return items, tasks


def _item(task_id: str, task: Mapping[str, Any], evidence: list[Evidence]) -> Item:
    raw_input = task.get("input") or []
    messages = [as_message(m) for m in ([raw_input] if isinstance(raw_input, str) else raw_input)]
    users = [m for m in messages if m.get("role") == "user"]
    targets = [
        str(t.get("value", ""))
        for t in task.get("targets") or []
        if isinstance(t, Mapping) and t.get("type", "text") == "text"
    ]
    return Item(
        id=task_id,
        kind="conversation" if len(users) > 1 else "qa",
        origin="imported",
        extra={"inspectorraget": {k: v for k, v in task.items() if k != "task_id"}},
        turns=[
            Turn(
                query=str(users[-1].get("content", "")) if users else "",
                query_type=str(task.get("query_type") or "fact_single"),
                answer=targets[0] if targets else "",
                alternatives=targets[1:],
                evidence=evidence,
            )
        ],
    )


def _models(raw: list[Mapping[str, Any]], issues: list[Issue]) -> dict[str, ModelRecord]:
    models: dict[str, ModelRecord] = {}
    seen = FirstSeen("field 'model_id'", issues)
    for n, model in enumerate(raw, start=1):
        model_id = str(model["model_id"])
        if len(model_id) > MODEL_ID_LIMIT:
            issues.append(Issue(f"models[{n}]", f"model_id is over {MODEL_ID_LIMIT} characters"))
        elif seen.first(model_id, f"models[{n}]"):
            models[model_id] = ModelRecord(
                model_id=model_id,
                name=str(model.get("name", "")),
                owner=str(model.get("owner", "")),
                extra={k: v for k, v in model.items() if k not in ("model_id", "name", "owner")},
            )
    return models


METRIC_FIELDS = ("name", "author", "type", "aggregator", "range", "values")


def _metrics(raw: list[Mapping[str, Any]]) -> dict[str, MetricDefinition]:
    return {
        str(m["name"]): MetricDefinition(
            name=str(m["name"]),
            author=str(m["author"]),
            type=str(m["type"]),
            aggregator=m.get("aggregator"),
            range=m.get("range"),
            values=m.get("values"),
            extra={k: v for k, v in m.items() if k not in METRIC_FIELDS},
        )
        for m in raw
    }


def parse_scores(raw: Mapping[str, Any]) -> dict[str, list[ScoreRecord]]:
    """``{metric: {annotator: {value, timestamp?, duration?, …}}}`` as ScoreRecords."""
    scores: dict[str, list[ScoreRecord]] = {}
    for metric, annotators in raw.items():
        scores[str(metric)] = [
            ScoreRecord(
                annotator=str(annotator),
                value=entry.get("value"),
                timestamp=entry.get("timestamp"),
                duration=entry.get("duration"),
                extra={
                    k: v for k, v in entry.items() if k not in ("value", "timestamp", "duration")
                },
            )
            for annotator, entry in (annotators or {}).items()
        ]
    return scores


def value_problem(metric: MetricDefinition, value: Any) -> str:
    """Why ``value`` is not a value of ``metric`` (empty when it is)."""
    if metric.type == "categorical":
        allowed = [v.get("value") for v in metric.values or []]
        if value in allowed or str(value) in {str(a) for a in allowed}:
            return ""
        return f"value {value!r} is not one of {', '.join(repr(a) for a in allowed)}"
    if metric.type != "numerical":
        return ""
    number = as_number(value)
    if number is None:
        return f"value {value!r} is not a number"
    bounds = metric.range or []
    ranged = len(bounds) >= 2 and is_number(bounds[0]) and is_number(bounds[1])
    if ranged and not bounds[0] <= number <= bounds[1]:
        return f"value {value!r} is outside the range {bounds[0]} to {bounds[1]}"
    return ""


def as_number(value: Any) -> float | None:
    """A number, or a string holding one (human scores often come as strings)."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    return float(value) if is_number(value) else None


def _results(
    raw: list[Mapping[str, Any]],
    tasks: set[str],
    models: Mapping[str, ModelRecord],
    metrics: Mapping[str, MetricDefinition],
    issues: list[Issue],
) -> list[ResultRecord]:
    results: list[ResultRecord] = []
    seen = FirstSeen("the pair of task_id and model_id", issues)
    for n, result in enumerate(raw, start=1):
        task_id, model_id = str(result["task_id"]), str(result["model_id"])
        where = f"results[{n}] (task {task_id!r}, model {model_id!r})"
        problems, doubts = [], []
        if task_id not in tasks:
            problems.append(f"task_id {task_id!r} is not among the tasks taken in")
        if model_id not in models:
            problems.append(f"model_id {model_id!r} is not among the models")
        raw_scores = result.get("scores") or {}
        for metric, annotators in raw_scores.items():
            if not isinstance(annotators, Mapping):
                problems.append(f"scores of {metric!r} must be an object of annotators")
                continue
            definition = metrics.get(str(metric))
            if definition is None:  # InspectorRAGet shows only declared metrics: kept
                doubts.append(f"metric {metric!r} is not among the metrics")
            for annotator, entry in annotators.items():
                if not isinstance(entry, Mapping) or "value" not in entry:
                    problems.append(f"{metric!r} by {annotator!r} needs a value")
                elif definition and (problem := value_problem(definition, entry["value"])):
                    doubts.append(f"{metric!r} by {annotator!r}: {problem}")
        if problems:
            issues.append(Issue(where, "; ".join(problems)))
            continue
        if doubts:  # InspectorRAGet loads such values (a range is a display hint): kept
            issues.append(Issue(where, "; ".join(doubts) + "; kept as read", "warning"))
        if not seen.first((task_id, model_id), f"results[{n}]"):
            continue
        output = result.get("output")
        results.append(
            ResultRecord(
                task_id=task_id,
                model_id=model_id,
                answer=output_text(output),
                output=output,
                contexts=result.get("contexts"),
                scores=parse_scores(raw_scores),
                extra={
                    k: v
                    for k, v in result.items()
                    if k not in ("task_id", "model_id", "output", "contexts", "scores")
                },
            )
        )
    return results
