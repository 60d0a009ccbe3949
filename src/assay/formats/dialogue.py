"""Who spoke when in a conversation, as RAGAPHENE and MTRAG record it, for their writers.

MTRAG keeps ``metadata`` (author type, author id, time) on every message; RAGAPHENE keeps a
timestamp per message and one author and one generator per conversation, and derives the
MTRAG metadata from them when it makes tasks (users are the conversation's author, answers
its generator's, else ``system``). Each format keeps its own details in ``item.extra``; these
functions let one writer read what the other format's import recorded, so a conversation
goes MTRAG → RAGAPHENE → MTRAG (and back) with its authors, times and collection.
"""

from __future__ import annotations

import copy
from typing import Any

from assay.formats.common import sub_dict
from assay.formats.contexts import is_number, sub_list, unix_time
from assay.records import Item

SPEAKERS = ("user", "agent")
DEFAULT_QUERY_TYPE = "fact_single"
"""A turn's query type unless set (:class:`assay.records.Turn`): not written."""
QUERY_TYPE = "query_type"
"""The key of a question (user message) that holds Assay's query type: neither RAGAPHENE nor
MTRAG has a field for it, and their tools ignore the key."""


def query_type_of(message: dict[str, Any]) -> str:
    """The query type Assay wrote on a question ("" when none)."""
    value = message.get(QUERY_TYPE)
    return value if isinstance(value, str) else ""


def derived_metadata(speaker: str, author: str, generator: str, when: Any) -> dict[str, Any]:
    """The metadata RAGAPHENE gives a message when it turns a conversation into tasks."""
    if speaker == "user":
        return {"author_type": "human", "author_id": author, "created_at": when}
    return {"author_type": "model", "author_id": generator or "system", "created_at": when}


def ragaphene_metadata(item: Item) -> list[dict[str, dict[str, Any]]]:
    """Per turn, speaker → MTRAG metadata, from what a RAGAPHENE import kept (message
    timestamps, the author, the generator) or, for other items, the item's own author and
    times; a message that carries ``metadata`` of its own keeps it."""
    info = sub_dict(item.extra, "ragaphene")
    kept = sub_dict(info, "conversation")
    metas = sub_list(info, "messages")
    author = kept["author"] if isinstance(kept.get("author"), str) else item.author
    name = sub_dict(kept, "generator").get("name")
    generator = name if isinstance(name, str) else ""
    fallback = unix_time(item.updated_at or item.created_at)
    found: list[dict[str, dict[str, Any]]] = []
    for index, turn in enumerate(item.turns):
        meta = metas[index] if index < len(metas) and isinstance(metas[index], dict) else {}
        entry: dict[str, dict[str, Any]] = {}
        for speaker in SPEAKERS:
            message = sub_dict(meta, speaker)
            given = message.get("metadata")
            if isinstance(given, dict):
                entry[speaker] = copy.deepcopy(given)
                continue
            stamp = message.get("timestamp")
            model = turn.generation.get("model")
            answered_by = generator or (model if isinstance(model, str) else "")
            entry[speaker] = derived_metadata(
                speaker, author, answered_by, stamp if is_number(stamp) else fallback
            )
        found.append(entry)
    return found


def mtrag_metadata(item: Item) -> list[dict[str, dict[str, Any]]]:
    """Per turn, speaker → the metadata an MTRAG import recorded (empty when none)."""
    metas = sub_list(sub_dict(item.extra, "mtrag"), "messages")
    return [
        {s: sub_dict(sub_dict(m, s), "metadata") for s in SPEAKERS} if isinstance(m, dict) else {}
        for m in metas
    ]


def mtrag_generator(metadata: list[dict[str, dict[str, Any]]]) -> str:
    """The model that wrote an MTRAG conversation's answers (the first agent's author id)."""
    for entry in metadata:
        agent = entry.get("agent") or {}
        if agent.get("author_type") == "model" and isinstance(agent.get("author_id"), str):
            return str(agent["author_id"])
    return ""


def mtrag_collection(item: Item) -> str | None:
    """The collection an MTRAG import recorded for a conversation (its last task's)."""
    for task in reversed(sub_list(sub_dict(item.extra, "mtrag"), "tasks")):
        if isinstance(task, dict) and isinstance(task.get("collection"), str):
            return str(task["collection"])
    return None


def ragaphene_collection(item: Item) -> str | None:
    """The retriever collection a RAGAPHENE import kept for a conversation."""
    kept = sub_dict(sub_dict(item.extra, "ragaphene"), "conversation")
    name = sub_dict(sub_dict(kept, "retriever"), "collection").get("name")
    return name if isinstance(name, str) else None
