"""The items stage of an import: each item checked and its passages located one by one, then
written a group at a time in a few statements for all (``gold.item_writes.insert_items``),
or before the batch commits, so a waiting writer still gets in at the next item."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any, cast

import sqlalchemy as sa

from assay.corpus.anchoring import DocumentTexts
from assay.errors import AssayError, Conflict
from assay.formats.common import is_uuid
from assay.gold.item_writes import NewItem, insert_items, new_item
from assay.people.actors import account_ids
from assay.records import Item, Project
from assay.store.schema import items as item_rows
from assay.store.workspace import Workspace
from assay.transfer.batches import Batches
from assay.transfer.import_actors import ImportAuthors, author_names
from assay.transfer.item_input import DocumentFinder, item_input
from assay.transfer.report import ImportReport

ITEM_GROUP = 100
"""Items anchored one by one and then written together, in a few statements for all."""
TEXT_CHARS = 64 * 1024 * 1024
"""Characters of document text an import keeps in memory to anchor evidence."""


class ItemStage:
    def __init__(
        self,
        ws: Workspace,
        batches: Batches,
        project: Project,
        report: ImportReport,
        lenient: bool,
        authors: ImportAuthors,
        *,
        docs: DocumentFinder,
        tick: Callable[[str, int, int | None], None],
        replaced: Project | None,
    ) -> None:
        self.ws = ws
        self.batches = batches
        self.project = project
        self.report = report
        self.lenient = lenient
        self.authors = authors
        self.docs = docs
        """Where the items' document references are looked up (the import's documents)."""
        self.tick = tick
        self.replaced = replaced
        """The project this import replaces when it has finished (its item ids stay)."""
        self.unwritten: list[NewItem] = []
        """Items checked and anchored, written a group at a time or before a commit."""
        self.placed_items: dict[str, tuple[str, str]] = {}
        """Bundle item id → (stored id now, id once the import has finished)."""

    @property
    def conn(self) -> sa.Connection:
        return self.batches.current

    def run(self, records: Iterable[Item], total: int | None) -> None:
        texts = DocumentTexts(self.batches.conn, self.project.id, TEXT_CHARS)
        self.batches.before_commit.append(self.write_items)
        stream = iter(records)
        done = 0
        while group := list(islice(stream, ITEM_GROUP)):
            self.new_authors(group)
            taken = self.taken_ids(group)
            for record in group:
                made = self.checked(record, texts, taken)
                if made is not None:
                    self.unwritten.append(made)
                done += 1
                self.batches.tick()  # a commit writes the items so far first
                self.tick("items", done, total)
            self.write_items()
        self.batches.before_commit.remove(self.write_items)

    def new_authors(self, group: list[Item]) -> None:
        """Author names of streamed items not met yet become accounts, in a transaction of
        their own as :func:`bundle_authors` makes them (the batch commits first: SQLite has
        one writer)."""
        names = {n for n in author_names([], group) if n.strip()} - self.authors.named.keys()
        if names:
            self.batches.commit()
            with self.ws.engine.begin() as conn:
                self.authors.named.update(account_ids(conn, names))

    def write_items(self) -> None:
        insert_items(self.conn, self.project, self.unwritten)
        self.unwritten = []

    def taken_ids(self, group: list[Item]) -> dict[str, int]:
        """The ids of ``group`` that items already have, by project id."""
        wanted = [record.id for record in group if is_uuid(record.id)]
        found = self.conn.execute(
            sa.select(item_rows.c.id, item_rows.c.project_id).where(item_rows.c.id.in_(wanted))
        )
        return {item_id: project_id for item_id, project_id in found}

    def checked(self, record: Item, texts: DocumentTexts, taken: dict[str, int]) -> NewItem | None:
        """The rows of one item, or None when it is bad and the import is lenient (the item
        writes nothing itself, so there is nothing to undo)."""
        self.batches.open()  # ``texts`` reads in the batch
        try:
            return self.item(record, texts, taken)
        except AssayError as exc:
            if not self.lenient:
                raise
            self.report.add("item", record.id, "skipped", str(exc))
            return None

    def item(self, record: Item, texts: DocumentTexts, taken: dict[str, int]) -> NewItem:
        """``taken``: ids already used, by project id (the ones this import stored too)."""
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
            if self.replaced is not None and taken[item_id] == self.replaced.id:
                stored, item_id = item_id, str(uuid.uuid4())  # a stand-in until the old goes
            else:  # a note, not a warning
                data.extra.setdefault("source_id", record.id)
                item_id = str(uuid.uuid4())
                renamed = f"its id is used in another project; stored as {item_id}"
        made = new_item(
            texts, self.project, data, author=author, named=self.authors.named,
            status=cast(Any, record.status), item_id=item_id, keep_history=True,
        )  # fmt: skip
        taken[item_id] = self.project.id
        if stored:
            self.batches.note("rekey", item_id, stored)
        stored = stored or item_id
        self.placed_items[record.id] = (item_id, stored)
        self.batches.note("item", item_id)
        if made.rows.unlocated:
            notes.append(
                f"{made.rows.unlocated} passage(s) not found in their documents, kept unverified"
            )
        message = "; ".join([*notes, renamed] if renamed else notes)
        self.report.add("item", record.id, "flagged" if notes else "imported", message, stored)
        return made
