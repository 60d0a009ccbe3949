"""Imported items ready to write: each item's rows already as the driver takes them.

Items are prepared (checked, anchored, converted: :mod:`assay.transfer.item_prepare`) in the
import's own process or in a second one (:mod:`assay.transfer.item_pipeline`); either way what
reaches the writer is a :class:`PreparedGroup` of plain values, written in one statement per
table (:func:`write_prepared`). Only the turns' ids are taken at write time,
by the writer (they come from the database).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa

from assay.gold.items import NewItem
from assay.records import Project
from assay.store.bulk import Processor, RowFormat, insert_converted, next_ids
from assay.store.import_lock import check_writable
from assay.store.schema import events, evidence, items, turns

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
