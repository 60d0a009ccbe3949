"""Preparing imported items: each Bundle item checked, its passages located in their
documents and its rows built and converted for the driver, writing nothing.

The same code runs in the import's own process (small files) and in a second process that
prepares while the first writes (:mod:`assay.transfer.item_pipeline`); it only reads (the
documents' texts, which ids are taken), so either way the rows are the same.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, cast

import sqlalchemy as sa

from assay.corpus.anchoring import DocumentTexts
from assay.errors import AssayError, Conflict
from assay.formats.common import is_uuid
from assay.gold.items import new_item
from assay.records import Item, Project
from assay.store.schema import items as item_rows
from assay.transfer.import_actors import ImportAuthors
from assay.transfer.item_input import DocumentFinder, item_input
from assay.transfer.prepared import PreparedItem, RowFormats

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
            sa.select(item_rows.c.id, item_rows.c.project_id).where(item_rows.c.id.in_(wanted))
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
