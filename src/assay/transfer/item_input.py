"""A Bundle's turns and evidence as input to the store, anchored in the imported documents.

Kept apart from the import's bookkeeping (batches, reports) in :mod:`assay.transfer.importing`:
this is the one place that decides where an imported passage lands.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import sqlalchemy as sa

from assay.corpus.anchoring import locate
from assay.corpus.documents import get_document, get_document_by_name
from assay.errors import InvalidInput, NotFound
from assay.gold.items import checked_evidence
from assay.records import KINDS, Evidence, Item, Project, Turn
from assay.store.workspace import Workspace


class DocumentFinder(Protocol):
    """Where the import placed the Bundle's documents and chunks."""

    chunks: dict[str, tuple[str, int, int]]

    def find(self, ref: str) -> Placed | None: ...


@dataclass
class Placed:
    """Where a Bundle document landed, and whether its text differs from what was expected.
    The texts are kept only for a document that changed (its passages are relocated): an
    import of many documents does not hold them all."""

    doc_id: str
    text: str = ""
    changed: bool = False
    expected: str | None = None

    def relocate(
        self, start: int | None, end: int | None, text: str | None
    ) -> tuple[int, int] | None:
        if self.expected is not None and start is not None and end is not None:
            if start == 0 and end == len(self.expected):
                return (0, len(self.text)) if self.text else None
            text = text or self.expected[start:end]
        return locate(self.text, text) if text else None


@dataclass
class PlacedDocuments:
    """The Bundle's documents and chunks as the import placed them, and the documents already
    in the project that the Bundle's references name (by id or name) once looked up (by a
    :class:`DocumentLookup`). Plain data: a process that prepares items gets a copy."""

    docs: dict[str, Placed] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)
    """References looked up in vain."""
    chunks: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    """Chunk id → (document id, start, end) of the Bundle's imported chunkings."""


class DocumentLookup:
    """The :class:`DocumentFinder` of an import: :class:`PlacedDocuments`, and what they do not
    hold looked up with the connection ``connection`` gives (the import's batch sees what the
    import wrote; a process that prepares items has a connection of its own)."""

    def __init__(
        self,
        placed: PlacedDocuments,
        ws: Workspace,
        project: Project,
        connection: Callable[[], sa.Connection],
    ) -> None:
        self.placed = placed
        self.chunks = placed.chunks
        self.ws = ws
        self.project = project
        self.connection = connection

    def find(self, ref: str) -> Placed | None:
        """The Bundle document ``ref`` as placed, or a document already in the project that
        the reference names (by id or name)."""
        docs, missing = self.placed.docs, self.placed.missing
        if ref in docs or ref in missing:
            return docs.get(ref)
        for lookup in (get_document, get_document_by_name):
            try:
                doc = lookup(self.ws, self.project, ref, conn=self.connection())
            except (NotFound, InvalidInput):
                continue
            placed = docs[ref] = Placed(doc.id)
            return placed
        missing.add(ref)
        return None


def turn_input(
    turn: Turn, index: int, extra: dict[str, Any], notes: list[str], docs: DocumentFinder
) -> Turn:
    """The Bundle turn as input to the store; evidence that cannot be placed is noted, not kept."""
    evidence: list[Evidence] = []
    for number, ev in enumerate(turn.evidence, 1):
        where = f"turn {index}, evidence {number}"
        converted = evidence_input(ev, where, extra, notes, docs)
        if converted is not None:
            evidence.append(converted)
    return dataclasses.replace(turn, evidence=evidence)


def evidence_input(
    ev: Evidence, where: str, extra: dict[str, Any], notes: list[str], docs: DocumentFinder
) -> Evidence | None:
    """The Bundle passage anchored in its stored document: by chunk id, by document (moved
    to where its text is now when the document's text changed), or kept unlocated."""
    doc_id: str | None = None
    start, end, text = ev.start, ev.end, ev.text
    anchor = ev.anchor
    origin = ev.origin
    if ev.doc_id is None and ev.chunk_ids:
        hit = docs.chunks.get(ev.chunk_ids[0])
        if hit is None:
            extra.setdefault("unresolved_chunk_ids", []).append(ev.chunk_ids[0])
            notes.append(f"{where}: chunk {ev.chunk_ids[0]!r} is not in the corpus")
            return None
        doc_id, start, end = hit
        text = ""
    elif ev.doc_id is not None:
        placed = docs.find(ev.doc_id)
        if placed is None:
            notes.append(f"{where}: document {ev.doc_id!r} is not in the project")
            origin, start, end, anchor = "imported", None, None, "unlocated"
        else:
            doc_id = placed.doc_id
            if placed.changed and anchor != "unlocated":
                span = placed.relocate(start, end, text or None)
                start, end = span if span else (None, None)
                anchor = None if span else "stale"
    elif ev.origin != "imported":
        origin = "imported"
    fields = {
        **{name: getattr(ev, name) for name in Evidence.__dataclass_fields__},
        "doc_id": doc_id,
        "start": start,
        "end": end,
        "text": text,
        "origin": origin,
        "anchor": anchor,
        "chunk_ids": (),
    }
    return checked_evidence(fields, where)


def item_input(record: Item, extra: dict[str, Any], notes: list[str], docs: DocumentFinder) -> Item:
    """The Bundle item as input to the store: its evidence placed in the stored documents, its
    dates, version and status changes kept (the store keeps them on import)."""
    if record.kind not in KINDS:
        raise InvalidInput(f"item {record.id!r}: kind {record.kind!r} is not one of {KINDS}")
    turns = [turn_input(t, index, extra, notes, docs) for index, t in enumerate(record.turns, 1)]
    return dataclasses.replace(record, extra=extra, turns=turns)
