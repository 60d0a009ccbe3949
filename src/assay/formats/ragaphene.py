"""RAGAPHENE conversation JSON: write schema version 2, read versions 1 and 2.

A file holds one conversation object or a list of them. Each conversation becomes one item of
kind ``conversation``; a user message and the agent message after it form a turn. An agent
message's ``contexts`` become the turn's ``retrieved`` list (kept as written) and its evidence:
``feedback.relevant[<user>].value`` "yes" is a relevant passage, "no" an irrelevant one, and
the voter is the evidence's author. The contexts' texts make up the documents (one per
``document_id``, its distinct context texts joined by blank lines) so evidence anchors by
offsets. Review comments become the Bundle's comments and the review status the item's
(:mod:`assay.formats.ragaphene_review`). What our model has no field for (timestamps,
retriever and generator settings, the status history, response ratings) is kept in
``item.extra["ragaphene"]`` and written back, so RAGAPHENE → Assay → RAGAPHENE compares equal
apart from the normalisations listed in docs/formats.md.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from assay.errors import InvalidInput
from assay.formats import Bundle, Issue
from assay.formats.common import FirstSeen, as_object, field_dict, field_list, field_str, sub_dict
from assay.formats.contexts import (
    ContextCorpus,
    document_ids,
    is_number,
    read_contexts,
    sub_list,
    unix_time,
    write_contexts,
)
from assay.formats.dialogue import (
    DEFAULT_QUERY_TYPE,
    QUERY_TYPE,
    derived_metadata,
    mtrag_collection,
    mtrag_generator,
    mtrag_metadata,
    query_type_of,
)
from assay.formats.jsontext import loads, read_text, type_name
from assay.formats.ragaphene_review import (
    MessagePlace,
    context_places,
    conversation_status,
    item_status,
    read_comments,
    write_comments,
)
from assay.formats.ragaphene_v1 import SCHEMA_VERSION, migrate_v1
from assay.records import Comment, Item, Turn

SPEAKERS = ("user", "agent")
TOP_KEYS = ("schema_version", "author", "retriever", "generator", "messages", "status")
TOP_KEYS_MORE = ("status_history", "comments")


# ---------------------------------------------------------------- reading


def read(path: Path) -> Bundle:
    where = str(path)
    data = loads(read_text(path), where)
    conversations = data if isinstance(data, list) else [data]
    corpus = ContextCorpus()
    items: list[Item] = []
    comments: list[Comment] = []
    issues: list[Issue] = []
    seen = FirstSeen("this conversation", issues)
    numbers = itertools.count(1)
    for index, value in enumerate(conversations, 1):
        here = f"{where}: conversation {index}" if isinstance(data, list) else where
        found: list[Comment] = []
        try:
            item = conversation_item(value, here, corpus, comments=found, numbers=numbers)
        except InvalidInput as exc:
            issues.append(Issue(f"conversation {index}", str(exc)))
            continue
        if seen.first(item.id, f"conversation {index}"):
            if isinstance(data, list):  # a list of one is written back as a list
                item.extra["ragaphene"]["listed"] = True
            items.append(item)
            comments.extend(found)
    return Bundle(
        documents=corpus.documents(),
        items=items,
        provenance={"format": "ragaphene", "path": str(path)},
        issues=issues,
        comments=comments,
    )


def conversation_item(
    value: Any,
    where: str,
    corpus: ContextCorpus,
    *,
    comments: list[Comment] | None = None,
    numbers: Iterator[int] | None = None,
) -> Item:
    """One conversation (v1 or v2) as an item of kind ``conversation``. With ``comments``,
    its review comments are added there as Assay comments (ids from ``numbers``; see
    :mod:`assay.formats.ragaphene_comments`) and only those that have no place among them
    stay in ``extra``; without, all stay there."""
    raw = as_object(value, where)
    version = raw.get("schema_version", 1)
    if isinstance(version, bool) or not isinstance(version, int):
        raise InvalidInput(f"{where}: field 'schema_version' must be a whole number")
    if version > SCHEMA_VERSION:
        raise InvalidInput(
            f"{where}: schema version {version} is newer than this reader knows ({SCHEMA_VERSION})"
        )
    conversation = migrate_v1(raw) if version < SCHEMA_VERSION else raw
    if not isinstance(raw.get("messages"), list):
        raise InvalidInput(f"{where}: field 'messages' must be a list of messages")
    turns: list[Turn] = []
    metas: list[dict[str, Any]] = []
    places: list[MessagePlace] = []
    for index, value in enumerate(conversation["messages"], 1):
        here = f"{where}, message {index}"
        message = as_object(value, here)
        speaker = message.get("speaker")
        if speaker not in SPEAKERS:
            raise InvalidInput(f"{here}: field 'speaker' must be 'user' or 'agent'")
        text = field_str(message, "text", here)
        meta = _message_meta(message, here)
        if speaker == "user" or not turns or "agent" in metas[-1]:
            turns.append(Turn())
            metas.append({})
        turn = turns[-1]
        if speaker == "user":
            turn.query = text
            turn.enrichments = _enrichments(message, here)
            turn.query_type = query_type_of(message) or turn.query_type
        else:
            turn.answer = text
            turn.original_answer = field_str(message, "original_text", here)
            turn.alternatives = [a["text"] for a in _alternatives(message, here)]
            turn.retrieved, turn.evidence = read_contexts(
                field_list(message, "contexts", here), here, corpus
            )
        metas[-1][speaker] = meta
        places.append(MessagePlace(len(turns) - 1, "question" if speaker == "user" else "answer"))
    status = field_str(conversation, "status", where, "created")
    history = field_list(conversation, "status_history", where)
    field_list(conversation, "comments", where)
    kept = {k: v for k, v in conversation.items() if k not in ("messages", "schema_version")}
    notes = kept.pop("notes") if isinstance(kept.get("notes"), str) else ""
    digest = hashlib.md5(
        json.dumps(raw, sort_keys=True, default=str).encode(), usedforsecurity=False
    ).hexdigest()
    item = Item(
        origin="imported",
        id=digest,
        kind="conversation",
        status=item_status(status, history),
        author=field_str(conversation, "author", where),
        notes=notes,
        extra={"ragaphene": {"conversation": kept, "messages": metas, "version": version}},
        turns=turns,
    )
    if comments is not None and "comments" in kept:
        mapped, kept["comments"] = read_comments(
            kept["comments"], item, places, numbers or itertools.count(1)
        )
        comments.extend(mapped)
    return item


def _message_meta(message: dict[str, Any], where: str) -> dict[str, Any]:
    """What a message holds beyond our turn fields, for the way back."""
    meta = {
        k: copy.deepcopy(v)
        for k, v in message.items()
        if k not in ("speaker", "text", "contexts", "original_text")
    }
    if "original_text" in message:
        meta["has_original_text"] = True
    if message.get("speaker") == "user":
        meta.pop("enrichments", None)
        if query_type_of(meta):
            meta.pop(QUERY_TYPE)
    return meta


def _enrichments(message: dict[str, Any], where: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for key, values in field_dict(message, "enrichments", where).items():
        if values is None:
            continue
        if isinstance(values, str):
            values = [values]
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise InvalidInput(f"{where}: enrichment {key!r} must be a list of strings")
        found[key] = list(values)
    return found


def _alternatives(message: dict[str, Any], where: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for index, value in enumerate(field_list(message, "alternatives", where), 1):
        here = f"{where}, alternative {index}"
        if isinstance(value, str):
            value = {"text": value}
        alternative = as_object(value, here)
        if not isinstance(alternative.get("text"), str):
            raise InvalidInput(
                f"{here}: field 'text' must be a string, found {type_name(alternative.get('text'))}"
            )
        found.append(alternative)
    return found


# ---------------------------------------------------------------- writing


def write(bundle: Bundle, path: Path, **_: Any) -> list[str]:
    notes: list[str] = []
    doc_ids = document_ids(bundle)
    comments: dict[str, list[Comment]] = {}
    for comment in bundle.comments:
        comments.setdefault(comment.item_id, []).append(comment)
    conversations = [
        item_conversation(item, doc_ids, notes, comments.get(item.id, ())) for item in bundle.items
    ]
    listed = any(sub_dict(i.extra, "ragaphene").get("listed") for i in bundle.items)
    payload: Any = conversations[0] if len(conversations) == 1 and not listed else conversations
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return notes


def item_conversation(
    item: Item,
    doc_ids: dict[str, str],
    notes: list[str] | None = None,
    comments: Sequence[Comment] = (),
) -> dict[str, Any]:
    """One item as a schema-v2 conversation object, with its ``comments``."""
    info = sub_dict(item.extra, "ragaphene")
    kept = sub_dict(info, "conversation")
    metas = sub_list(info, "messages")
    author = str(kept["author"]) if isinstance(kept.get("author"), str) else item.author
    fallback_time = unix_time(item.updated_at or item.created_at)
    said = mtrag_metadata(item) if not info else []  # an MTRAG import's authors and times
    model = mtrag_generator(said)
    messages: list[dict[str, Any]] = []
    edited = False
    at: dict[tuple[int, str], int] = {}  # where each turn's question and answer were written
    at_context: dict[tuple[int, int], tuple[int, int]] = {}
    for index, turn in enumerate(item.turns):
        meta = metas[index] if index < len(metas) and isinstance(metas[index], dict) else {}
        user_meta, agent_meta = sub_dict(meta, "user"), sub_dict(meta, "agent")
        recorded = said[index] if index < len(said) else {}
        if turn.query or user_meta:
            message = _user_message(turn, user_meta, _time(recorded.get("user"), fallback_time))
            at[(index, "question")] = len(messages)
            messages.append(_with_metadata(message, recorded.get("user"), author, model))
        if turn.answer or turn.retrieved or turn.evidence or agent_meta:
            when = _time(recorded.get("agent"), fallback_time)
            message = _agent_message(turn, agent_meta, doc_ids, author, when)
            edited = edited or "original_text" in message
            at[(index, "answer")] = len(messages)
            at_context.update(
                context_places(index, len(messages), turn.evidence, message["contexts"], doc_ids)
            )
            messages.append(_with_metadata(message, recorded.get("agent"), author, model))
    if notes is not None:
        notes.extend(_refusals(item, messages))
    if any(d.label == "distracting" for t in item.turns for d in t.evidence) and notes is not None:
        notes.append(f"item {item.id}: distracting passages are 'no' votes marked 'label: "
                     "distracting' (RAGAPHENE reads the 'no')")  # fmt: skip
    history = [copy.deepcopy(h) for h in kept.get("status_history") or [] if isinstance(h, dict)]
    status = conversation_status(item, kept, history, edited)
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if "author" in kept or not info:  # one read without an author stays so
        out["author"] = author
    for key in ("retriever", "generator"):
        if key in kept:
            out[key] = copy.deepcopy(kept[key])
    collection = mtrag_collection(item) if not info else None
    if "retriever" not in out and collection:
        out["retriever"] = {"collection": {"name": collection}}
    if "generator" not in out:
        generator = _generator(item) or ({"id": model, "name": model} if model else {})
        if generator:
            out["generator"] = generator
    out["messages"] = messages
    remarks = write_comments(comments, kept.get("comments") or [], at, at_context)
    for key, value in (("status", status), ("status_history", history), ("comments", remarks)):
        if key in kept or not info or value not in ("created", []):  # read without: stays so
            out[key] = value
    if item.notes:  # RAGAPHENE has no place for notes: a key of their own
        out["notes"] = item.notes
    out.update(
        {k: copy.deepcopy(v) for k, v in kept.items() if k not in (*TOP_KEYS, *TOP_KEYS_MORE)}
    )
    return out


def _time(metadata: dict[str, Any] | None, fallback: int) -> Any:
    stamp = (metadata or {}).get("created_at")
    return stamp if is_number(stamp) else fallback


def _with_metadata(
    message: dict[str, Any], metadata: dict[str, Any] | None, author: str, model: str
) -> dict[str, Any]:
    """An MTRAG message's metadata, kept on the message when RAGAPHENE would not derive the
    same from the conversation's author, generator and the message's timestamp."""
    if metadata:
        derived = derived_metadata(message["speaker"], author, model, message["timestamp"])
        if metadata != derived:
            message["metadata"] = copy.deepcopy(metadata)
    return message


def _refusals(item: Item, messages: list[dict[str, Any]]) -> list[str]:
    """What RAGAPHENE's import would refuse in the written conversation: empty messages and
    answers without contexts."""
    found: list[str] = []
    empty = [i for i, m in enumerate(messages, 1) if not m.get("text")]
    if empty:
        found.append(
            f"item {item.id}: message(s) {', '.join(map(str, empty))} are empty; "
            "RAGAPHENE's import refuses empty messages"
        )
    bare = [i for i, m in enumerate(messages, 1) if m["speaker"] == "agent" and not m["contexts"]]
    if bare:
        found.append(
            f"item {item.id}: answer message(s) {', '.join(map(str, bare))} have no passages; "
            "RAGAPHENE's import needs contexts on every answer"
        )
    return found


def _user_message(turn: Turn, meta: dict[str, Any], when: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"speaker": "user", "text": turn.query}
    message["timestamp"] = meta.get("timestamp", when)
    if turn.query_type != DEFAULT_QUERY_TYPE:
        message[QUERY_TYPE] = turn.query_type
    rest = {k: v for k, v in meta.items() if k not in ("timestamp", "has_original_text")}
    if turn.enrichments:
        message["enrichments"] = copy.deepcopy(turn.enrichments)
    message.update(copy.deepcopy(rest))
    return message


def _agent_message(
    turn: Turn,
    meta: dict[str, Any],
    doc_ids: dict[str, str],
    author: str,
    when: Any,
) -> dict[str, Any]:
    message: dict[str, Any] = {"speaker": "agent", "text": turn.answer}
    message["timestamp"] = meta.get("timestamp", when)
    message["contexts"] = write_contexts(turn.retrieved, turn.evidence, doc_ids, author or "")
    if turn.original_answer and (
        turn.original_answer != turn.answer or meta.get("has_original_text")
    ):
        message["original_text"] = turn.original_answer
    if "feedback" in meta:
        message["feedback"] = copy.deepcopy(meta["feedback"])
    if "enrichments" in meta:
        message["enrichments"] = copy.deepcopy(meta["enrichments"])
    raw_alternatives = meta.get("alternatives")
    raw_alternatives = raw_alternatives if isinstance(raw_alternatives, list) else []
    if turn.alternatives or raw_alternatives:
        by_text = {a.get("text"): a for a in raw_alternatives if isinstance(a, dict)}
        message["alternatives"] = [
            copy.deepcopy(by_text.get(text, {"text": text})) for text in turn.alternatives
        ]
    skip = ("timestamp", "feedback", "enrichments", "alternatives", "has_original_text")
    message.update({k: copy.deepcopy(v) for k, v in meta.items() if k not in skip})
    return message


def _generator(item: Item) -> dict[str, Any]:
    """A generator block from the settings Assay recorded with a generated answer."""
    for turn in item.turns:
        generation = turn.generation
        if generation.get("model"):
            return {
                "id": str(generation["model"]),
                "name": str(generation["model"]),
                "mode": "chat_completion",
                "settings": {
                    "prompt": {"hash": generation.get("prompt_hash", "")},
                    "parameters": copy.deepcopy(generation.get("params") or {}),
                },
                "connector": {"name": str(generation.get("kind") or "")},
            }
    return {}
