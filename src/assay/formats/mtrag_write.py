"""MTRAG generation tasks (JSON Lines): write one task per turn of each conversation.

A conversation read from MTRAG gives back the tasks it was read from (ids, turn numbers,
inputs, contexts, targets, enrichment keys, predictions), plus a task for each turn added
since. Any other item gives a task per turn, the way RAGAPHENE makes tasks from a
conversation: ``task_id`` is ``<conversation id>::<turn>``, the input is the conversation up
to the turn's question, the target its answer, the contexts its passages, and each message's
``metadata`` names its author and time (:mod:`assay.formats.dialogue`).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from assay.formats import Bundle, ProjectInfo
from assay.formats.common import sub_dict
from assay.formats.contexts import document_ids, sub_list, write_contexts
from assay.formats.dialogue import (
    DEFAULT_QUERY_TYPE,
    QUERY_TYPE,
    ragaphene_collection,
    ragaphene_metadata,
)
from assay.formats.groups import source_id
from assay.records import Item, Turn

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


COLLECTION_SETTING = "mtrag_collection"
"""The project setting naming the collection of tasks made in Assay (default: the project's
name; MTRAG's format check refuses an empty one)."""
FALLBACK_COLLECTION = "assay"
"""The collection when neither the setting nor the project's name gives one."""


def default_collection(project: ProjectInfo) -> str:
    """The collection written for conversations that name none themselves."""
    given = project.settings.get(COLLECTION_SETTING)
    if isinstance(given, str) and given.strip():
        return given.strip()
    return project.name.strip() or FALLBACK_COLLECTION


def write(bundle: Bundle, path: Path, **_: Any) -> list[str]:
    notes: list[str] = []
    doc_ids = document_ids(bundle)
    collection = default_collection(bundle.project)
    with path.open("w", encoding="utf-8") as out:
        for item in bundle.items:
            if not item.turns:
                notes.append(f"item {item.id}: no turns; left out")
                continue
            for task in item_tasks(item, doc_ids, notes, collection):
                out.write(json.dumps(task, ensure_ascii=False) + "\n")
    return notes


def item_tasks(
    item: Item,
    doc_ids: dict[str, str],
    notes: list[str] | None = None,
    collection: str = FALLBACK_COLLECTION,
) -> list[dict[str, Any]]:
    """The item's tasks: those it was read with, then one per turn added since;
    ``collection`` is the one of conversations that name none."""
    info = sub_dict(item.extra, "mtrag")
    recorded = [t for t in sub_list(info, "tasks") if isinstance(t, dict)]
    count = info.get("turn_count")
    count = count if isinstance(count, int) else 0
    wanted: list[tuple[int, dict[str, Any]]] = []
    for task in recorded:
        position = task.get("position")
        if isinstance(position, int) and 1 <= position <= len(item.turns):
            wanted.append((position, task))
        elif notes is not None:
            notes.append(f"item {item.id}: task {task.get('task_id')!r} asks about a turn "
                         "that was removed; left out")  # fmt: skip
    wanted += [(n, {}) for n in range(max(count, 0) + 1, len(item.turns) + 1)]
    writer = _Writer(item, doc_ids, recorded, collection)
    return [writer.task(position, task) for position, task in wanted]


class _Writer:
    """What the tasks of one item share: its messages' metadata and conversation fields."""

    def __init__(
        self, item: Item, doc_ids: dict[str, str], recorded: list[dict[str, Any]], collection: str
    ) -> None:
        self.item = item
        self.doc_ids = doc_ids
        info = sub_dict(item.extra, "mtrag")
        self.metas = sub_list(info, "messages")
        self.derived = ragaphene_metadata(item) if not info else []
        self.by_turn = {t.get("position"): t for t in recorded}
        self.base = recorded[-1] if recorded else {}
        self.conversation_id = str(info.get("conversation_id") or source_id(item))
        self.collection = (ragaphene_collection(item) if not info else None) or collection

    def meta(self, index: int) -> dict[str, Any]:
        found = self.metas[index] if index < len(self.metas) else None
        return found if isinstance(found, dict) else {}

    def message(self, speaker: str, text: str, index: int) -> dict[str, Any]:
        message: dict[str, Any] = {"speaker": speaker, "text": text}
        query_type = self.item.turns[index].query_type
        if speaker == "user" and query_type != DEFAULT_QUERY_TYPE:
            message[QUERY_TYPE] = query_type
        meta = self.meta(index)
        if speaker in meta:
            message.update(copy.deepcopy(sub_dict(meta, speaker)))
        elif index < len(self.derived):
            message["metadata"] = self.derived[index][speaker]
        return message

    def user_enrichments(self, index: int) -> dict[str, list[str]]:
        """What the question's own ``enrichments`` held: the turn's enrichments without the
        task-level keys that were merged in, unless they were edited since."""
        turn = self.item.turns[index]
        task = self.by_turn.get(index + 1) or {}
        top_keys = [k for k in task.get("enrichment_keys", []) if isinstance(k, str)]
        raw_user = sub_dict(task, "last_user_enrichments")
        raw_top = {k: v for k, v in turn.enrichments.items() if k in top_keys}
        return raw_user if {**raw_user, **raw_top} == turn.enrichments else turn.enrichments

    def contexts(self, turn: Turn) -> list[dict[str, Any]]:
        return write_contexts(turn.retrieved, turn.evidence, self.doc_ids, self.item.author)

    def task(self, position: int, info: dict[str, Any]) -> dict[str, Any]:
        """The task asking the question of turn ``position`` (1-based)."""
        base = info or self.base
        last = self.item.turns[position - 1]
        separator = str(base.get("separator") or "::")
        present = info.get("present", ["dataset", "task_type", "turn"]) if info else None
        task: dict[str, Any] = {
            "conversation_id": self.conversation_id,
            "task_id": str(info.get("task_id") or f"{self.conversation_id}{separator}{position}"),
        }
        if present is None or "task_type" in present:
            task["task_type"] = base.get("task_type", "rag")
        if present is None or "turn" in present:
            number = str(position) if isinstance(base.get("turn"), str) else position
            task["turn"] = info.get("turn", number)
        absent = [k for k in info.get("absent", []) if isinstance(k, str)] if info else []
        key = str(base.get("collection_key") or "collection")
        if info and "collection" not in absent:  # a task read in: its collection as read
            task[key] = base.get("collection")
        elif not info:  # never empty: MTRAG's format check refuses that
            task[key] = (base.get("collection") if base else None) or self.collection
        if (present is None and base) or (present is not None and "dataset" in present):
            task["dataset"] = base.get("dataset") or ""
        for name, value in (
            ("contexts", self.contexts(last)),
            ("input", self.input(position)),
            ("targets", self.targets(info, last.answer, position - 1)),
        ):
            gained = last.answer != info.get("answer_read") if name == "targets" else value
            if name not in absent or gained:
                task[name] = value
        top_keys = [k for k in info.get("enrichment_keys", []) if isinstance(k, str)]
        for key in top_keys:
            values = last.enrichments.get(key)
            task[key] = copy.deepcopy(values) if values else None
        for key, values in last.enrichments.items():
            if key in ENRICHMENT_KEYS and key not in task:
                task[key] = copy.deepcopy(values)
        if "predictions" in info:
            task["predictions"] = copy.deepcopy(info["predictions"])
        task.update(copy.deepcopy(sub_dict(info, "unknown")))
        if self.item.notes:  # MTRAG has no place for notes: a key of their own
            task["notes"] = self.item.notes
        return task

    def input(self, position: int) -> list[dict[str, Any]]:
        """The conversation up to the question of turn ``position``."""
        messages: list[dict[str, Any]] = []
        for index in range(position):
            turn, meta = self.item.turns[index], self.meta(index)
            if turn.query or "user" in meta or not meta:
                user = self.message("user", turn.query, index)
                wanted = self.user_enrichments(index)
                if wanted or meta.get("user_enrichments"):
                    user["enrichments"] = copy.deepcopy(wanted)
                messages.append(user)
            if index == position - 1 or not (turn.answer or "agent" in meta):
                continue
            agent = self.message("agent", turn.answer, index)
            if meta.get("agent_contexts"):
                agent["contexts"] = self.contexts(turn)
            messages.append(agent)
        return messages

    def targets(self, info: dict[str, Any], answer: str, index: int) -> list[dict[str, Any]]:
        targets = [copy.deepcopy(t) for t in sub_list(info, "targets") if isinstance(t, dict)]
        if targets:
            targets[0]["text"] = answer
            return targets
        if not answer:
            return []
        return [self.message("agent", answer, index)]
