"""Plain records passed between stages.

Records are dataclasses: cheap to build in bulk (a million chunks), serialisable by FastAPI,
and never tied to a database row or a backend object.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePath
from typing import Annotated, Any

from annotated_types import Interval
from typing_extensions import TypedDict

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
    chunks: int = 0
    """Chunks under the project's default chunking."""
    used_by: int = 0
    """Items (conversations among them) whose evidence cites the document."""


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
class OneOf:
    """Marks a ``str`` field that takes one of ``values``: pydantic checks it where records
    come in (as it would a ``Literal``); inside, the field is a plain string."""

    values: tuple[str, ...]

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.literal_schema(list(self.values))


LABELS = ("relevant", "distracting", "irrelevant")
ORIGINS = ("retrieved", "searched", "selected", "imported", "llm-suggestion")
ANCHORS = ("ok", "unlocated", "stale")
KINDS = ("qa", "conversation")
STATUSES = ("draft", "submitted", "accepted", "rejected")
Label = Annotated[str, OneOf(LABELS)]
Origin = Annotated[str, OneOf(ORIGINS)]
Anchor = Annotated[str, OneOf(ANCHORS)]
ItemKind = Annotated[str, OneOf(KINDS)]
ItemStatus = Annotated[str, OneOf(STATUSES)]

# The gold records below are the one shape of an item, a turn, a piece of evidence and a
# retrieved context, for every stage: the store reads and writes them, formats read and write
# them in Bundles, the web and the CLI send and show them. They are plain mutable dataclasses
# (cheap to build by the hundred thousand in an export); pydantic validates them where they
# come in from outside (``assay.gold.items``), with ``extra="forbid"`` so a misspelt key
# is an error, not silently dropped.
_FORBID = {"extra": "forbid"}
"""Pydantic's config for the gold records (a plain dict: records.py must not import pydantic,
which the CLI loads only when a command needs it)."""
INT32 = 2**31 - 1
"""Largest value of an Integer column on PostgreSQL: offsets, grades and groups stay below."""
Offset = Annotated[int | None, Interval(ge=0, le=INT32)]


class Context(TypedDict, total=False):
    """A passage a retriever returned for a turn (what the generator saw), as stored.

    ``doc_id`` and ``chunk_id`` name our document and chunk; ``document_id`` is the id another
    tool gave the passage (RAGAPHENE, MTRAG), ``feedback`` its relevance votes, ``run`` the
    TREC run tag it came from. Keys other
    tools wrote beyond these are kept as they came.
    """

    chunk_id: str | None
    doc_id: str | None
    start: int | None
    end: int | None
    score: float | None
    rank: int | None
    text: str
    title: str
    url: str
    document_id: str
    feedback: dict[str, Any]
    query: str
    run: str


setattr(Context, "__pydantic_config__", {"extra": "allow"})  # noqa: B010 (what pydantic.with_config does)


@dataclass(slots=True)
class Evidence:
    """A passage marked for a turn, anchored to its document by offsets.

    ``anchor`` is ``ok`` when ``document.text[start:end] == text``; ``unlocated`` for imported
    text that could not be found in its document (kept, reported, never dropped); ``stale``
    when the document's text changed under it (flagged, never silently moved). On input,
    offsets win and text alone is located; ``group`` None gives a relevant passage a group of
    its own, ``anchor`` None asks for the check, ``author`` None (or "") means whoever saves.

    In a Bundle, ``doc_id`` is the Bundle document's ``ref``; ``chunk_ids`` names the chunks
    that hold the passage (on import, chunks of a Bundle chunking to resolve; on export, the
    chunks of the chosen chunking it maps to, by the overlap policy).
    """

    __pydantic_config__ = _FORBID

    doc_id: str | None = None
    start: Offset = None
    end: Offset = None
    text: str = ""
    label: Label = "relevant"
    grade: Annotated[int | None, Interval(ge=-INT32, le=INT32)] = None
    group: Offset = None
    origin: Origin = "selected"
    anchor: Anchor | None = None
    author: str | None = None
    created_at: datetime | None = None
    chunk_ids: tuple[str, ...] = ()


@dataclass(slots=True)
class Turn:
    """One question of an item, its reference answer and its evidence."""

    __pydantic_config__ = _FORBID

    query: str = ""
    rewrite: str = ""
    query_type: str = "fact_single"
    enrichments: dict[str, list[str]] = field(default_factory=dict)
    answer: str = ""
    alternatives: list[str] = field(default_factory=list)
    original_answer: str = ""
    generation: dict[str, Any] = field(default_factory=dict)
    retrieved: list[Context] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)


@dataclass(slots=True)
class StatusChange:
    """One status change from an item's history: who made it and when."""

    __pydantic_config__ = _FORBID

    status: ItemStatus
    actor: str
    at: datetime | None = None


@dataclass(slots=True)
class Item:
    """The unit of gold work: one turn (``qa``) or many (``conversation``).

    ``id``, ``status``, ``author``, ``version``, the times and ``status_history`` are the
    store's: an editor sends the other fields (``assay.gold.items.EDITABLE``). In a
    Bundle ``id`` is the id the other tool used.
    """

    __pydantic_config__ = _FORBID

    id: str = ""
    kind: ItemKind = "qa"
    status: ItemStatus = "draft"
    origin: str = "human"
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    author: str = ""
    version: int = 1
    created_at: datetime | None = None
    updated_at: datetime | None = None
    turns: list[Turn] = field(default_factory=list)
    status_history: list[StatusChange] = field(default_factory=list)


COMMENT_TARGETS = ("item", "question", "answer", "evidence")
COMMENT_ANCHORS = ("ok", "moved", "outdated")
CommentTarget = Annotated[str, OneOf(COMMENT_TARGETS)]


@dataclass(slots=True)
class Comment:
    """A remark on an item: general (``target`` ``item``) or anchored to a span of one turn's
    question, answer or evidence passage: ``start``/``end`` are character offsets into that
    text and ``quote`` the text they held when the comment was made. Replies name their
    thread's first comment in ``parent_id`` and carry no anchor of their own.

    ``anchor`` is worked out when comments are read against the item's current text: ``ok``
    (the quote is at its offsets), ``moved`` (found elsewhere: ``start``/``end`` say where it
    is now) or ``outdated`` (not found; the offsets stay as written). A comment is never
    dropped because its text changed. In a Bundle, ``item_id`` is the Bundle item's id and
    ``id``/``parent_id`` number the comments within the Bundle.
    """

    __pydantic_config__ = _FORBID

    id: int = 0
    item_id: str = ""
    parent_id: int | None = None
    author: str = ""
    body: str = ""
    target: CommentTarget = "item"
    turn: Offset = None
    evidence: Offset = None
    start: Offset = None
    end: Offset = None
    quote: str = ""
    resolved: bool = False
    resolved_by: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    anchor: str = "ok"


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
    if value is None or isinstance(value, (str, int, float)):  # most values: at once
        return value
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    kind: Any = type(value)
    names = record_fields(kind)
    if names is not None:
        return {name: to_json(getattr(value, name)) for name in names}
    if isinstance(value, PurePath):
        return str(value)
    return value


@functools.cache
def record_fields(kind: Any) -> tuple[str, ...] | None:
    """The field names of a dataclass type (None for other types), looked up once per type:
    ``dataclasses.fields`` on every value was a tenth of an import's time."""
    if not dataclasses.is_dataclass(kind):
        return None
    return tuple(f.name for f in dataclasses.fields(kind))
