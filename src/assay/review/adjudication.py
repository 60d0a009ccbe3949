"""Adjudication: the annotators' versions of an item side by side, merged into the gold.

An original with copies (overlap) is adjudicated by choosing, per question, which version's
question text, query type (with its enrichments) and answer (with its alternatives) the gold
keeps, and passage by passage which version's evidence (optionally with another label or
group). Everything else comes from the ``base`` version. The merged item is saved onto the
original with the version the adjudicator read (a stale save raises ``StaleItem``, nothing
is lost), as an ``adjudicate`` event in its history, and the original becomes ``accepted``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.gold.item_rows import read_items
from assay.gold.items import editable_copy, get_item, save_item, set_status
from assay.records import LABELS, Evidence, Item, Project, Turn
from assay.review.agreement import HANDED_IN, adjudicated_originals, copy_rows
from assay.store.db import reading, transaction
from assay.store.schema import items
from assay.store.workspace import Workspace

FIELDS = ("query", "query_type", "answer")
"""The fields of a question chosen from one version each."""
KEEP = "keep"
"""A passage choice's ``group`` or ``label``: keep what the chosen version has."""


@dataclass(frozen=True, slots=True)
class Version:
    """One side of the view: the original (``annotator`` "gold") or an annotator's copy."""

    id: str
    annotator: str
    status: str
    item: Item


@dataclass(frozen=True, slots=True)
class Waiting:
    """An original whose copies are all handed in and that nobody adjudicated yet."""

    id: str
    query: str
    annotators: list[str]
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class PassageChoice:
    source: str
    """The id of the version whose passage it is."""
    index: int
    """The passage's position in that version's turn."""
    group: int | str | None = KEEP
    label: str = KEEP


@dataclass(frozen=True, slots=True)
class TurnChoice:
    query: str
    query_type: str
    answer: str
    passages: list[PassageChoice] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Choices:
    base: str
    """The version the rest of the item (notes, other turn fields) comes from."""
    turns: list[TurnChoice]


def waiting_for_adjudication(
    ws: Workspace, project: Project, *, conn: sa.Connection | None = None
) -> list[Waiting]:
    """Originals with at least two copies, all handed in, not yet adjudicated (oldest
    change first)."""
    with reading(ws.engine, conn) as conn:
        by_original: dict[str, list[Any]] = {}
        for row in copy_rows(conn, project):
            by_original.setdefault(row.copy_of, []).append(row)
        done = adjudicated_originals(conn, project)
        ready = {
            original: rows
            for original, rows in by_original.items()
            if len(rows) >= 2 and original not in done and all(r.status in HANDED_IN for r in rows)
        }
        found = conn.execute(
            sa.select(items.c.id, items.c.query, items.c.updated_at)
            .where(items.c.id.in_(list(ready)))
            .order_by(items.c.updated_at, items.c.id)
        )
        return [Waiting(r.id, r.query, [c[3] for c in ready[r.id]], r.updated_at) for r in found]


def versions(
    ws: Workspace, project: Project, item_id: str, *, conn: sa.Connection | None = None
) -> list[Version]:
    """The original (first) and its copies, oldest first; refused for a copy or an item
    with fewer than two copies."""
    with reading(ws.engine, conn) as conn:
        original = get_item(ws, project, item_id, conn=conn)
        if conn.scalar(sa.select(items.c.copy_of).where(items.c.id == item_id)):
            raise InvalidInput(f"item {item_id} is an annotator's copy; adjudicate its original")
        rows = copy_rows(conn, project, item_id)
        if len(rows) < 2:
            raise InvalidInput(
                f"item {item_id} has {len(rows)} annotator cop{'y' if len(rows) == 1 else 'ies'}"
                "; adjudication compares at least two"
            )
        copies = read_items(conn, [r.id for r in rows], project_id=project.id)
        gold = Version(original.id, "gold", original.status, original)
        return [
            gold,
            *(Version(r.id, r[3], r.status, c) for r, c in zip(rows, copies, strict=True)),
        ]


def passage_key(ev: Evidence) -> tuple[Any, ...]:
    """What makes two versions' passages the same passage: document and offsets (text for
    evidence that has none)."""
    return (ev.doc_id, ev.start, ev.end) if ev.start is not None else (ev.doc_id, ev.text)


def differences(sides: Sequence[Version]) -> list[dict[str, Any]]:
    """Per question: each field's value per version and whether the copies differ, and the
    union of the passages with each version's label and group (None: not marked there)."""
    copies = [v for v in sides if v.annotator != "gold"]
    count = max(len(v.item.turns) for v in sides)
    out: list[dict[str, Any]] = []
    for number in range(count):
        turns = {v.id: v.item.turns[number] for v in sides if number < len(v.item.turns)}
        fields = {}
        for name in FIELDS:
            values = {vid: getattr(t, name) for vid, t in turns.items()}
            seen = {values[c.id] for c in copies if c.id in values}
            fields[name] = {"values": values, "differs": len(seen) > 1}
        rows: dict[tuple[Any, ...], dict[str, Any]] = {}
        for vid, t in turns.items():
            for index, ev in enumerate(t.evidence):
                row = rows.setdefault(
                    passage_key(ev), {"doc_id": ev.doc_id, "text": ev.text, "marks": {}}
                )
                row["marks"][vid] = {"index": index, "label": ev.label, "group": ev.group}
        for row in rows.values():
            marks = [row["marks"].get(c.id) for c in copies]
            shown = {None if m is None else m["label"] for m in marks}
            row["differs"] = len(shown) > 1
        out.append({"number": number + 1, "fields": fields, "passages": list(rows.values())})
    return out


def merge(sides: dict[str, Item], choices: Choices) -> Item:
    """The gold item ``choices`` make of the versions in ``sides`` (id → item); refused,
    naming the turn and field, when a choice names a version or passage there is not."""

    def turn_of(source: str, number: int, what: str) -> Turn:
        if source not in sides:
            raise InvalidInput(
                f"turn {number + 1}, {what}: {source!r} is not one of this item's versions "
                f"({', '.join(sides)})"
            )
        found = sides[source].turns
        if number >= len(found):
            raise InvalidInput(f"turn {number + 1}, {what}: version {source} has no such turn")
        return found[number]

    if choices.base not in sides:
        raise InvalidInput(f"base: {choices.base!r} is not one of this item's versions")
    if not choices.turns:
        raise InvalidInput("choose at least one turn")
    merged = editable_copy(sides[choices.base])
    turns: list[Turn] = []
    groups: dict[tuple[str, int], int] = {}
    for number, chosen in enumerate(choices.turns):
        answer = turn_of(chosen.answer, number, "answer")
        typed = turn_of(chosen.query_type, number, "query_type")
        base = sides[choices.base].turns
        rest = base[number] if number < len(base) else answer
        turn = dataclasses.replace(
            editable_copy(Item(turns=[rest])).turns[0],
            query=turn_of(chosen.query, number, "query").query,
            query_type=typed.query_type,
            enrichments=dict(typed.enrichments),
            answer=answer.answer,
            alternatives=list(answer.alternatives),
            evidence=[],
        )
        for picked in chosen.passages:
            found = turn_of(picked.source, number, "passages").evidence
            if not 0 <= picked.index < len(found):
                raise InvalidInput(
                    f"turn {number + 1}, passages: version {picked.source} has no passage "
                    f"{picked.index} (it has {len(found)})"
                )
            turn.evidence.append(_passage(found[picked.index], picked, groups))
        turns.append(turn)
    merged.turns = turns
    return merged


def _passage(ev: Evidence, picked: PassageChoice, groups: dict[tuple[str, int], int]) -> Evidence:
    """A chosen passage for the gold; its group, unless given, renumbered per version (one
    version's group 1 is not another's), its anchor checked again on save."""
    if picked.label != KEEP and picked.label not in LABELS:
        raise InvalidInput(f"label {picked.label!r}: choose one of {', '.join(LABELS)}")
    group = picked.group
    if group == KEEP:
        group = None
        if ev.group is not None:
            group = groups.setdefault((picked.source, ev.group), len(groups) + 1)
    if group is not None and (not isinstance(group, int) or group < 0):
        raise InvalidInput(f"group {group!r}: give a whole number of 0 or more, or null")
    label = ev.label if picked.label == KEEP else picked.label
    return dataclasses.replace(ev, group=group, label=label, anchor=None, chunk_ids=())


def pick_all(sides: Sequence[Version], source: str) -> Choices:
    """Choices that take everything from the version ``source`` (pick one version)."""
    item = next(v.item for v in sides if v.id == source)
    return Choices(
        source,
        [
            TurnChoice(
                source,
                source,
                source,
                [PassageChoice(source, i) for i in range(len(turn.evidence))],
            )
            for turn in item.turns
        ],
    )


def adjudicate(
    ws: Workspace,
    project: Project,
    item_id: str,
    choices: Choices,
    base_version: int,
    *,
    actor: int | None = None,
    conn: sa.Connection | None = None,
) -> Item:
    """Save the merge of ``choices`` onto the original if it is still at ``base_version``
    (else ``StaleItem``), as an ``adjudicate`` event, and accept it: one transaction."""
    with transaction(ws.engine, conn) as conn:
        sides = versions(ws, project, item_id, conn=conn)
        merged = merge({v.id: v.item for v in sides}, choices)
        saved = save_item(
            ws, project, item_id, merged, base_version, author=actor, action="adjudicate", conn=conn
        )
        return set_status(ws, project, item_id, "accepted", saved.version, actor=actor, conn=conn)
