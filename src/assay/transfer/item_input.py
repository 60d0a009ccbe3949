"""A Bundle's turns and evidence as input to the store, anchored in the imported documents.

Kept apart from the import's bookkeeping (batches, reports) in :mod:`assay.transfer.importing`:
this is the one place that decides where an imported passage lands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from assay.corpus.anchoring import EvidenceIn, locate
from assay.errors import InvalidInput
from assay.formats import EvidenceRecord, ItemRecord, TurnRecord
from assay.gold.item_inputs import ItemIn, TurnIn
from assay.gold.item_rows import parse_time
from assay.gold.item_writes import KeptHistory


class DocumentFinder(Protocol):
    """Where the import placed the Bundle's documents and chunks."""

    chunks: dict[str, tuple[str, int, int]]

    def find(self, ref: str) -> Placed | None: ...


@dataclass
class Placed:
    """Where a Bundle document landed, and whether its text differs from what was expected."""

    doc_id: str
    text: str
    changed: bool
    expected: str | None

    def relocate(
        self, start: int | None, end: int | None, text: str | None
    ) -> tuple[int, int] | None:
        if self.expected is not None and start is not None and end is not None:
            if start == 0 and end == len(self.expected):
                return (0, len(self.text)) if self.text else None
            text = text or self.expected[start:end]
        return locate(self.text, text) if text else None


def turn_input(
    turn: TurnRecord, index: int, extra: dict[str, Any], notes: list[str], docs: DocumentFinder
) -> TurnIn:
    """The Bundle turn as input to the store; evidence that cannot be placed is noted, not kept."""
    evidence: list[EvidenceIn] = []
    for number, ev in enumerate(turn.evidence, 1):
        where = f"turn {index}, evidence {number}"
        converted = evidence_input(ev, where, extra, notes, docs)
        if converted is not None:
            evidence.append(converted)
    try:
        return TurnIn(
            query=turn.query,
            rewrite=turn.rewrite,
            query_type=turn.query_type,
            enrichments=turn.enrichments,
            answer=turn.answer,
            alternatives=turn.alternatives,
            original_answer=turn.original_answer,
            generation=turn.generation,
            retrieved=turn.retrieved,
            evidence=evidence,
        )
    except ValidationError as exc:
        raise InvalidInput(f"turn {index}: {first_error(exc)}") from exc


def evidence_input(
    ev: EvidenceRecord, where: str, extra: dict[str, Any], notes: list[str], docs: DocumentFinder
) -> EvidenceIn | None:
    """The Bundle passage anchored in its stored document: by chunk id, by document (moved
    to where its text is now when the document's text changed), or kept unlocated."""
    doc_id: str | None = None
    start, end, text = ev.start, ev.end, ev.text
    anchor = ev.anchor
    origin = ev.origin
    if ev.doc_ref is None and ev.chunk_ids:
        hit = docs.chunks.get(ev.chunk_ids[0])
        if hit is None:
            extra.setdefault("unresolved_chunk_ids", []).append(ev.chunk_ids[0])
            notes.append(f"{where}: chunk {ev.chunk_ids[0]!r} is not in the corpus")
            return None
        doc_id, start, end = hit
        text = ""
    elif ev.doc_ref is not None:
        placed = docs.find(ev.doc_ref)
        if placed is None:
            notes.append(f"{where}: document {ev.doc_ref!r} is not in the project")
            origin, start, end, anchor = "imported", None, None, "unlocated"
        else:
            doc_id = placed.doc_id
            if placed.changed and anchor != "unlocated":
                span = placed.relocate(start, end, text or None)
                start, end = span if span else (None, None)
                anchor = None if span else "stale"
    elif ev.origin != "imported":
        origin = "imported"
    try:
        return EvidenceIn(
            doc_id=doc_id,
            start=start,
            end=end,
            text=text,
            label=ev.label,  # type: ignore[arg-type]
            grade=ev.grade,
            group=ev.group,
            origin=origin,  # type: ignore[arg-type]
            anchor=anchor,  # type: ignore[arg-type]
            author=ev.author,
            created_at=ev.created_at,
        )
    except ValidationError as exc:
        raise InvalidInput(f"{where}: {first_error(exc)}") from exc


def first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    place = ".".join(str(p) for p in error.get("loc", ()))
    return f"field {place!r}: {error.get('msg', 'invalid')}"


def item_input(
    record: ItemRecord, extra: dict[str, Any], notes: list[str], docs: DocumentFinder
) -> tuple[ItemIn, KeptHistory]:
    """The Bundle item as input to the store, with the history an import keeps."""
    turns = [turn_input(t, index, extra, notes, docs) for index, t in enumerate(record.turns, 1)]
    try:
        data = ItemIn(
            kind=record.kind,  # type: ignore[arg-type]
            notes=record.notes,
            origin=record.origin,
            extra=extra,
            turns=turns,
        )
    except ValidationError as exc:
        raise InvalidInput(f"item {record.id!r}: {first_error(exc)}") from exc
    kept = KeptHistory(
        created_at=parse_time(record.created_at),
        updated_at=parse_time(record.updated_at),
        version=record.version,
        status_changes=tuple((c.status, c.actor, c.at) for c in record.status_history),
    )
    return data, kept
