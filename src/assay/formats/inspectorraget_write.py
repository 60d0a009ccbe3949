"""InspectorRAGet files written (always version 2).

:func:`as_json` gives the file of a Bundle. With an evaluation it is the file that was read:
tasks come back from their items, each field rebuilt from what the item holds now (query,
answers, evidence) and, where the item still says what the file said, written exactly as the
file had it; documents, models, metrics, filters and results come from the evaluation.
Without one it is the gold items as tasks, a file to score systems against. :func:`build`
gives the file of an experiment run in Assay from plain rows (the transfer layer reads them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, DocumentRecord, ResultRecord, ScoreRecord
from assay.formats.inspectorraget_v1 import SCHEMA_VERSION, SYSTEM, output_text, validate
from assay.records import Item


def write(bundle: Bundle, path: Path, **options: Any) -> list[str]:
    """The file of the Bundle's first evaluation (the newest imported one of a project),
    else the gold items as tasks."""
    data = as_json(bundle)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    notes = [f"not valid for InspectorRAGet: {p}" for p in validate(data)]
    evaluation = next(iter(bundle.evaluations), None)
    if evaluation is None:
        notes.append("gold items only: export an experiment for models and results")
        distracting = sum(
            1
            for item in bundle.items
            for turn in item.turns
            for e in turn.evidence
            if e.label != "relevant"
        )
        if distracting:
            notes.append(
                f"{distracting} distracting or irrelevant passage(s) left out: a task's "
                "contexts are its gold passages"
            )
    else:
        held = {t.item_ref for t in evaluation.tasks}
        outside = sum(1 for i in bundle.items if i.id not in held)
        if outside:
            notes.append(f"{outside} item(s) not in the evaluation {evaluation.name!r} left out")
    return notes


def as_json(bundle: Bundle) -> dict[str, Any]:
    """The file of a Bundle (its first evaluation, when it has one)."""
    evaluation = next(iter(bundle.evaluations), None)
    if evaluation is None:
        return _gold_only(bundle)
    refs = {d.document_id: d.doc_ref for d in evaluation.documents}
    wanted = {d.doc_ref for d in evaluation.documents}
    texts = {d.ref: _file_text(d) for d in bundle.documents if d.ref in wanted}
    items = {i.id: i for i in bundle.items}
    data: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if evaluation.name:
        data["name"] = evaluation.name
    data.update(evaluation.extra)
    data["models"] = [
        {"model_id": m.model_id, "name": m.name, "owner": m.owner, **m.extra}
        for m in evaluation.models
    ]
    data["metrics"] = [
        {
            "name": m.name,
            "author": m.author,
            "type": m.type,
            **{
                k: v for k, v in (("aggregator", m.aggregator), ("range", m.range)) if v is not None
            },
            **({"values": m.values} if m.values is not None else {}),
            **m.extra,
        }
        for m in evaluation.metrics
    ]
    if evaluation.filters is not None:
        data["filters"] = evaluation.filters
    if evaluation.documents:
        data["documents"] = [
            {"document_id": d.document_id, "text": texts.get(d.doc_ref, ""), **d.fields}
            for d in evaluation.documents
        ]
    data["tasks"] = [
        task_json(items[t.item_ref], t.task_id, refs)
        for t in evaluation.tasks
        if t.item_ref in items
    ]
    written = {t["task_id"] for t in data["tasks"]}  # an item deleted since takes its results
    data["results"] = [result_json(r) for r in evaluation.results if r.task_id in written]
    return data


def _file_text(document: DocumentRecord) -> str:
    """A passage as the file had it: the stored bytes of a text document (its extracted
    text has normalised line ends), else the extracted text."""
    if document.media_type.startswith("text/plain"):
        try:
            return document.original().decode("utf-8")
        except UnicodeDecodeError:
            pass
    return document.text or ""


def task_json(item: Item, task_id: str, refs: Mapping[str, str]) -> dict[str, Any]:
    """One task from its item; ``refs`` maps the file's document ids to Bundle refs."""
    raw: dict[str, Any] = dict(item.extra.get("inspectorraget") or {"task_type": "rag"})
    turn = item.turns[-1] if item.turns else None
    query = turn.query if turn else ""
    task: dict[str, Any] = {"task_id": task_id, **raw}
    task["input"] = _input(raw.get("input"), query)
    answers = [a for a in ([turn.answer, *turn.alternatives] if turn else []) if a]
    targets = [t for t in raw.get("targets") or [] if isinstance(t, Mapping)]
    said = [str(t.get("value", "")) for t in targets if t.get("type", "text") == "text"]
    if answers != [a for a in said if a]:  # an empty target (unanswerable) stays as written
        kept = [t for t in targets if t.get("type", "text") != "text"]
        task["targets"] = kept + [{"type": "text", "value": a} for a in answers]
    doc_refs = [e.doc_id for e in (turn.evidence if turn else []) if e.label == "relevant"]
    contexts = [c for c in raw.get("contexts") or [] if isinstance(c, Mapping)]
    if [refs.get(str(c.get("document_id")), c.get("document_id")) for c in contexts] != doc_refs:
        by_ref = {v: k for k, v in reversed(list(refs.items()))}
        task["contexts"] = [{"document_id": by_ref.get(r or "", r)} for r in doc_refs]
    if turn and (turn.query_type != "fact_single" or "query_type" in raw):
        task["query_type"] = turn.query_type
    return task


def _input(raw: Any, query: str) -> Any:
    """The task's messages as the file had them, with the last user message's text
    replaced when the item's query changed."""
    if isinstance(raw, str):
        return raw if raw == query else query
    messages = [dict(m) if isinstance(m, Mapping) else m for m in raw or []]
    for message in reversed(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role", message.get("speaker"))
        if role == "user":
            key = "content" if "content" in message else "text"
            if message.get(key) != query:
                message[key] = query
            return messages
    return [*messages, {"role": "user", "content": query}]


def scores_json(scores: Mapping[str, list[ScoreRecord]]) -> dict[str, Any]:
    """ScoreRecords in the file's shape ``{metric: {annotator: {value, …}}}``."""
    out: dict[str, Any] = {}
    for metric, records in scores.items():
        out[metric] = {}
        for s in records:
            entry: dict[str, Any] = {"value": s.value}
            if s.timestamp is not None:
                entry["timestamp"] = s.timestamp
            if s.duration is not None:
                entry["duration"] = s.duration
            out[metric][s.annotator] = {**entry, **s.extra}
    return out


def result_json(result: ResultRecord) -> dict[str, Any]:
    same = result.output is not None and output_text(result.output) == result.answer
    data: dict[str, Any] = {
        "task_id": result.task_id,
        "model_id": result.model_id,
        "output": result.output if same else [{"role": "assistant", "content": result.answer}],
    }
    if result.contexts is not None:
        data["contexts"] = result.contexts
    data["scores"] = scores_json(result.scores)
    data.update(result.extra)
    return data


def _gold_only(bundle: Bundle) -> dict[str, Any]:
    """Gold items as tasks (no models, no results), one per turn: the earlier turns of a
    conversation are its input before the query, the relevant evidence its ``contexts``,
    each passage a document (id ``<document>:<start>-<end>``, titled by its document's
    name), so InspectorRAGet shows the gold passages next to each task."""
    names = {d.ref: d.name for d in bundle.documents}
    documents: dict[str, dict[str, Any]] = {}
    tasks = []
    for item in bundle.items:
        history: list[dict[str, Any]] = []
        for number, turn in enumerate(item.turns, start=1):
            task_id = item.id if len(item.turns) == 1 else f"{item.id}::{number}"
            contexts = []
            for evidence in turn.evidence:
                if evidence.label != "relevant" or evidence.doc_id is None:
                    continue
                passage = f"{evidence.doc_id}:{evidence.start}-{evidence.end}"
                documents.setdefault(
                    passage,
                    {
                        "document_id": passage,
                        "text": evidence.text,
                        "title": names.get(evidence.doc_id, evidence.doc_id),
                    },
                )
                contexts.append({"document_id": passage})
            tasks.append(
                {
                    "task_id": task_id,
                    "task_type": "rag",
                    "input": [*history, {"role": "user", "content": turn.query}],
                    "contexts": contexts,
                    "targets": [
                        {"type": "text", "value": a} for a in [turn.answer, *turn.alternatives] if a
                    ],
                    "query_type": turn.query_type,
                }
            )
            history += [
                {"role": "user", "content": turn.query},
                {"role": "assistant", "content": turn.answer},
            ]
    return {
        "schema_version": SCHEMA_VERSION,
        "name": bundle.project.name,
        "models": [],
        "metrics": [],
        "filters": ["query_type"],
        "documents": list(documents.values()),
        "tasks": tasks,
        "results": [],
    }


def _metric(name: str, judge: Mapping[str, Any] | None) -> dict[str, Any]:
    if judge is not None:
        values = [str(v) for v in judge.get("values") or []]
        return {
            "name": name,
            "display_name": name,
            "author": "algorithm",
            "type": "categorical",
            "aggregator": "majority",
            "values": [
                {"value": v, "display_value": v, "numeric_value": i} for i, v in enumerate(values)
            ],
        }
    return {
        "name": name,
        "display_name": name,
        "author": "algorithm",
        "type": "numerical",
        "aggregator": "average",
        "range": [0, 1, 0.1],
    }


def build(
    name: str,
    pipelines: Iterable[Mapping[str, Any]],
    metrics: Iterable[Any],
    tasks: Iterable[Mapping[str, Any]],
    results: Iterable[Mapping[str, Any]],
    passages: Mapping[str, str],
    owner: str = "assay",
) -> dict[str, Any]:
    """A version 2 file from plain data: ``tasks`` as ``{task_id, query_type, messages,
    gold (chunk ids), references}``, ``results`` as ``{task_id, pipeline, answer,
    retrieved (chunk ids), metrics, error}``, ``passages`` chunk id → text."""
    metric_list = [
        _metric(m if isinstance(m, str) else str(m.get("name")), None if isinstance(m, str) else m)
        for m in metrics
    ]
    numeric_of = {
        m["name"]: {v["value"].lower(): v["numeric_value"] for v in m.get("values", [])}
        for m in metric_list
    }
    out_results = []
    for result in results:
        scores = {}
        for metric, value in (result.get("metrics") or {}).items():
            if value is None or metric not in numeric_of:
                continue
            scores[metric] = {SYSTEM: {"value": value}}
        entry: dict[str, Any] = {
            "task_id": result["task_id"],
            "model_id": result["pipeline"],
            "output": [{"role": "assistant", "content": result.get("answer") or ""}],
            "contexts": [{"document_id": c} for c in result.get("retrieved") or []],
            "scores": scores,
        }
        if result.get("error"):
            entry["metadata"] = {"error": result["error"]}
        out_results.append(entry)
    data = {
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "models": [
            {
                "model_id": p["name"],
                "name": p["name"],
                "owner": owner,
                "description": json.dumps(
                    {k: v for k, v in p.items() if k != "name"}, ensure_ascii=False
                ),
            }
            for p in pipelines
        ],
        "metrics": metric_list,
        "filters": ["query_type"],
        "documents": [{"document_id": cid, "text": text} for cid, text in passages.items()],
        "tasks": [
            {
                "task_id": t["task_id"],
                "task_type": "rag",
                "input": list(t["messages"]),
                "contexts": [{"document_id": c} for c in t["gold"]],
                "targets": [{"type": "text", "value": r} for r in t["references"]],
                "query_type": t["query_type"],
            }
            for t in tasks
        ],
        "results": out_results,
    }
    problems = validate(data)
    if problems:  # a bug on our side, not the user's
        raise InvalidInput("the InspectorRAGet export is not valid: " + "; ".join(problems))
    return data
