"""Items, turns, evidence and comments as JSON objects (native, csv and hf share this shape)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from assay.errors import InvalidInput
from assay.formats.common import (
    as_object,
    field_dict,
    field_int,
    field_list,
    field_str,
    iso_text,
    one_of,
    parse_iso,
    str_list,
)
from assay.formats.jsontext import type_name
from assay.records import (
    ANCHORS,
    COMMENT_TARGETS,
    KINDS,
    LABELS,
    ORIGINS,
    STATUSES,
    Comment,
    Evidence,
    Item,
    StatusChange,
    Turn,
)

T = TypeVar("T")


def evidence_to_json(ev: Evidence, doc: Callable[[str | None], str | None]) -> dict[str, Any]:
    return {
        "doc": doc(ev.doc_id),
        "start": ev.start,
        "end": ev.end,
        "text": ev.text,
        "label": ev.label,
        "grade": ev.grade,
        "group": ev.group,
        "origin": ev.origin,
        "anchor": ev.anchor,
        "author": ev.author,
        "created_at": iso_text(ev.created_at) or None,
    }


def turn_to_json(turn: Turn, doc: Callable[[str | None], str | None]) -> dict[str, Any]:
    return {
        "query": turn.query,
        "rewrite": turn.rewrite,
        "query_type": turn.query_type,
        "enrichments": turn.enrichments,
        "answer": turn.answer,
        "alternatives": turn.alternatives,
        "original_answer": turn.original_answer,
        "generation": turn.generation,
        "retrieved": turn.retrieved,
        "evidence": [evidence_to_json(ev, doc) for ev in turn.evidence],
    }


ITEM_KEYS = (
    "id", "kind", "status", "origin", "notes", "extra", "author", "created_at", "updated_at",
    "version", "status_history", "turns",
)  # fmt: skip
"""The fields :func:`item_to_json` writes (what :func:`item_from_json` reads)."""
UNKNOWN_KEYS = "unknown_fields"
"""Where a reader keeps an item's fields it does not know (``item.extra``)."""


def item_to_json(item: Item, doc: Callable[[str | None], str | None]) -> dict[str, Any]:
    return {
        "id": item.id,
        "kind": item.kind,
        "status": item.status,
        "origin": item.origin,
        "notes": item.notes,
        "extra": item.extra,
        "author": item.author,
        "created_at": iso_text(item.created_at),
        "updated_at": iso_text(item.updated_at),
        "version": item.version,
        "status_history": [
            {"status": c.status, "actor": c.actor, "at": iso_text(c.at)}
            for c in item.status_history
        ],
        "turns": [turn_to_json(t, doc) for t in item.turns],
    }


def evidence_from_json(value: Any, where: str) -> Evidence:
    obj = as_object(value, where)
    start = field_int(obj, "start", where)
    end = field_int(obj, "end", where)
    if (start is None) != (end is None) or (
        start is not None and end is not None and not 0 <= start < end
    ):
        raise InvalidInput(f"{where}: fields 'start' and 'end' must be 0 <= start < end")
    doc = obj.get("doc")
    if doc is not None and not isinstance(doc, str):
        raise InvalidInput(f"{where}: field 'doc' must be a string, found {type_name(doc)}")
    group = field_int(obj, "group", where)
    if group is not None and group < 0:
        raise InvalidInput(f"{where}: field 'group' must not be negative")
    anchor = obj.get("anchor")
    if anchor is not None:
        anchor = one_of(field_str(obj, "anchor", where), ANCHORS, "anchor", where)
    author = obj.get("author")
    created = obj.get("created_at")
    return Evidence(
        doc_id=doc,
        start=start,
        end=end,
        text=field_str(obj, "text", where),
        label=one_of(field_str(obj, "label", where, "relevant"), LABELS, "label", where),
        grade=field_int(obj, "grade", where),
        group=group,
        origin=one_of(field_str(obj, "origin", where, "imported"), ORIGINS, "origin", where),
        anchor=anchor,
        author=field_str(obj, "author", where) if author is not None else None,
        created_at=parse_iso(field_str(obj, "created_at", where)) if created is not None else None,
    )


def turn_from_json(value: Any, where: str) -> Turn:
    obj = as_object(value, where)
    enrichments: dict[str, list[str]] = {}
    for key, values in field_dict(obj, "enrichments", where).items():
        enrichments[key] = str_list(values, f"{where}, enrichment {key!r}")
    retrieved = field_list(obj, "retrieved", where)
    for index, entry in enumerate(retrieved, 1):
        as_object(entry, f"{where}, retrieved {index}")
    return Turn(
        query=field_str(obj, "query", where),
        rewrite=field_str(obj, "rewrite", where),
        query_type=field_str(obj, "query_type", where, "fact_single") or "fact_single",
        enrichments=enrichments,
        answer=field_str(obj, "answer", where),
        alternatives=str_list(field_list(obj, "alternatives", where), f"{where}, alternatives"),
        original_answer=field_str(obj, "original_answer", where),
        generation=field_dict(obj, "generation", where),
        retrieved=retrieved,
        evidence=_each(obj, "evidence", where, "evidence", evidence_from_json),
    )


def item_from_json(value: Any, where: str) -> Item:
    obj = as_object(value, where)
    item_id = field_str(obj, "id", where)
    if not item_id.strip():
        raise InvalidInput(f"{where}: field 'id' must not be empty")
    kind = one_of(field_str(obj, "kind", where, "qa"), KINDS, "kind", where)
    turns = _each(obj, "turns", where, "turn", turn_from_json)
    if not turns:
        raise InvalidInput(f"{where}: field 'turns' must hold at least one turn")
    if kind == "qa" and len(turns) != 1:
        raise InvalidInput(f"{where}: a 'qa' item has exactly one turn, not {len(turns)}")
    return Item(
        id=item_id,
        kind=kind,
        status=one_of(field_str(obj, "status", where, "draft"), STATUSES, "status", where),
        origin=field_str(obj, "origin", where, "imported") or "imported",
        notes=field_str(obj, "notes", where),
        extra=field_dict(obj, "extra", where),
        author=field_str(obj, "author", where),
        created_at=parse_iso(field_str(obj, "created_at", where)),
        updated_at=parse_iso(field_str(obj, "updated_at", where)),
        version=max(field_int(obj, "version", where) or 1, 1),
        turns=turns,
        status_history=_each(obj, "status_history", where, "status change", _status_change),
    )


def _each(
    obj: dict[str, Any], key: str, where: str, what: str, read: Callable[[Any, str], T]
) -> list[T]:
    """Field ``key``: a list read entry by entry, each error naming ``{what} {number}``."""
    entries = field_list(obj, key, where)
    return [read(value, f"{where}, {what} {number}") for number, value in enumerate(entries, 1)]


def _status_change(value: Any, where: str) -> StatusChange:
    obj = as_object(value, where)
    return StatusChange(
        status=one_of(field_str(obj, "status", where), STATUSES, "status", where),
        actor=field_str(obj, "actor", where),
        at=parse_iso(field_str(obj, "at", where)),
    )


def comment_to_json(comment: Comment) -> dict[str, Any]:
    """A comment as the native file holds it (``anchor`` is worked out when read, not kept)."""
    return {
        "id": comment.id,
        "item": comment.item_id,
        "parent": comment.parent_id,
        "author": comment.author,
        "body": comment.body,
        "target": comment.target,
        "turn": comment.turn,
        "evidence": comment.evidence,
        "start": comment.start,
        "end": comment.end,
        "quote": comment.quote,
        "resolved": comment.resolved,
        "resolved_by": comment.resolved_by,
        "created_at": iso_text(comment.created_at) or None,
        "updated_at": iso_text(comment.updated_at) or None,
    }


def comment_from_json(value: Any, where: str) -> Comment:
    obj = as_object(value, where)
    numbers = {k: field_int(obj, k, where) for k in ("id", "parent", "turn", "evidence")}
    start, end = field_int(obj, "start", where), field_int(obj, "end", where)
    if (start is None) != (end is None) or (
        start is not None and end is not None and not 0 <= start < end
    ):
        raise InvalidInput(f"{where}: fields 'start' and 'end' must be 0 <= start < end")
    if numbers["id"] is None:
        raise InvalidInput(f"{where}: field 'id' must be a whole number")
    resolved = obj.get("resolved", False)
    if not isinstance(resolved, bool):
        raise InvalidInput(f"{where}: field 'resolved' must be true or false")
    return Comment(
        id=numbers["id"],
        item_id=field_str(obj, "item", where),
        parent_id=numbers["parent"],
        author=field_str(obj, "author", where),
        body=field_str(obj, "body", where),
        target=one_of(field_str(obj, "target", where, "item"), COMMENT_TARGETS, "target", where),
        turn=numbers["turn"],
        evidence=numbers["evidence"],
        start=start,
        end=end,
        quote=field_str(obj, "quote", where),
        resolved=resolved,
        resolved_by=field_str(obj, "resolved_by", where),
        created_at=parse_iso(field_str(obj, "created_at", where)),
        updated_at=parse_iso(field_str(obj, "updated_at", where)),
    )
