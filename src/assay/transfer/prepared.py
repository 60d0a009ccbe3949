"""Imported items made ready to write: each Bundle item checked, its passages located in their
documents, its rows built and converted for the driver, writing nothing until
:func:`write_prepared`.

This is the one place that decides where an imported passage lands (:func:`item_input`); the
import's bookkeeping (batches, reports) is in :mod:`assay.transfer.importing`. The same
preparing (:class:`ItemPreparer`) runs in the import's own process (small files) and in a
second process that prepares while the first writes (:mod:`assay.transfer.item_pipeline`); it
only reads (the documents' texts, which ids are taken), so either way what reaches the writer
is the same :class:`PreparedGroup` of plain values, written in one statement per table. Only
the turns' ids are taken at write time, by the writer (they come from the database).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, cast

import sqlalchemy as sa

from assay.corpus.anchoring import DocumentTexts, locate
from assay.corpus.documents import get_document, get_document_by_name
from assay.errors import AssayError, Conflict, InvalidInput, NotFound
from assay.formats.common import is_uuid
from assay.gold.items import NewItem, checked_evidence, new_item
from assay.records import KINDS, Evidence, Item, Project, Turn
from assay.store.bulk import Processor, RowFormat, insert_converted, next_ids
from assay.store.import_lock import check_writable
from assay.store.schema import events, evidence, items, turns
from assay.store.workspace import Workspace
from assay.transfer.import_actors import ImportAuthors


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


ITEM_GROUP = 100
"""Items prepared one by one and then written together, in one statement per table."""


ITEM_COLUMNS = (
    "id", "project_id", "kind", "status", "origin", "query", "query_type", "turn_count",
    "evidence_count", "search_text", "notes", "extra", "author_id", "version", "created_at",
    "updated_at",
)  # fmt: skip
"""The item row :func:`assay.gold.items.new_item` builds."""


TURN_COLUMNS = (
    "item_id", "ordinal", "query", "rewrite", "query_type", "enrichments", "answer",
    "alternatives", "original_answer", "generation", "retrieved",
)  # fmt: skip
"""A turn's row as :func:`assay.gold.item_rows.item_rows` builds it (its id comes later)."""


EVIDENCE_COLUMNS = (
    "ordinal", "doc_id", "start", "end", "text", "label", "grade", "group_no", "origin",
    "anchor", "author_id", "created_at",
)  # fmt: skip
"""An evidence row as :func:`assay.gold.item_rows.item_rows` builds it (its turn comes later)."""


EVENT_COLUMNS = ("project_id", "item_id", "actor_id", "action", "before", "after", "at")


Row = tuple[Any, ...]


class ItemTuples(NamedTuple):
    """One item's rows as the driver takes them."""

    item: Row
    turns: list[tuple[Row, list[Row]]]
    """Each turn's row (without its id) and its evidence rows (without their turn)."""
    events: list[Row]


class PreparedItem(NamedTuple):
    """One Bundle item as the import took it: what the report says, and its rows unless it
    was skipped."""

    ref: str
    """The item's id in the Bundle."""
    status: str
    """``imported``, ``flagged`` or ``skipped`` (a lenient import leaves a bad item out)."""
    message: str
    item_id: str = ""
    """The id it is stored under now."""
    stored: str = ""
    """The id it has once the import has finished (another while it replaces a project)."""
    rows: ItemTuples | None = None


Outcome = tuple[str, str, str, str, str]
"""A :class:`PreparedItem` without its rows: what the report and the journal take."""


class PreparedGroup(NamedTuple):
    """Prepared items together: each one's outcome and all their rows, a list per table. The
    second process sends a group as one plain tuple (unpickled faster than an object per
    item); the import writes it with :func:`write_prepared`."""

    outcomes: list[Outcome]
    items: list[Row]
    turns: list[tuple[Row, list[Row]]]
    events: list[Row]

    @classmethod
    def of(cls, prepared: Sequence[PreparedItem]) -> PreparedGroup:
        group = cls([p[:5] for p in prepared], [], [], [])
        for rows in (p.rows for p in prepared if p.rows is not None):
            group.items.append(rows.item)
            group.turns.extend(rows.turns)
            group.events.extend(rows.events)
        return group


class RowFormats:
    """The statements an import writes items with, and the conversion of their values, for
    one database dialect (each process makes its own)."""

    def __init__(self, dialect: sa.Dialect) -> None:
        dates: dict[str, Processor] = {}  # an item's moment formatted once for all its rows

        def form(table: sa.Table, columns: tuple[str, ...]) -> RowFormat:
            return RowFormat(dialect, table, columns, dates)

        self.items = form(items, ITEM_COLUMNS)
        self.turns = form(turns, TURN_COLUMNS)
        self.evidence = form(evidence, EVIDENCE_COLUMNS)
        self.events = form(events, EVENT_COLUMNS)
        # what the writer inserts: the same rows with the ids taken at write time in front
        self.numbered_turns = form(turns, ("id", *TURN_COLUMNS))
        self.numbered_evidence = form(evidence, ("turn_id", *EVIDENCE_COLUMNS))

    def tuples(self, made: NewItem) -> ItemTuples:
        """The rows of an item built by :func:`assay.gold.items.new_item`."""
        turn_row, evidence_row = self.turns.dict_row, self.evidence.dict_row
        return ItemTuples(
            self.items.dict_row(made.row),
            [
                (turn_row(turn), [evidence_row(ev) for ev in found])
                for turn, found in made.rows.turns
            ],
            [self.events.dict_row(event) for event in made.events],
        )


class TurnIds:
    """Ids for the turns one writer inserts, without a query per group: on SQLite the largest
    id is read once per transaction (whose write lock keeps others from adding turns), on
    PostgreSQL the sequence gives :data:`ID_BLOCK` at a time (a sequence never gives one
    twice; what is left over is a gap)."""

    def __init__(self) -> None:
        self.transaction: sa.Transaction | None = None
        self.following = 0
        self.spare: list[int] = []

    def take(self, conn: sa.Connection, count: int) -> list[int]:
        if conn.dialect.name == "postgresql":
            if len(self.spare) < count:
                self.spare += next_ids(conn, turns, max(count, ID_BLOCK))
            taken, self.spare = self.spare[:count], self.spare[count:]
            return taken
        transaction = conn.get_transaction()
        if transaction is None or transaction is not self.transaction:
            self.transaction = transaction
            self.following = next_ids(conn, turns, 1)[0]
        first = self.following
        self.following += count
        return list(range(first, self.following))


ID_BLOCK = 1000


def write_prepared(
    conn: sa.Connection,
    project: Project,
    group: PreparedGroup,
    formats: RowFormats,
    turn_ids: TurnIds,
) -> None:
    """Write the rows of new items in one statement per table; their ids must be free."""
    if not group.items:
        return
    check_writable(conn, project.id)
    insert_converted(conn, formats.items, group.items)
    found = group.turns
    ids = turn_ids.take(conn, len(found))
    numbered = [(turn_id, *row) for turn_id, (row, _) in zip(ids, found, strict=True)]
    insert_converted(conn, formats.numbered_turns, numbered)
    passages = [
        (turn_id, *row) for turn_id, (_, rows) in zip(ids, found, strict=True) for row in rows
    ]
    insert_converted(conn, formats.numbered_evidence, passages)
    insert_converted(conn, formats.events, group.events)


TEXT_CHARS = 64 * 1024 * 1024
"""Characters of document text an import keeps in memory to anchor evidence."""


class ItemPreparer:
    """Prepares the items of one import (see the module). ``connection`` gives the connection
    it reads with (in the import's process, the open batch: it sees what the import wrote);
    ``replaced``: the id of the project the import replaces when it has finished."""

    def __init__(
        self,
        connection: Callable[[], sa.Connection],
        project: Project,
        *,
        lenient: bool,
        authors: ImportAuthors,
        docs: DocumentFinder,
        replaced: int | None,
        formats: RowFormats,
    ) -> None:
        self.connection = connection
        self.project = project
        self.lenient = lenient
        self.authors = authors
        self.docs = docs
        self.replaced = replaced
        self.formats = formats
        self.texts = DocumentTexts(connection(), project.id, TEXT_CHARS)

    def taken_ids(self, group: list[Item]) -> dict[str, int]:
        """The ids of ``group`` that items already have, by project id."""
        wanted = [record.id for record in group if is_uuid(record.id)]
        if not wanted:
            return {}
        found = self.connection().execute(
            sa.select(items.c.id, items.c.project_id).where(items.c.id.in_(wanted))
        )
        return {item_id: project_id for item_id, project_id in found}

    def prepare(self, record: Item, taken: dict[str, int]) -> PreparedItem:
        """One item as the import takes it; a bad one raises, or with ``lenient`` comes back
        skipped. ``taken``: ids already used, by project id (this import's too: it grows)."""
        try:
            return self.item(record, taken)
        except AssayError as exc:
            if not self.lenient:
                raise
            return PreparedItem(record.id, "skipped", str(exc))

    def item(self, record: Item, taken: dict[str, int]) -> PreparedItem:
        notes: list[str] = []
        stored = renamed = ""
        extra = dict(record.extra)
        item_id = record.id if is_uuid(record.id) else str(uuid.uuid4())
        if item_id != record.id:
            extra["source_id"] = record.id
        elif taken.get(item_id) == self.project.id:
            raise Conflict(
                f"item {record.id!r} is already in project {self.project.name!r}; "
                "nothing was overwritten (use --replace to replace the project)"
            )
        data = item_input(record, extra, notes, self.docs)
        author = self.authors.of(record.author)
        if item_id in taken:  # the id is used by an item of another project
            if self.replaced is not None and taken[item_id] == self.replaced:
                stored, item_id = item_id, str(uuid.uuid4())  # a stand-in until the old goes
            else:  # a note, not a warning
                data.extra.setdefault("source_id", record.id)
                item_id = str(uuid.uuid4())
                renamed = f"its id is used in another project; stored as {item_id}"
        made = new_item(
            self.texts, self.project, data, author=author, named=self.authors.named,
            status=cast(Any, record.status), item_id=item_id, keep_history=True,
        )  # fmt: skip
        taken[item_id] = self.project.id
        if made.rows.unlocated:
            notes.append(
                f"{made.rows.unlocated} passage(s) not found in their documents, kept unverified"
            )
        message = "; ".join([*notes, renamed] if renamed else notes)
        status = "flagged" if notes else "imported"
        rows = self.formats.tuples(made)
        return PreparedItem(record.id, status, message, item_id, stored or item_id, rows)
