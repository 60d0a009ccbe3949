"""The items stage of an import: each item prepared (checked, its passages located, its rows
built: :mod:`assay.transfer.prepared`), then written a group at a time in one statement
per table (:func:`assay.transfer.prepared.write_prepared`); a waiting writer gets in at the
next group.

A large streamed file is prepared by a second process while this one writes
(:mod:`assay.transfer.item_pipeline`). That process starts with the import; until it is
ready, items are prepared here, and it takes over after the last of them, so a small file is
done before it would have been any help; after that, whenever this process waits for items,
the next group comes unprepared and is prepared here (the two processes share the work as
their speeds allow). Either way the report, the journal and the progress are kept here, a
group at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice

import sqlalchemy as sa

from assay.formats import Issue
from assay.people.actors import account_ids
from assay.records import Item, Project
from assay.store.workspace import Workspace
from assay.transfer import item_pipeline
from assay.transfer.batches import Batches
from assay.transfer.import_actors import ImportAuthors, author_names
from assay.transfer.item_pipeline import ItemPipeline, Setup
from assay.transfer.prepared import (
    ITEM_GROUP,
    DocumentLookup,
    ItemPreparer,
    PlacedDocuments,
    PreparedGroup,
    RowFormats,
    TurnIds,
    write_prepared,
)
from assay.transfer.report import ImportReport


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
        placed: PlacedDocuments,
        tick: Callable[[str, int, int | None], None],
        replaced: Project | None,
    ) -> None:
        self.ws = ws
        self.batches = batches
        self.project = project
        self.report = report
        self.lenient = lenient
        self.authors = authors
        self.placed = placed
        """Where the items' document references are looked up (the import's documents)."""
        self.tick = tick
        self.replaced = replaced
        """The project this import replaces when it has finished (its item ids stay)."""
        self.formats = RowFormats(batches.conn.dialect)
        self.turn_ids = TurnIds()
        self.preparer: ItemPreparer | None = None
        """Made for the first group prepared here."""
        self.placed_items: dict[str, tuple[str, str]] = {}
        """Bundle item id → (stored id now, id once the import has finished)."""
        self.done = 0

    @property
    def conn(self) -> sa.Connection:
        return self.batches.current

    def run(
        self,
        records: Iterable[Item],
        total: int | None,
        *,
        pipeline: ItemPipeline | None = None,
        status: str | None = None,
        issues: list[Issue] | None = None,
    ) -> None:
        """Take ``records``; with ``pipeline``, hand over to it once it is ready. ``status``
        (every item's status) and ``issues`` (where a streamed reader reports) are what the
        pipeline needs to read the file again as ``records`` does."""
        stream = iter(records)
        if self.here(stream, total, pipeline) and pipeline is not None:
            _close(stream)
            self.handed_over(pipeline, total, status, issues)

    def here(
        self, stream: Iterator[Item], total: int | None, pipeline: ItemPipeline | None
    ) -> bool:
        """Prepare and write items in this process until ``stream`` ends (False) or the
        pipeline is ready to take over (True)."""
        while not (pipeline is not None and pipeline.ready()):
            group = list(islice(stream, ITEM_GROUP))
            if not group:
                return False
            self.take(self.prepare(group), total)
        return True

    def prepare(self, group: list[Item]) -> PreparedGroup:
        """Prepare ``group`` in this process (see :mod:`assay.transfer.prepared`)."""
        self.new_authors({n for n in author_names([], group) if n.strip()})
        preparer = self.preparer
        if preparer is None:
            docs = DocumentLookup(self.placed, self.ws, self.project, lambda: self.conn)
            preparer = self.preparer = ItemPreparer(
                lambda: self.conn, self.project, lenient=self.lenient, authors=self.authors,
                docs=docs, replaced=self.replaced.id if self.replaced else None,
                formats=self.formats,
            )  # fmt: skip
        taken = preparer.taken_ids(group)
        self.batches.open()  # the preparer reads in the batch
        return PreparedGroup.of([preparer.prepare(record, taken) for record in group])

    def handed_over(
        self,
        pipeline: ItemPipeline,
        total: int | None,
        status: str | None,
        issues: list[Issue] | None,
    ) -> None:
        """Write what the pipeline prepares from the item after the last one taken here."""
        self.batches.commit()  # it reads with a connection of its own: what is committed
        setup = Setup(
            url=self.ws.engine.url.render_as_string(hide_password=False),
            settings=self.ws.settings,
            project=self.project,
            lenient=self.lenient,
            status=status,
            authors=self.authors,
            placed=self.placed,
            replaced=self.replaced.id if self.replaced else None,
            skip=self.done,
            shared=item_pipeline.SHARE,
        )
        for kind, value in pipeline.run(setup, idle=self.batches.idle):
            if kind == "names":
                pipeline.reply(self.new_authors(value))
            elif kind == "items":
                self.take(value, total)
            elif kind == "records":  # this process was idle: it prepares these itself
                self.take(self.prepare(value), total)
            elif issues is not None:  # "end": what the reader found after the hand-over
                issues.extend(value)

    def new_authors(self, names: set[str]) -> dict[str, int]:
        """Author names of streamed items not met yet become accounts, in a transaction of
        their own as :func:`bundle_authors` makes them (the batch commits first: SQLite has
        one writer). Returns the accounts of ``names``."""
        new = names - self.authors.named.keys()
        if new:
            self.batches.commit()
            with self.ws.engine.begin() as conn:
                self.authors.named.update(account_ids(conn, new))
        return {name: self.authors.named[name] for name in names if name in self.authors.named}

    def take(self, group: PreparedGroup, total: int | None) -> None:
        """Prepared items: reported, noted in the journal, written."""
        report, note = self.report.add, self.batches.note
        written: list[str] = []
        for ref, status, message, item_id, stored in group.outcomes:
            if status == "skipped":
                report("item", ref, status, message)
                continue
            if stored != item_id:
                note("rekey", item_id, stored)
            self.placed_items[ref] = (item_id, stored)
            written.append(item_id)
            report("item", ref, status, message, stored)
        if written:  # one journal row for the group, every id (a UUID) in its "before"
            note("items", written[0], " ".join(written))
        write_prepared(self.conn, self.project, group, self.formats, self.turn_ids)
        self.done += len(group.outcomes)
        self.batches.tick(len(group.outcomes))
        self.tick("items", self.done, total)


def _close(stream: Iterator[Item]) -> None:
    """Stop reading the file here (the pipeline reads it again)."""
    close = getattr(stream, "close", None)
    if close is not None:
        close()
