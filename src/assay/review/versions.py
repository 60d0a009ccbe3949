"""Frozen dataset versions: a project's accepted gold as an immutable, content-hashed snapshot.

``create_version`` reads the gold (items with the chosen statuses, accepted unless told,
never annotators' copies, never items whose evidence needs review), writes it with the
project's documents (their files) and one chunking as an Assay native zip into the blob
store, and records a ``dataset_versions`` row. A version is never changed afterwards: its
name is taken for good, and exports and experiments read the zip, not the live items.

The version's hash is the sha256 of a canonical JSON of its content
(:mod:`assay.review.version_hash`): the same gold frozen twice has the same hash.

A version is never held whole: its items are written into the zip as they are read from the
database (in batches, within one read transaction), its hash and summary gathered on the way,
and a snapshot reads them back from the zip one at a time whenever they are iterated. So
freezing, diffing and exporting take about the same memory at 100,000 items as at 10,000
(``benchmarks/versions.py``).
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Container, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from assay.corpus.anchoring import items_needing_review
from assay.corpus.chunkings import IMPORTED, get_chunking, iter_chunk_spans
from assay.corpus.documents import document_record, iter_documents
from assay.errors import Conflict, InvalidInput, NotFound
from assay.formats import Bundle, ChunkingRecord, ChunkRecord, Lazy, ProjectInfo, native
from assay.gold.item_lists import items_in_batches
from assay.gold.statuses import parse_statuses
from assay.people.actors import AUTHOR_NAME, acting_account
from assay.records import Chunking, Item, Project
from assay.review.version_hash import ContentHash
from assay.store.db import as_utc, reading, record_from_row, transaction, utcnow
from assay.store.projects import check_name
from assay.store.review_schema import dataset_versions
from assay.store.schema import accounts, items
from assay.store.workspace import Workspace

PAGE = 500
"""Gold item ids read at once when freezing (and so items read per query)."""
SNAPSHOT_KEY = "dataset_version"
"""The key of the snapshot's own facts in the native manifest's ``extra``."""


@dataclass(frozen=True, slots=True)
class DatasetVersion:
    id: int
    name: str
    hash: str
    blob: str
    item_count: int
    evidence_count: int
    chunking: str | None
    summary: dict[str, Any]
    author: str
    created_at: datetime


@dataclass
class Snapshot:
    """A version's content read back from its zip: documents (``ref`` is the name), the
    frozen chunking and the items (evidence ``doc_id`` is the document's name), read from
    the zip anew each time they are iterated; ``document_ids`` maps names to the ids the
    documents had when frozen."""

    version: DatasetVersion
    bundle: Bundle
    items: Iterable[Item] = field(default_factory=list)
    document_ids: dict[str, str] = field(default_factory=dict)


def check_statuses(statuses: Iterable[str] | None) -> tuple[str, ...]:
    """The statuses to freeze (:func:`assay.gold.statuses.parse_statuses`: ``accepted``
    when none are given, ``all`` for every one)."""
    return parse_statuses(statuses)


def _gold_batches(
    conn: sa.Connection, project: Project, statuses: Sequence[str], held: Container[str]
) -> Iterator[list[str]]:
    """Ids of the gold items with ``statuses`` (never copies, never those ``held``), oldest
    first, a page at a time (keyset on the index of creation times): never all at once."""
    after: tuple[Any, str] | None = None
    while True:
        where = [
            items.c.project_id == project.id,
            items.c.status.in_(list(statuses)),
            items.c.copy_of.is_(None),
        ]
        if after is not None:
            created, last = after
            where.append(
                sa.or_(
                    items.c.created_at > created,
                    sa.and_(items.c.created_at == created, items.c.id > last),
                )
            )
        rows = conn.execute(
            sa.select(items.c.created_at, items.c.id)
            .where(*where)
            .order_by(items.c.created_at, items.c.id)
            .limit(PAGE)
        ).all()
        if not rows:
            return
        after = (rows[-1][0], rows[-1][1])
        page = [r[1] for r in rows if r[1] not in held]
        if page:
            yield page


def _status_counts(conn: sa.Connection, project: Project) -> dict[str, int]:
    rows = conn.execute(
        sa.select(items.c.status, sa.func.count())
        .where(items.c.project_id == project.id, items.c.copy_of.is_(None))
        .group_by(items.c.status)
    ).all()
    return {status: int(n) for status, n in rows}


def _empty_message(project: Project, statuses: Sequence[str], counts: dict[str, int]) -> str:
    held = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no items"
    return (
        f"nothing to freeze: project {project.name!r} has no {' or '.join(statuses)} item "
        f"that can be used as gold (it holds {held}); accept items first, or choose other "
        "statuses with --status"
    )


def _chunking_record(ws: Workspace, chunking: Chunking, conn: sa.Connection) -> ChunkingRecord:
    """The frozen chunking: method and parameters, and the chunks of an imported one (the
    others are made again from their method, as the native format does)."""
    chunks: list[ChunkRecord] = []
    if chunking.method == IMPORTED:
        chunks = [
            ChunkRecord(chunk_id, doc_id, start, end)
            for chunk_id, doc_id, start, end in iter_chunk_spans(ws, chunking, conn=conn)
        ]
    return ChunkingRecord(
        chunking.name, chunking.method, chunking.params, is_default=True, chunks=chunks
    )


def create_version(
    ws: Workspace,
    project: Project,
    name: str,
    *,
    statuses: Iterable[str] | None = None,
    chunking: str | None = None,
    author: int | None = None,
) -> DatasetVersion:
    """Freeze the project's gold as version ``name`` (see the module's doc). A name already
    used is a Conflict; no gold to freeze is refused (an empty version cites nothing)."""
    name = check_name(name, "dataset version")
    chosen = check_statuses(statuses)
    with _one_moment(ws.engine) as conn:
        _refuse_taken(conn, project, name)
        frozen = get_chunking(ws, project, chunking, conn=conn)
        held = items_needing_review(conn, project.id, chosen)
        pages = _gold_batches(conn, project, chosen, held)
        first = next(pages, None)
        if first is None:
            raise InvalidInput(_empty_message(project, chosen, _status_counts(conn, project)))
        docs = [document_record(ws, d) for d in iter_documents(ws, project, conn=conn)]
        record = _chunking_record(ws, frozen, conn)
        seen = _Freezing(ContentHash(docs, record))
        bundle = Bundle(
            project=ProjectInfo(name=project.name, language=project.language),
            documents=docs,
            chunkings=[record],
            items=seen.watch(
                item
                for page in chain([first], pages)
                for item in items_in_batches(ws, page, history=True, conn=conn)
            ),
            extra={
                SNAPSHOT_KEY: {
                    "statuses": list(chosen),
                    "chunking": frozen.name,
                    "document_ids": {d.name: d.ref for d in docs},
                }
            },
        )
        with tempfile.TemporaryDirectory(prefix="assay-version-") as folder:
            path = Path(folder) / "version.zip"
            native.write(bundle, path)  # the items are written as they are read
            blob = ws.blobs.put_file(path)
    summary = {
        "statuses": list(chosen),
        "documents": len(docs),
        "kinds": dict(sorted(seen.kinds.items())),
        "query_types": dict(sorted(seen.query_types.items())),
        "left_out_needing_review": sorted(held),
    }
    with transaction(ws.engine, None) as conn:
        _refuse_taken(conn, project, name)
        conn.execute(
            dataset_versions.insert().values(
                project_id=project.id,
                name=name,
                hash=seen.hash.hexdigest(),
                blob=blob,
                item_count=seen.items,
                evidence_count=seen.evidence,
                chunking=frozen.name,
                summary=summary,
                author_id=author if author is not None else acting_account(ws, conn=conn),
                created_at=utcnow(),
            )
        )
    return get_version(ws, project, name)


@dataclass
class _Freezing:
    """What a version's summary and hash need from its items, gathered while they pass on
    their way into the zip (a version is never held whole)."""

    hash: ContentHash
    items: int = 0
    evidence: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    query_types: Counter[str] = field(default_factory=Counter)

    def watch(self, gold: Iterable[Item]) -> Iterator[Item]:
        for item in gold:
            self.hash.add(item)
            self.items += 1
            self.evidence += sum(len(t.evidence) for t in item.turns)
            self.kinds[item.kind] += 1
            self.query_types.update(t.query_type for t in item.turns)
            yield item


@contextmanager
def _one_moment(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A connection whose reads all see the gold as it was at one moment (a save committed
    while a version is read is either wholly in it or not at all): a repeatable-read
    transaction on PostgreSQL, an explicit read transaction on SQLite (its driver opens none
    for reads)."""
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            yield conn.execution_options(isolation_level="REPEATABLE READ")
        else:
            conn.exec_driver_sql("BEGIN")
            yield conn


def _refuse_taken(conn: sa.Connection, project: Project, name: str) -> None:
    row = conn.execute(
        sa.select(dataset_versions.c.hash, dataset_versions.c.created_at).where(
            dataset_versions.c.project_id == project.id, dataset_versions.c.name == name
        )
    ).first()
    if row is not None:
        raise Conflict(
            f"project {project.name!r} already has a dataset version named {name!r} "
            f"(frozen {as_utc(row.created_at):%Y-%m-%d %H:%M} UTC, hash {row.hash[:12]}); "
            "versions never change: choose another name",
            key="raised.dataset_version_name_taken",
            project=project.name,
            name=name,
            frozen=as_utc(row.created_at),
            hash=row.hash[:12],
        )


def _select() -> sa.Select[Any]:
    return sa.select(dataset_versions, AUTHOR_NAME.label("author")).join(
        accounts, accounts.c.id == dataset_versions.c.author_id
    )


def _version(row: Any) -> DatasetVersion:
    summary = dict(row.summary or {})
    return record_from_row(DatasetVersion, row, summary=summary, created_at=as_utc(row.created_at))


def list_versions(
    ws: Workspace, project: Project, *, conn: sa.Connection | None = None
) -> list[DatasetVersion]:
    """The project's versions, newest first."""
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(
            _select()
            .where(dataset_versions.c.project_id == project.id)
            .order_by(dataset_versions.c.created_at.desc(), dataset_versions.c.id.desc())
        ).all()
    return [_version(r) for r in rows]


def get_version(
    ws: Workspace, project: Project, name: str, *, conn: sa.Connection | None = None
) -> DatasetVersion:
    """One version by name; NotFound lists the names there are."""
    with reading(ws.engine, conn) as conn:
        row = conn.execute(
            _select().where(
                dataset_versions.c.project_id == project.id, dataset_versions.c.name == name
            )
        ).first()
        if row is not None:
            return _version(row)
        known = conn.scalars(
            sa.select(dataset_versions.c.name)
            .where(dataset_versions.c.project_id == project.id)
            .order_by(dataset_versions.c.created_at)
        ).all()
    shown = ", ".join(known) or "none yet"
    raise NotFound(
        f"project {project.name!r} has no dataset version {name!r} (versions: {shown})",
        key="raised.no_dataset_version",
        project=project.name,
        name=name,
        shown=shown,
    )


def version_by_id(
    ws: Workspace, version_id: int, *, conn: sa.Connection | None = None
) -> DatasetVersion:
    with reading(ws.engine, conn) as conn:
        row = conn.execute(_select().where(dataset_versions.c.id == version_id)).first()
    if row is None:
        raise NotFound(f"no dataset version with id {version_id}")
    return _version(row)


def read_snapshot(ws: Workspace, version: DatasetVersion) -> Snapshot:
    """The version's zip, its items read as they are iterated. The file is checked against
    its name in the blob store (the sha256 of its bytes), so a zip changed by hand is refused
    before anything is read from it."""
    path = ws.blobs.local(version.blob)
    if not path.exists():
        raise NotFound(f"dataset version {version.name!r}: its stored file is missing")
    if ws.blobs.file_hash(version.blob) != version.blob:
        raise Conflict(
            f"dataset version {version.name!r}: its stored file does not match its hash "
            f"{version.blob[:12]} (the blob store was changed by hand)"
        )
    bundle = native.stream(path)
    bundle.items = Lazy(lambda: native.stream_items(path, [], check_ids=False))
    facts = bundle.extra.get(SNAPSHOT_KEY) or {}
    return Snapshot(version, bundle, bundle.items, dict(facts.get("document_ids") or {}))
