"""MTRAG generation tasks (JSON Lines): read and write.

One line is one task: a conversation so far (``input``), the reference answer (``targets``) and
the passages for the last question (``contexts``). Each task becomes one item of kind
``conversation``: the input messages make its turns, the first target is the last turn's
answer, the contexts are the last turn's retrieved list and evidence (as in RAGAPHENE, whose
v1 conversations MTRAG was built from), and the task's enrichment keys (answerability,
Question Type, Multi-Turn, …) go onto the last turn. Predictions and everything else the
model has no field for stay in ``item.extra["mtrag"]`` and are written back.

The published files are not uniform, so the reader accepts ``collection`` or ``Collection``,
``turn`` as a number or a string, ``::`` or ``<::>`` in task ids, and the literal ``NaN`` that
Python writes for a missing value (read as null, written as null).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, Issue, ItemRecord, TurnRecord
from assay.formats.common import FirstSeen, as_object, field_dict, field_list, field_str, sub_dict
from assay.formats.contexts import (
    ContextCorpus,
    document_ids,
    read_contexts,
    sub_list,
    unix_time,
    write_contexts,
)
from assay.formats.groups import source_id
from assay.formats.jsontext import jsonl_lines, read_text

ENRICHMENT_KEYS = (
    "answerability",
    "Question Type",
    "Multi-Turn",
    "Standalone Type",
    "Validity",
    "Ambiguity Type",
)
SEPARATORS = ("<::>", "::")
TASK_KEYS = (
    "conversation_id",
    "task_id",
    "task_type",
    "turn",
    "collection",
    "Collection",
    "dataset",
    "contexts",
    "input",
    "targets",
    "predictions",
    *ENRICHMENT_KEYS,
)


def split_task_id(task_id: str) -> tuple[str, str, str]:
    """``(conversation id, separator, turn)``; separator and turn are "" when absent."""
    for separator in SEPARATORS:
        if separator in task_id:
            head, _, tail = task_id.rpartition(separator)
            return head, separator, tail
    return task_id, "", ""


# ---------------------------------------------------------------- reading


def read(path: Path) -> Bundle:
    where = str(path)
    corpus = ContextCorpus()
    items: list[ItemRecord] = []
    issues: list[Issue] = []
    seen = FirstSeen("field 'task_id'", issues)
    for number, task in jsonl_lines(read_text(path), where, nan_as_null=True):
        try:
            item = task_item(task, f"{where} line {number}", corpus)
        except InvalidInput as exc:
            issues.append(Issue(f"line {number}", str(exc)))
            continue
        if seen.first(item.id, f"line {number}"):
            items.append(item)
    return Bundle(
        documents=corpus.documents(),
        items=items,
        provenance={"format": "mtrag", "path": str(path)},
        issues=issues,
    )


def _turn_number(task: dict[str, Any], where: str) -> int | None:
    value = task.get("turn")
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InvalidInput(f"{where}: field 'turn' must be a whole number, found {value!r}")


def _enrichment_value(value: Any, key: str, where: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"{where}: field {key!r} must be a list of strings")
    return list(value)


def _enrichments(obj: dict[str, Any], where: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for key, value in field_dict(obj, "enrichments", where).items():
        values = _enrichment_value(value, key, where)
        if values is not None:
            found[key] = values
    return found


def task_item(task: dict[str, Any], where: str, corpus: ContextCorpus) -> ItemRecord:
    task_id = field_str(task, "task_id", where)
    conversation_id = field_str(task, "conversation_id", where)
    turn_number = _turn_number(task, where)
    collection_key = (
        "Collection" if "Collection" in task and "collection" not in task else ("collection")
    )
    collection = task.get(collection_key)
    if collection is not None and not isinstance(collection, str):
        raise InvalidInput(f"{where}: field {collection_key!r} must be a string")
    turns: list[TurnRecord] = []
    metas: list[dict[str, Any]] = []
    for index, value in enumerate(field_list(task, "input", where), 1):
        here = f"{where}, input {index}"
        message = as_object(value, here)
        speaker = message.get("speaker")
        if speaker not in ("user", "agent"):
            raise InvalidInput(f"{here}: field 'speaker' must be 'user' or 'agent'")
        if speaker == "user" or not turns or "agent" in metas[-1]:
            turns.append(TurnRecord())
            metas.append({})
        turn = turns[-1]
        text = field_str(message, "text", here)
        if speaker == "user":
            turn.query = text
            turn.enrichments = _enrichments(message, here)
        else:
            turn.answer = text
            turn.retrieved, turn.evidence = read_contexts(
                field_list(message, "contexts", here), here, corpus
            )
        metas[-1][speaker] = {
            k: copy.deepcopy(v)
            for k, v in message.items()
            if k not in ("speaker", "text", "contexts")
            and not (k == "enrichments" and speaker == "user")
        }
        if speaker == "user" and "enrichments" in message:
            metas[-1]["user_enrichments"] = True
    if not turns or "agent" in metas[-1]:
        turns.append(TurnRecord())
        metas.append({})
    last = turns[-1]
    targets = field_list(task, "targets", where)
    for index, value in enumerate(targets, 1):
        target = as_object(value, f"{where}, target {index}")
        field_str(target, "text", f"{where}, target {index}")
    if targets:
        last.answer = str(targets[0].get("text") or "")
    last.retrieved, last.evidence = read_contexts(
        field_list(task, "contexts", where), where, corpus
    )
    top = {key: _enrichment_value(task[key], key, where) for key in ENRICHMENT_KEYS if key in task}
    user_enrichments = last.enrichments
    last.enrichments = {**user_enrichments, **{k: v for k, v in top.items() if v is not None}}
    predictions = field_list(task, "predictions", where)
    head, separator, _ = split_task_id(task_id)
    info = {
        "conversation_id": conversation_id or head,
        "task_id": task_id,
        "separator": separator,
        "task_type": task.get("task_type", "rag"),
        "turn": task.get("turn"),
        "turn_number": turn_number,
        "turn_count": len(turns),
        "collection_key": collection_key,
        "collection": collection,
        "dataset": task.get("dataset"),
        "enrichment_keys": list(top),
        "last_user_enrichments": user_enrichments,
        "targets": copy.deepcopy(targets),
        "messages": metas,
        "unknown": {k: copy.deepcopy(v) for k, v in task.items() if k not in TASK_KEYS},
        "present": [k for k in ("dataset", "task_type", "predictions") if k in task],
    }
    if "predictions" in task:
        info["predictions"] = copy.deepcopy(predictions)
    first_user = sub_dict(sub_dict(metas[0], "user"), "metadata") if metas else {}
    author = first_user.get("author_id")
    return ItemRecord(
        id=task_id or f"{conversation_id}::{turn_number or len(turns)}",
        kind="conversation",
        author=author if isinstance(author, str) else "",
        extra={"mtrag": info},
        turns=turns,
    )


# ---------------------------------------------------------------- writing


def write(bundle: Bundle, path: Path, **_: Any) -> list[str]:
    notes: list[str] = []
    doc_ids = document_ids(bundle)
    with path.open("w", encoding="utf-8") as out:
        for item in bundle.items:
            if not item.turns:
                notes.append(f"item {item.id}: no turns; left out")
                continue
            out.write(json.dumps(item_task(item, doc_ids), ensure_ascii=False) + "\n")
    return notes


def item_task(item: ItemRecord, doc_ids: dict[str, str]) -> dict[str, Any]:
    """One item as a generation task whose target is its last turn's answer."""
    info = sub_dict(item.extra, "mtrag")
    metas = sub_list(info, "messages")
    number = len(item.turns)
    same_turn = info.get("turn_count") == number  # else turns were added or removed
    conversation_id = str(info.get("conversation_id") or source_id(item))
    separator = str(info.get("separator") or "::")
    turn: Any = info.get("turn") if same_turn else number
    if not same_turn and isinstance(info.get("turn"), str):
        turn = str(number)
    task_id = info.get("task_id") if same_turn and info.get("task_id") else None
    task: dict[str, Any] = {
        "conversation_id": conversation_id,
        "task_id": str(task_id or f"{conversation_id}{separator}{number}"),
        "task_type": info.get("task_type", "rag"),
        "turn": turn,
        str(info.get("collection_key") or "collection"): info.get("collection") or "",
    }
    if "dataset" in info.get("present", ["dataset"]):
        task["dataset"] = info.get("dataset") or ""
    last = item.turns[-1]
    top_keys = [k for k in info.get("enrichment_keys", []) if isinstance(k, str)]
    raw_user = sub_dict(info, "last_user_enrichments")
    raw_top = {k: v for k, v in last.enrichments.items() if k in top_keys}
    merged = {**raw_user, **raw_top}
    task["contexts"] = write_contexts(last.retrieved, last.evidence, doc_ids, item.author)
    messages: list[dict[str, Any]] = []
    for index, turn_record in enumerate(item.turns):
        meta = metas[index] if index < len(metas) and isinstance(metas[index], dict) else {}
        is_last = index == number - 1
        user = _message("user", turn_record.query, sub_dict(meta, "user"), item, index)
        if is_last:
            wanted = raw_user if merged == last.enrichments else last.enrichments
        else:
            wanted = turn_record.enrichments
        if wanted or meta.get("user_enrichments"):
            user["enrichments"] = copy.deepcopy(wanted)
        messages.append(user)
        if not is_last:
            agent = _message("agent", turn_record.answer, sub_dict(meta, "agent"), item, index)
            if turn_record.retrieved or turn_record.evidence:
                agent["contexts"] = write_contexts(
                    turn_record.retrieved, turn_record.evidence, doc_ids, item.author
                )
            messages.append(agent)
    task["input"] = messages
    task["targets"] = _targets(info, last.answer, item)
    for key in top_keys:
        values = last.enrichments.get(key)
        task[key] = copy.deepcopy(values) if values else None
    for key, values in last.enrichments.items():
        if key in ENRICHMENT_KEYS and key not in task:
            task[key] = copy.deepcopy(values)
    if "predictions" in info:
        task["predictions"] = copy.deepcopy(info["predictions"])
    task.update(copy.deepcopy(sub_dict(info, "unknown")))
    return task


def _message(
    speaker: str, text: str, meta: dict[str, Any], item: ItemRecord, index: int
) -> dict[str, Any]:
    message: dict[str, Any] = {"speaker": speaker, "text": text}
    if meta:
        message.update({k: copy.deepcopy(v) for k, v in meta.items() if k != "enrichments"})
        if "enrichments" in meta and speaker == "agent":
            message["enrichments"] = copy.deepcopy(meta["enrichments"])
    else:
        message["metadata"] = {
            "author_type": "human" if speaker == "user" else "model",
            "author_id": item.author,
            "created_at": unix_time(item.updated_at or item.created_at),
        }
    return message


def _targets(info: dict[str, Any], answer: str, item: ItemRecord) -> list[dict[str, Any]]:
    targets = [copy.deepcopy(t) for t in sub_list(info, "targets") if isinstance(t, dict)]
    if targets:
        targets[0]["text"] = answer
        return targets
    if not answer:
        return []
    return [_message("agent", answer, {}, item, 0)]
