"""Plain records passed between stages.

Records are frozen dataclasses: cheap to build in bulk (a million chunks), serialisable by
FastAPI, and never tied to a database row or a backend object.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePath
from typing import Any

Span = tuple[int, int]
"""A half-open character range ``(start, end)`` into a document's normalised text."""


@dataclass(frozen=True, slots=True)
class Project:
    id: int
    name: str
    language: str
    settings: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    importing_since: datetime | None = None
    """When a running import locked the project (edits wait until it ends), else None."""


@dataclass(frozen=True, slots=True)
class ParseInfo:
    """How a document's text was obtained."""

    parser: str
    pages: int | None = None
    warnings: tuple[str, ...] = ()
    page_starts: tuple[int, ...] = ()
    """Offset in the normalised text where each page begins (PDF only)."""


@dataclass(frozen=True, slots=True)
class Document:
    id: str
    project_id: int
    name: str
    media_type: str
    size: int
    sha256: str
    text: str
    parse_info: ParseInfo
    notes: str
    metadata: dict[str, Any]
    author: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class DocumentSummary:
    """A document without its text, for listings."""

    id: str
    name: str
    media_type: str
    size: int
    sha256: str
    chars: int
    warnings: tuple[str, ...]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Chunking:
    id: int
    project_id: int
    name: str
    method: str
    params: dict[str, Any]
    is_default: bool
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Chunk:
    """A view of a document: ``document.text[start:end]`` under one chunking."""

    chunking_id: int
    chunk_id: str
    doc_id: str
    ordinal: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ChunkText:
    """A chunk with its text, as handed to a search index."""

    chunk_id: str
    doc_id: str
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class IndexedDocument:
    """All chunks of one document, as one unit of index update."""

    doc_id: str
    fingerprint: str
    """Changes whenever the document's text or its chunks change; the index stores it."""
    chunks: tuple[ChunkText, ...]


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result. ``text`` is the whole chunk; ``snippet`` is a short excerpt of it."""

    doc_id: str
    chunk_id: str
    start: int
    end: int
    score: float
    rank: int
    text: str
    snippet: str
    highlights: tuple[Span, ...] = field(default=())
    """Matched terms as ``(start, end)`` offsets into ``snippet``."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """A passage marked for a turn, anchored to its document by offsets.

    ``anchor`` is ``ok`` when ``document.text[start:end] == text``; ``unlocated`` for imported
    text that could not be found in its document (kept, reported, never dropped); ``stale``
    when the document's text changed under it (flagged, never silently moved).
    """

    doc_id: str | None
    start: int | None
    end: int | None
    text: str
    label: str
    grade: int | None
    group: int
    origin: str
    anchor: str
    author: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Turn:
    ordinal: int
    query: str
    rewrite: str
    query_type: str
    enrichments: dict[str, list[str]]
    answer: str
    alternatives: tuple[str, ...]
    original_answer: str
    generation: dict[str, Any]
    retrieved: tuple[dict[str, Any], ...]
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True, slots=True)
class Item:
    """The unit of gold work: one turn (``qa``) or many (``conversation``)."""

    id: str
    project_id: int
    kind: str
    status: str
    origin: str
    notes: str
    extra: dict[str, Any]
    author: str
    version: int
    created_at: datetime
    updated_at: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class ItemSummary:
    id: str
    kind: str
    status: str
    origin: str
    query: str
    query_type: str
    turn_count: int
    evidence_count: int
    author: str
    version: int
    updated_at: datetime
    needs_review: bool = False
    """Some evidence cannot be used as gold (its document changed): see assay.corpus.anchoring."""


def to_json(value: Any) -> Any:
    """Records (and containers of them) as JSON-ready values; datetimes in ISO 8601."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    return value
