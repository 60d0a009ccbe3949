"""InspectorRAGet files as InspectorRAGet checks them: version 1 migrated to version 2.

Version 1 (``evaluations``, ``annotations``, ``model_response``; also what RAGAPHENE's
experiment mode writes) becomes version 2 on reading (``evaluations`` → ``results``,
``annotations`` → ``scores``, ``model_response`` → ``output``, old task types, ``{text}``
targets), then the file is checked the way InspectorRAGet checks it, with messages naming
the record. Messages keep their shape (``speaker``/``text`` or ``role``/``content``):
InspectorRAGet's own migration leaves them alone and its ``qa`` view reads
``utterance.speaker``. A file written back is always version 2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats.jsontext import loads, read_text

SCHEMA_VERSION = 2
TASK_TYPES = ("qa", "generation", "rag", "tool_calling", "agentic")
METRIC_TYPES = ("numerical", "categorical", "text")
AUTHORS = ("human", "algorithm")
SYSTEM = "system"


def as_message(entry: Any) -> dict[str, Any]:
    """A message seen as ``role``/``content`` (how the reader finds the user's turns; the
    task keeps the file's own shape)."""
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
        role_style = (
            isinstance(raw_input, list)
            and bool(raw_input)
            and isinstance(raw_input[0], Mapping)
            and "role" in raw_input[0]
        )
        kind = task.get("task_type")
        if kind == "rag":  # single-turn (a string or speaker/text messages) is now qa
            task["task_type"] = "rag" if role_style else "qa"
        elif kind == "chat":
            task["task_type"] = "rag"
        elif kind in ("text_generation", "json_generation"):
            task["task_type"] = "generation"
        if isinstance(task.get("targets"), list):
            task["targets"] = [
                {"type": "text", "value": t.get("text", "")}
                if isinstance(t, Mapping) and "type" not in t
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


def is_number(value: Any) -> bool:
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
                    elif not is_number(value.get("numeric_value")):
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
        if task.get("task_type") == "qa" and "contexts" not in task:  # may be empty
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


def output_text(output: Any) -> str:
    """The answer text of a result's ``output`` (a string or assistant messages)."""
    if isinstance(output, str):
        return output
    return " ".join(
        str(m.get("content", "")) for m in output or [] if isinstance(m, Mapping)
    ).strip()
