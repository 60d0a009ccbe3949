"""MTRAG generation tasks (JSON Lines): one conversation per ``conversation_id``, one task
per turn.

A task file holds one line per turn: the conversation so far (``input``), the reference
answer (``targets``) and the passages for the last question (``contexts``). The tasks of one
conversation repeat its earlier messages, so the reader rebuilds the conversation once (its
turns from the longest task) and puts each task's contexts, targets, enrichment keys
(answerability, Question Type, Multi-Turn, …) and predictions on the turn it asks about. The
contexts become the turn's retrieved list and evidence (as in RAGAPHENE, whose conversations
MTRAG was made from). What the model has no field for stays in ``item.extra["mtrag"]`` so the
writer gives back the same tasks.

Tasks of one conversation must agree on the messages they share: a line whose copy of an
earlier message differs is refused, naming both lines. The published files are not uniform,
so the reader accepts ``collection`` or ``Collection``, ``turn`` as a number or a string,
``::`` or ``<::>`` in task ids, and the literal ``NaN`` that Python writes for a missing value
(read as null, written as null).

Writing: a conversation read from MTRAG gives back the tasks it was read from (ids, turn
numbers, inputs, contexts, targets, enrichment keys, predictions), plus a task for each turn
added since. Any other item gives a task per turn, the way RAGAPHENE makes tasks from a
conversation: ``task_id`` is ``<conversation id>::<turn>``, the input is the conversation up
to the turn's question, the target its answer, the contexts its passages, and each message's
``metadata`` names its author and time (:mod:`assay.formats.dialogue`).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, Issue, ProjectInfo
from assay.formats.common import FirstSeen, as_object, field_dict, field_list, field_str, sub_dict
from assay.formats.contexts import (
    ContextCorpus,
    document_ids,
    read_contexts,
    sub_list,
    write_contexts,
)
from assay.formats.dialogue import (
    DEFAULT_QUERY_TYPE,
    QUERY_TYPE,
    query_type_of,
    ragaphene_collection,
    ragaphene_metadata,
)
from assay.formats.groups import source_id
from assay.formats.jsontext import jsonl_lines, read_text
from assay.records import Item, Turn

__all__ = ["read", "split_task_id", "write"]

Message = dict[str, Any]
Exchange = dict[str, Message]
"""``{"user": message, "agent": message}``, either may be missing."""


@dataclass
class _Task:
    """One line, checked: its messages grouped into turns; the last turn's answer is the
    first target."""

    line: int
    raw: dict[str, Any]
    task_id: str
    conversation_id: str
    turns: list[Exchange]

    @property
    def position(self) -> int:
        """The turn this task asks about (1-based)."""
        return len(self.turns)


@dataclass
class _Conversation:
    conversation_id: str
    turns: list[dict[str, tuple[Message, int]]] = field(default_factory=list)
    """Per turn, speaker → (message, the line it was first read from)."""
    tasks: dict[int, _Task] = field(default_factory=dict)

    def disagreement(self, task: _Task) -> str | None:
        """Why ``task`` cannot join this conversation, or None."""
        for index, turn in enumerate(task.turns[: len(self.turns)]):
            for speaker, message in turn.items():
                known = self.turns[index].get(speaker)
                if known is None or known[0] == message:
                    continue
                what = _difference(known[0], message)
                role = "question" if speaker == "user" else "answer"
                return (
                    f"conversation {self.conversation_id!r}, turn {index + 1}: the {role}'s "
                    f"{what} differs from line {known[1]} (tasks of one conversation must "
                    "agree on the messages they share)"
                )
        other = self.tasks.get(task.position)
        if other is not None:
            return (
                f"conversation {self.conversation_id!r}, turn {task.position}: line "
                f"{other.line} (task {other.task_id!r}) is already the task for this turn"
            )
        return None

    def add(self, task: _Task) -> None:
        for index, turn in enumerate(task.turns):
            if index == len(self.turns):
                self.turns.append({})
            for speaker, message in turn.items():
                self.turns[index].setdefault(speaker, (message, task.line))
        self.tasks[task.position] = task


def _difference(old: Message, new: Message) -> str:
    if old.get("text") != new.get("text"):
        return "text"
    keys = sorted({*old, *new}, key=str)
    return next(f"field {k!r}" for k in keys if old.get(k) != new.get(k))


# ---------------------------------------------------------------- task files


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
    issues: list[Issue] = []
    seen = FirstSeen("field 'task_id'", issues)
    conversations: dict[str, _Conversation] = {}
    for number, raw in jsonl_lines(read_text(path), where, nan_as_null=True):
        line = f"line {number}"
        try:
            task = parse_task(raw, f"{where} {line}", number)
        except InvalidInput as exc:
            issues.append(Issue(line, str(exc)))
            continue
        if not seen.first(task.task_id, line):
            continue
        conversation = conversations.setdefault(
            task.conversation_id, _Conversation(task.conversation_id)
        )
        problem = conversation.disagreement(task)
        if problem is not None:
            issues.append(Issue(line, problem))
            continue
        conversation.add(task)
    corpus = ContextCorpus()
    items = [conversation_item(c, f"{where} line", corpus) for c in conversations.values()]
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


def parse_task(task: Any, where: str, line: int) -> _Task:
    """Check one line and group its messages into turns (nothing is stored yet)."""
    task = as_object(task, where)
    task_id = field_str(task, "task_id", where)
    head, _, _ = split_task_id(task_id)
    conversation_id = field_str(task, "conversation_id", where) or head
    if not conversation_id:
        raise InvalidInput(f"{where}: field 'conversation_id' (or 'task_id') is missing")
    _turn_number(task, where)
    for key in ("collection", "Collection", "dataset", "task_type"):
        field_str(task, key, where)
    turns: list[Exchange] = []
    for index, value in enumerate(field_list(task, "input", where), 1):
        here = f"{where}, input {index}"
        message = as_object(value, here)
        speaker = message.get("speaker")
        if speaker not in ("user", "agent"):
            raise InvalidInput(f"{here}: field 'speaker' must be 'user' or 'agent'")
        field_str(message, "text", here)
        if speaker == "user":
            _enrichments(message, here)
        else:
            read_contexts(field_list(message, "contexts", here), here, ContextCorpus())
        if speaker == "user" or not turns or "agent" in turns[-1]:
            turns.append({})
        turns[-1][str(speaker)] = message
    if not turns or "agent" in turns[-1]:
        turns.append({})
    targets = field_list(task, "targets", where)
    for index, value in enumerate(targets, 1):
        field_str(as_object(value, f"{where}, target {index}"), "text", f"{where}, target {index}")
    if targets:
        turns[-1]["agent"] = targets[0]
    read_contexts(field_list(task, "contexts", where), where, ContextCorpus())
    for key in ENRICHMENT_KEYS:
        _enrichment_value(task.get(key), key, where)
    field_list(task, "predictions", where)
    task_id = task_id or f"{conversation_id}::{len(turns)}"
    return _Task(line, task, task_id, conversation_id, turns)


def conversation_item(conversation: _Conversation, where: str, corpus: ContextCorpus) -> Item:
    """One conversation as an item: a turn per question, each task's data on its turn."""
    turns: list[Turn] = []
    metas: list[dict[str, Any]] = []
    for index, messages in enumerate(conversation.turns):
        turn, meta = Turn(), dict[str, Any]()
        user, agent = messages.get("user"), messages.get("agent")
        if user is not None:
            turn.query = str(user[0].get("text") or "")
            turn.enrichments = _enrichments(user[0], where)
            turn.query_type = query_type_of(user[0]) or turn.query_type
            held = (
                "speaker",
                "text",
                "enrichments",
                *([QUERY_TYPE] * bool(query_type_of(user[0]))),
            )
            meta["user"] = _rest(user[0], held)
            meta["user_enrichments"] = "enrichments" in user[0]
        if agent is not None:
            turn.answer = str(agent[0].get("text") or "")
            meta["agent"] = _rest(agent[0], ("speaker", "text"))
            task = conversation.tasks.get(index + 1)
            if task is None and "contexts" in agent[0]:  # no task of its own: use its copy
                here = f"{where} {agent[1]}"
                turn.retrieved, turn.evidence = read_contexts(agent[0]["contexts"], here, corpus)
                meta["agent"].pop("contexts")
                meta["agent_contexts"] = True
        turns.append(turn)
        metas.append(meta)
    tasks = sorted(conversation.tasks.values(), key=lambda t: t.line)
    infos = [_task_info(t, turns[t.position - 1], f"{where} {t.line}", corpus) for t in tasks]
    first_user = metas[0].get("user", {}).get("metadata") if metas else None
    author = first_user.get("author_id") if isinstance(first_user, dict) else None
    notes = next((t.raw["notes"] for t in tasks if isinstance(t.raw.get("notes"), str)), "")
    return Item(
        origin="imported",
        id=conversation.conversation_id,
        kind="conversation",
        author=author if isinstance(author, str) else "",
        notes=notes,
        extra={
            "mtrag": {
                "conversation_id": conversation.conversation_id,
                "turn_count": len(turns),
                "messages": metas,
                "tasks": infos,
            }
        },
        turns=turns,
    )


def _rest(message: Message, leave_out: tuple[str, ...]) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in message.items() if k not in leave_out}


def _task_info(task: _Task, turn: Turn, where: str, corpus: ContextCorpus) -> dict[str, Any]:
    """Puts the task's contexts and enrichment keys on its turn; returns what else the task
    holds, for the way back."""
    raw = task.raw
    turn.retrieved, turn.evidence = read_contexts(raw.get("contexts") or [], where, corpus)
    top = {k: _enrichment_value(raw[k], k, where) for k in ENRICHMENT_KEYS if k in raw}
    user_enrichments = turn.enrichments
    turn.enrichments = {**user_enrichments, **{k: v for k, v in top.items() if v is not None}}
    _, separator, _ = split_task_id(task.task_id)
    collection_key = "collection"
    if "Collection" in raw and "collection" not in raw:
        collection_key = "Collection"
    info: dict[str, Any] = {
        "position": task.position,
        "task_id": task.task_id,
        "separator": separator,
        "task_type": raw.get("task_type", "rag"),
        "turn": raw.get("turn"),
        "collection_key": collection_key,
        "collection": raw.get(collection_key),
        "dataset": raw.get("dataset"),
        "enrichment_keys": list(top),
        "last_user_enrichments": user_enrichments,
        "targets": copy.deepcopy(raw.get("targets") or []),
        "unknown": {
            k: copy.deepcopy(v)
            for k, v in raw.items()
            if k not in TASK_KEYS and not (k == "notes" and isinstance(v, str))
        },
        "present": [k for k in ("dataset", "task_type", "predictions", "turn") if k in raw],
    }
    absent = [k for k in ("contexts", "input", "targets") if k not in raw]
    if "collection" not in raw and "Collection" not in raw:
        absent.append("collection")
    if absent:  # written back without them unless the turn gained what they would hold
        info["absent"] = absent
        info["answer_read"] = turn.answer
    if "predictions" in raw:
        info["predictions"] = copy.deepcopy(raw["predictions"])
    return info


# ---------------------------------------------------------------- writing


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
