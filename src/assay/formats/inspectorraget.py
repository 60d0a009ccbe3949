"""InspectorRAGet files (IBM's result viewer): version 2 written, versions 1 and 2 read.

A file holds models (our pipelines), metrics, documents (passages), tasks (questions with
their input messages, gold contexts and target answers) and results (one per model and task,
with scores ``{metric: {annotator: {value}}}``; algorithmic scores use the annotator
``system``). Version 1 files are migrated to version 2 on reading (``evaluations`` →
``results``, ``annotations`` → ``scores``, ``model_response`` → ``output``, old task types and
``{text}`` targets), then checked the way InspectorRAGet checks them, with messages naming
the record.

:func:`experiment_to_inspectorraget` builds a file from a stored experiment (it reads the
workspace through the experiments API); everything else here is pure and touches no database.
:func:`read` gives a Bundle (tasks → draft items with their target answers and contexts as
evidence text); :func:`read_results` gives the scores as ``{model_id: {task_id: {metric:
value}}}`` plus the checked file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import InvalidInput
from assay.formats import Bundle, EvidenceRecord, Issue, ItemRecord, ProjectInfo, TurnRecord
from assay.formats.common import FirstSeen
from assay.formats.jsontext import loads, read_text

if TYPE_CHECKING:
    from assay.models import Project
    from assay.workspace import Workspace

SCHEMA_VERSION = 2
TASK_TYPES = ("qa", "generation", "rag", "tool_calling", "agentic")
METRIC_TYPES = ("numerical", "categorical", "text")
AUTHORS = ("human", "algorithm")
SYSTEM = "system"


# ---------------------------------------------------------------- migration and checks


def _message(entry: Any) -> dict[str, Any]:
    """A message in v2 shape: ``speaker``/``text`` become ``role``/``content``."""
    if not isinstance(entry, Mapping):
        return {"role": "user", "content": str(entry)}
    message = dict(entry)
    if "role" not in message and "speaker" in message:
        speaker = str(message.pop("speaker")).lower()
        message["role"] = "assistant" if speaker in ("agent", "assistant") else speaker
    if "content" not in message and "text" in message:
        message["content"] = message.pop("text")
    if "steps" in message and "trace" not in message:
        message["trace"] = message.pop("steps")
    return message


def migrate(data: Mapping[str, Any]) -> dict[str, Any]:
    """A version 1 file as version 2 (a version 2 file comes back unchanged)."""
    version = data.get("schema_version", 1)
    if version == SCHEMA_VERSION:
        return dict(data)
    if version != 1:
        raise InvalidInput(f"InspectorRAGet schema_version {version!r} is not 1 or 2")
    out = {k: v for k, v in data.items() if k not in ("evaluations", "schema_version")}
    out["schema_version"] = SCHEMA_VERSION
    tasks = []
    for task in data.get("tasks", []) or []:
        task = dict(task)
        raw_input = task.get("input")
        speaker_style = isinstance(raw_input, list) and any(
            isinstance(m, Mapping) and "speaker" in m for m in raw_input
        )
        kind = task.get("task_type")
        if kind == "rag":
            task["task_type"] = "qa" if speaker_style else "rag"
        elif kind == "chat":
            task["task_type"] = "rag"
        elif kind in ("text_generation", "json_generation"):
            task["task_type"] = "generation"
        if isinstance(raw_input, list):
            task["input"] = [_message(m) for m in raw_input]
        if isinstance(task.get("targets"), list):
            task["targets"] = [
                {"type": "text", "value": t["text"]}
                if isinstance(t, Mapping) and "text" in t and "type" not in t
                else t
                for t in task["targets"]
            ]
        tasks.append(task)
    out["tasks"] = tasks
    results = []
    for result in data.get("evaluations", data.get("results", [])) or []:
        result = dict(result)
        if "annotations" in result and "scores" not in result:
            result["scores"] = result.pop("annotations")
        if "model_response" in result and "output" not in result:
            result["output"] = [{"role": "assistant", "content": result.pop("model_response")}]
        results.append(result)
    out["results"] = results
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def validate(data: Mapping[str, Any]) -> list[str]:
    """What InspectorRAGet would refuse in a version 2 file (empty when it is fine)."""
    problems: list[str] = []
    for key in ("models", "metrics", "tasks"):
        if not isinstance(data.get(key), list):
            problems.append(f"{key}: a list is required")
    for n, model in enumerate(data.get("models") or [], start=1):
        for key in ("model_id", "name", "owner"):
            if not isinstance(model, Mapping) or not model.get(key):
                problems.append(f"models[{n}]: {key} is required")
    for n, metric in enumerate(data.get("metrics") or [], start=1):
        where = f"metrics[{n}] ({metric.get('name', '?') if isinstance(metric, Mapping) else '?'})"
        if not isinstance(metric, Mapping) or not metric.get("name"):
            problems.append(f"metrics[{n}]: name is required")
            continue
        if metric.get("author") not in AUTHORS:
            problems.append(f"{where}: author must be one of {', '.join(AUTHORS)}")
        kind = metric.get("type")
        if kind not in METRIC_TYPES:
            problems.append(f"{where}: type must be one of {', '.join(METRIC_TYPES)}")
        if kind == "numerical" and metric.get("aggregator") == "majority":
            problems.append(f"{where}: a numerical metric cannot use the majority aggregator")
        if kind == "categorical":
            values = metric.get("values")
            if not isinstance(values, list) or not values:
                problems.append(f"{where}: a categorical metric needs a non-empty values list")
            else:
                for m, value in enumerate(values, start=1):
                    if not isinstance(value, Mapping) or "value" not in value:
                        problems.append(f"{where}: values[{m}] needs value")
                    elif not _is_number(value.get("numeric_value")):
                        problems.append(f"{where}: values[{m}] needs a numeric numeric_value")
    for n, document in enumerate(data.get("documents") or [], start=1):
        if not isinstance(document, Mapping) or not document.get("document_id"):
            problems.append(f"documents[{n}]: document_id is required")
    for n, task in enumerate(data.get("tasks") or [], start=1):
        if not isinstance(task, Mapping) or not task.get("task_id"):
            problems.append(f"tasks[{n}]: task_id is required")
            continue
        where = f"tasks[{n}] ({task['task_id']})"
        if task.get("task_type") not in TASK_TYPES:
            problems.append(f"{where}: task_type must be one of {', '.join(TASK_TYPES)}")
        if "input" not in task:
            problems.append(f"{where}: input is required")
        if task.get("task_type") == "qa" and not task.get("contexts"):
            problems.append(f"{where}: a qa task needs contexts")
    for n, result in enumerate(data.get("results") or [], start=1):
        if (
            not isinstance(result, Mapping)
            or not result.get("task_id")
            or not result.get("model_id")
        ):
            problems.append(f"results[{n}]: task_id and model_id are required")
        elif not isinstance(result.get("scores", {}), Mapping):
            problems.append(f"results[{n}]: scores must be an object")
    return problems


def _objects(value: Any, where: str, key: str, text: bool = False) -> list[Any]:
    """``value`` as a list of objects (or, with ``text``, a string), else InvalidInput."""
    if value is None or (text and isinstance(value, str)):
        return []
    if not isinstance(value, list) or not all(isinstance(e, Mapping) for e in value):
        raise InvalidInput(f"{where}: field {key!r} must be a list of objects")
    return value


def _check_shape(data: Mapping[str, Any], where: str) -> None:
    """The lists and objects the migration and checks walk, before they walk them."""
    for key in ("models", "metrics", "documents", "tasks", "results", "evaluations"):
        _objects(data.get(key), where, key)
    for n, task in enumerate(data.get("tasks") or [], start=1):
        here = f"{where}: tasks[{n}]"
        if not isinstance(task.get("task_id", ""), str | int) or isinstance(
            task.get("task_id"), bool
        ):
            raise InvalidInput(f"{here}: field 'task_id' must be a string")
        if not isinstance(task.get("input", []), list | str):
            raise InvalidInput(f"{here}: field 'input' must be a list of messages or a string")
        _objects(task.get("contexts"), here, "contexts")
        _objects(task.get("targets"), here, "targets")
    for key in ("results", "evaluations"):
        for n, result in enumerate(data.get(key) or [], start=1):
            here = f"{where}: {key}[{n}]"
            for name in ("scores", "annotations"):
                if not isinstance(result.get(name, {}), Mapping):
                    raise InvalidInput(f"{here}: field {name!r} must be an object")
            _objects(result.get("output"), here, "output", text=True)


def load(path: Path) -> dict[str, Any]:
    """Read, migrate to version 2 and check; InvalidInput lists every problem."""
    data = loads(read_text(path), str(path))
    if not isinstance(data, Mapping):
        raise InvalidInput(f"{path}: an InspectorRAGet file is a JSON object")
    _check_shape(data, str(path))
    try:
        migrated = migrate(data)
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: {exc}") from exc
    problems = validate(migrated)
    if problems:
        shown = "; ".join(problems[:20])
        more = f" (and {len(problems) - 20} more)" if len(problems) > 20 else ""
        raise InvalidInput(f"{path}: not a valid InspectorRAGet file: {shown}{more}")
    return migrated


# ---------------------------------------------------------------- reading


def _score(value: Mapping[str, Any]) -> Any:
    """One metric's value: the ``system`` annotator's, else the annotators' values in a list."""
    if SYSTEM in value and isinstance(value[SYSTEM], Mapping):
        return value[SYSTEM].get("value")
    found = [v.get("value") for v in value.values() if isinstance(v, Mapping)]
    return found[0] if len(found) == 1 else found


@dataclass(frozen=True, slots=True)
class InspectorResults:
    """Scores of a file: ``scores[model_id][task_id][metric]`` and answers likewise."""

    data: dict[str, Any]
    scores: dict[str, dict[str, dict[str, Any]]]
    answers: dict[str, dict[str, str]]


def read_results(path: Path) -> InspectorResults:
    data = load(path)
    scores: dict[str, dict[str, dict[str, Any]]] = {}
    answers: dict[str, dict[str, str]] = {}
    for result in data.get("results") or []:
        model, task = str(result["model_id"]), str(result["task_id"])
        scores.setdefault(model, {})[task] = {
            metric: _score(value)
            for metric, value in (result.get("scores") or {}).items()
            if isinstance(value, Mapping)
        }
        output = result.get("output") or []
        text = " ".join(str(m.get("content", "")) for m in output if isinstance(m, Mapping)).strip()
        answers.setdefault(model, {})[task] = text
    return InspectorResults(data, scores, answers)


def read(path: Path) -> Bundle:
    """Tasks as draft items: the last user message is the query, earlier messages go to the
    item's notes, targets are the answer (and alternatives), contexts become evidence by
    text. Results are not part of a Bundle: see :func:`read_results`."""
    data = load(path)
    documents = {
        str(d["document_id"]): d for d in data.get("documents") or [] if isinstance(d, Mapping)
    }
    items: list[ItemRecord] = []
    issues: list[Issue] = []
    seen = FirstSeen("field 'task_id'", issues)
    for n, task in enumerate(data["tasks"], start=1):
        if not seen.first(str(task["task_id"]), f"tasks[{n}]"):
            continue
        raw_input = task.get("input") or []
        messages = [_message(m) for m in ([raw_input] if isinstance(raw_input, str) else raw_input)]
        users = [m for m in messages if m.get("role") == "user"]
        query = str(users[-1].get("content", "")) if users else ""
        targets = [
            str(t.get("value", ""))
            for t in task.get("targets") or []
            if isinstance(t, Mapping) and t.get("type", "text") == "text"
        ]
        evidence = []
        for context in task.get("contexts") or []:
            ref = str(context.get("document_id", "")) if isinstance(context, Mapping) else ""
            text = str(documents.get(ref, {}).get("text", ""))
            if text:
                evidence.append(EvidenceRecord(text=text, label="relevant"))
        history = [m for m in messages[:-1]] if users else messages
        items.append(
            ItemRecord(
                id=str(task["task_id"]),
                kind="conversation" if len(users) > 1 else "qa",
                origin="imported",
                extra={"inspectorraget": {"task_type": task.get("task_type"), "history": history}},
                turns=[
                    TurnRecord(
                        query=query,
                        query_type=str(task.get("query_type") or "fact_single"),
                        answer=targets[0] if targets else "",
                        alternatives=targets[1:],
                        evidence=evidence,
                    )
                ],
            )
        )
    return Bundle(
        project=ProjectInfo(name=str(data.get("name") or "")),
        items=items,
        provenance={"format": "inspectorraget", "schema_version": SCHEMA_VERSION},
        issues=issues,
    )


# ---------------------------------------------------------------- writing


def write(bundle: Bundle, path: Path, **options: Any) -> list[str]:
    """Gold items as tasks (no models, no results): a file to score systems against."""
    tasks = []
    for item in bundle.items:
        for number, turn in enumerate(item.turns, start=1):
            task_id = item.id if len(item.turns) == 1 else f"{item.id}::{number}"
            tasks.append(
                {
                    "task_id": task_id,
                    "task_type": "rag",
                    "input": [{"role": "user", "content": turn.query}],
                    "targets": [
                        {"type": "text", "value": a} for a in [turn.answer, *turn.alternatives] if a
                    ],
                    "query_type": turn.query_type,
                }
            )
    data = {
        "schema_version": SCHEMA_VERSION,
        "name": bundle.project.name,
        "models": [],
        "metrics": [],
        "filters": ["query_type"],
        "tasks": tasks,
        "results": [],
    }
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return ["gold items only: export an experiment for models and results"]


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


def experiment_to_inspectorraget(ws: Workspace, project: Project, ref: int | str) -> dict[str, Any]:
    """A stored experiment as a version 2 file: pipelines are models, every gold and
    retrieved chunk is a document."""
    from assay.documents import get_document
    from assay.errors import NotFound
    from assay.experiments import get_experiment, iter_results
    from assay.experiments.store import experiment_tasks_of

    experiment = get_experiment(ws, project, ref, with_aggregates=False)
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
