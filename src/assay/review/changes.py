"""What a reviewer changed: a field-level diff of two versions of an item.

Both sides are items as JSON values (``assay.records.to_json`` of a stored item, or the
``before`` an event kept). Only what a person edits is compared: the item's notes and, per
turn, the question, its rewrite, query type, enrichments, answer, alternative answers and
evidence (by document, offsets, text, label, grade and group; who marked it and when do not
count). A field is named like ``turns[0].answer``; a turn added or removed is ``turns[2]``.
"""

from __future__ import annotations

from typing import Any

TURN_FIELDS = ("query", "rewrite", "query_type", "enrichments", "answer", "alternatives")
EVIDENCE_FACETS = ("doc_id", "start", "end", "text", "label", "grade", "group")


def _evidence(turn: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: ev.get(k) for k in EVIDENCE_FACETS} for ev in turn.get("evidence") or []]


def _turn_view(turn: dict[str, Any]) -> dict[str, Any]:
    """A turn as a diff shows one added or removed: its question and answer."""
    return {"query": turn.get("query", ""), "answer": turn.get("answer", "")}


def item_changes(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """The edited fields of ``after`` against ``before`` as ``{"field", "before", "after"}``,
    in the order the editor shows them; empty when nothing a person edits differs."""
    changes: list[dict[str, Any]] = []

    def note(field: str, old: Any, new: Any) -> None:
        if old != new:
            changes.append({"field": field, "before": old, "after": new})

    old_turns = before.get("turns") or []
    new_turns = after.get("turns") or []
    for index in range(max(len(old_turns), len(new_turns))):
        if index >= len(old_turns):
            note(f"turns[{index}]", None, _turn_view(new_turns[index]))
            continue
        if index >= len(new_turns):
            note(f"turns[{index}]", _turn_view(old_turns[index]), None)
            continue
        old, new = old_turns[index], new_turns[index]
        for name in TURN_FIELDS:
            note(f"turns[{index}].{name}", old.get(name), new.get(name))
        note(f"turns[{index}].evidence", _evidence(old), _evidence(new))
    note("notes", before.get("notes", ""), after.get("notes", ""))
    return changes
