"""Bundles into projects.

**An import lands whole or not at all, without blocking the workspace.** Every stage function
(ingest, chunkings, items) writes into short batches (:mod:`assay.transfer.batches`) behind
the project's import lock: edits to the project wait, other projects stay writable, and on
any error (or a killed process) every batch is undone. With ``lenient=True`` each record runs
in a savepoint and a bad record is skipped and reported while the rest goes in. Original files
are written to the blob store first (content-addressed: an undone import at worst leaves
unused blobs, never a half-written one). ``replace=True`` builds the new content in a hidden
project and swaps it for the old one in the last batch; without it, nothing that exists is
overwritten (an item id already in the project is a conflict).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence, Sized
from contextlib import AbstractContextManager
from dataclasses import replace as with_fields
from typing import Protocol

import sqlalchemy as sa

from assay.corpus.chunkings import (
    IMPORTED,
    create_chunking,
    import_chunking,
    list_chunkings,
    set_default_chunking,
)
from assay.corpus.documents import list_documents, update_document
from assay.corpus.ingest import ingest_bytes
from assay.errors import Conflict, InvalidInput
from assay.formats import (
    Bundle,
    ChunkingRecord,
    ChunkRecord,
    DocumentRecord,
    EvaluationRecord,
    Issue,
)
from assay.records import STATUSES, Item, Project
from assay.store.import_lock import rekey_items
from assay.store.projects import (
    LANGUAGES,
    delete_project,
    delete_unused_blobs,
    rename_project,
)
from assay.store.workspace import Workspace
from assay.transfer.batches import Batches, BatchPolicy, batched
from assay.transfer.comment_import import import_comments
from assay.transfer.evaluations import store_evaluation
from assay.transfer.import_actors import (
    ImportAuthors,
    bundle_authors,
    record_import,
)
from assay.transfer.item_import import ItemStage
from assay.transfer.item_pipeline import ItemPipeline, second_process
from assay.transfer.prepared import Placed, PlacedDocuments
from assay.transfer.report import ImportReport
from assay.transfer.target import target_project

Progress = Callable[[str, int, int | None], None]
"""Called as ``progress(stage, done, total)``."""


class Watcher(Protocol):
    """A background job that follows its import from inside, writing with the import's own
    batch connection: on SQLite no other connection may write while a batch is open, and
    what the last batch holds commits with the import or not at all."""

    def batch(self, conn: sa.Connection) -> None:
        """Before every batch commits: keep the progress; raise to undo the import."""

    def applied(self, conn: sa.Connection, report: ImportReport) -> None:
        """In the last batch: the import is applied (a job never runs it twice)."""


# ---------------------------------------------------------------- import


def import_bundle(
    ws: Workspace,
    project: Project | str,
    bundle: Bundle,
    *,
    replace: bool = False,
    lenient: bool = False,
    progress: Progress | None = None,
    batching: BatchPolicy | None = None,
    status: str | None = None,
    actor: int | None = None,
    watcher: Watcher | None = None,
) -> ImportReport:
    """Put a Bundle into a project (created when a name is given that does not exist).

    ``status`` gives every imported item that review status, for gold sets reviewed
    elsewhere; by default items keep the file's status (``draft`` where the format has none).
    ``actor`` (an account id; default :func:`acting_account`) is who imports: the author of
    what the file names no author for, and of the project's ``import`` event. The file's
    author names become accounts first, in one transaction of their own (see
    :mod:`assay.people.actors`); they stay when the import is undone. Streamed items
    (:meth:`assay.formats.FormatSpec.stream`) bring their names as they come, each new set
    in a transaction of its own too. ``watcher``: see :class:`Watcher`.
    """
    if status is not None and status not in STATUSES:
        raise InvalidInput(f"unknown status {status!r}; choose one of: {', '.join(STATUSES)}")
    name = project.name if isinstance(project, Project) else project.strip()
    report = ImportReport(project=name)
    report.take_issues(bundle.issues, lenient=lenient)
    known_issues = len(bundle.issues)
    documents = list(bundle.documents)
    items = (with_fields(i, status=status) if status else i for i in bundle.items)
    total = len(bundle.items) if isinstance(bundle.items, Sized) else None
    listed = bundle.items if isinstance(bundle.items, list) else []
    authors = bundle_authors(ws, documents, listed, actor)
    with (
        second_process(bundle.item_source) as pipeline,
        batched(ws, batching or BatchPolicy()) as batches,
    ):
        if watcher is not None:
            batches.before_commit.append(lambda: watcher.batch(batches.conn))
        target, fresh, replaced = target_project(ws, batches, name, bundle.project, replace)
        report.project = replaced.name if replaced else target.name
        asked = bundle.project.language
        if fresh and asked and asked not in LANGUAGES:
            report.add(
                "project",
                report.project,
                "flagged",
                f"language {asked!r} unknown; using {target.language!r}",
            )
        importer = _Importer(ws, batches, target, report, lenient, progress, fresh, authors)
        importer.replaced = replaced
        importer.generated_chunkings(bundle.chunkings)
        importer.documents(documents)
        importer.imported_chunkings(bundle.chunkings)
        importer.items(items, total, pipeline, status, bundle.issues)
        report.take_issues(bundle.issues[known_issues:], lenient=lenient)  # found while streaming
        importer.evaluations(bundle.evaluations)
        import_comments(
            ws, batches, target, bundle.comments, items=importer.placed_items,
            authors=authors, report=report, lenient=lenient,
        )  # fmt: skip
        record_import(batches.current, target, authors.acting, report, replace)
        if replaced is not None:  # the swap: the old content goes, the new takes its name
            delete_project(ws, replaced, conn=batches.current)
            batches.flush()
            rekey_items(batches.conn, batches.token)
            rename_project(ws, target, replaced.name, conn=batches.current)
        if watcher is not None:
            watcher.applied(batches.current, report)
    if replace:
        delete_unused_blobs(ws)  # only now: until the import committed, a rollback needed them
    return report


class _Importer:
    def __init__(
        self,
        ws: Workspace,
        batches: Batches,
        project: Project,
        report: ImportReport,
        lenient: bool,
        progress: Progress | None,
        fresh: bool,
        authors: ImportAuthors,
    ) -> None:
        self.ws = ws
        self.authors = authors
        self.fresh = fresh
        """Created by this import: the Bundle's default chunking may become the default."""
        self.batches = batches
        self.project = project
        self.report = report
        self.lenient = lenient
        self.progress = progress
        self.replaced: Project | None = None
        """The project this import replaces when it has finished (its item ids stay)."""
        self.placed = PlacedDocuments()
        self.docs = self.placed.docs
        self.chunks = self.placed.chunks
        self.placed_items: dict[str, tuple[str, str]] = {}
        """Bundle item id → (stored id now, id once the import has finished)."""

    @property
    def conn(self) -> sa.Connection:
        """Where every stage function of this import writes: the current batch."""
        return self.batches.current

    def record(self, kind: str, ref: str) -> AbstractContextManager[None]:
        """One record of the import; lenient: undone and reported as skipped on error."""
        return self.batches.record(
            self.lenient, lambda message: self.report.add(kind, ref, "skipped", message)
        )

    def tick(self, stage: str, done: int, total: int | None) -> None:
        if self.progress:
            self.progress(stage, done, total)

    # -- chunkings made by a chunker (their chunks are re-made from method and parameters)

    def generated_chunkings(self, chunkings: Sequence[ChunkingRecord]) -> None:
        existing = {c.name: c for c in list_chunkings(self.ws, self.project, conn=self.conn)}
        for record in chunkings:
            if record.method == IMPORTED:
                continue
            with self.record("chunking", record.name):
                found = existing.get(record.name)
                if found is None:
                    made = create_chunking(
                        self.ws,
                        self.project,
                        record.name,
                        record.method,
                        record.params,
                        make_default=record.is_default and self.fresh,
                        conn=self.conn,
                    )
                    self.batches.note("chunking", str(made.id))
                elif found.method != record.method or found.params != record.params:
                    raise Conflict(
                        f"chunking {record.name!r} exists with other settings "
                        f"({found.method} {found.params}); rename it or import with --replace"
                    )
                elif record.is_default and not found.is_default and self.fresh:
                    set_default_chunking(self.ws, self.project, record.name, conn=self.conn)
                self.report.add("chunking", record.name, "imported")

    # -- documents

    def documents(self, records: list[DocumentRecord]) -> None:
        known = {d.sha256: d.name for d in list_documents(self.ws, self.project, conn=self.conn)}
        for done, record in enumerate(records, 1):
            with self.record("document", record.ref):
                self.document(record, known)
            self.tick("documents", done, len(records))

    def document(self, record: DocumentRecord, known: dict[str, str]) -> None:
        data = record.original()
        sha256 = hashlib.sha256(data).hexdigest()
        doc = ingest_bytes(
            self.ws,
            self.project,
            record.name,
            data,
            metadata=record.metadata,
            author=self.authors.of(record.author),
            conn=self.conn,
        )
        notes: list[str] = []
        if sha256 in known:
            notes.append(f"same content as the existing document {known[sha256]!r}; linked to it")
        else:
            self.batches.note("document", doc.id)
            if doc.name != record.name:
                notes.append(f"stored as {doc.name!r} (the name was taken)")
        if record.notes and record.notes != doc.notes:
            if sha256 in known:
                self.batches.note("notes", doc.id, doc.notes)
            doc = update_document(self.ws, doc, notes=record.notes, conn=self.conn)
        changed = False
        if record.text is not None and record.text != doc.text:
            changed = True
            notes.append("its text was normalised (line ends, Unicode NFC); offsets follow it")
        elif record.text_sha256 and record.text_sha256 != _sha(doc.text):
            changed = True
            notes.append("its text differs from the exported text; passages are located again")
        known[sha256] = doc.name
        # texts are kept only to relocate passages, so only for a document that changed
        placed = Placed(doc.id, doc.text, True, record.text) if changed else Placed(doc.id)
        self.docs[record.ref] = placed
        status = "flagged" if notes else "imported"
        self.report.add("document", record.ref, status, "; ".join(notes), doc.id)

    # -- chunkings brought with their own chunk ids

    def imported_chunkings(self, chunkings: Sequence[ChunkingRecord]) -> None:
        for record in chunkings:
            if record.method != IMPORTED:
                continue
            with self.record("chunking", record.name):
                spans: list[tuple[str, str, int, int]] = []
                for chunk in record.chunks:
                    span = self.place_chunk(record.name, chunk)
                    if span is not None:
                        spans.append(span)
                made = import_chunking(
                    self.ws,
                    self.project,
                    record.name,
                    spans,
                    params=record.params,
                    make_default=record.is_default and self.fresh,
                    conn=self.conn,
                )
                self.batches.note("chunking", str(made.id))
                for chunk_id, doc_id, start, end in spans:
                    self.chunks.setdefault(chunk_id, (doc_id, start, end))
                self.report.add("chunking", record.name, "imported", f"{len(spans)} chunks")

    def place_chunk(self, chunking: str, chunk: ChunkRecord) -> tuple[str, str, int, int] | None:
        where = f"chunking {chunking!r}, chunk {chunk.chunk_id!r}"
        placed = self.docs.get(chunk.doc_ref)
        problem = ""
        span: tuple[int, int] | None = (chunk.start, chunk.end)
        if placed is None:
            problem = f"its document {chunk.doc_ref!r} was not imported"
        elif placed.changed:
            span = placed.relocate(chunk.start, chunk.end, chunk.text)
            if span is None:
                problem = "its text was not found in the document"
        if placed is None or span is None:
            if not self.lenient:
                raise InvalidInput(f"{where}: {problem}")
            self.report.add("chunk", chunk.chunk_id, "skipped", problem)
            return None
        return chunk.chunk_id, placed.doc_id, span[0], span[1]

    # -- items: see assay.transfer.item_import

    def items(
        self,
        records: Iterable[Item],
        total: int | None,
        pipeline: ItemPipeline | None,
        status: str | None,
        issues: list[Issue],
    ) -> None:
        stage = ItemStage(
            self.ws, self.batches, self.project, self.report, self.lenient, self.authors,
            placed=self.placed, tick=self.tick, replaced=self.replaced,
        )  # fmt: skip
        stage.run(records, total, pipeline=pipeline, status=status, issues=issues)
        self.placed_items = stage.placed_items

    # -- evaluations (systems' results on the items): one experiment each, in one batch

    def evaluations(self, records: Iterable[EvaluationRecord]) -> None:
        for record in records:
            self.batches.open()
            store_evaluation(
                self.ws,
                self.project,
                record,
                conn=self.conn,
                documents={ref: placed.doc_id for ref, placed in self.docs.items()},
                items=self.placed_items,
                report=self.report,
                author=self.authors.acting,
            )


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
