"""Frozen dataset versions: a project's accepted gold as an immutable, content-hashed snapshot.

``create_version`` reads the gold (items with the chosen statuses, accepted unless told,
never annotators' copies, never items whose evidence needs review), writes it with the
project's documents (their files) and one chunking as an Assay native zip into the blob
store, and records a ``dataset_versions`` row. A version is never changed afterwards: its
name is taken for good, and exports and experiments read the zip, not the live items.

The version's hash is the sha256 of a canonical JSON of its content (:func:`content_hash`):
the items sorted by id, each without the times, version numbers, authors and status history
the store keeps about it; the documents sorted by name as their file and text hashes; the
chunking's name, method and parameters. So the same gold frozen twice has the same hash,
whenever and in whatever order it was read.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from assay.corpus.anchoring import items_needing_review
from assay.corpus.chunkings import IMPORTED, get_chunking, iter_chunk_spans
from assay.corpus.documents import document_record, iter_documents
from assay.errors import Conflict, InvalidInput, NotFound
from assay.formats import Bundle, ChunkingRecord, ChunkRecord, DocumentRecord, ProjectInfo, native
from assay.formats.jsonrec import item_to_json
from assay.gold.item_lists import items_in_batches
from assay.gold.statuses import parse_statuses
from assay.people.actors import AUTHOR_NAME, acting_account
from assay.records import Chunking, Item, Project
from assay.store.db import as_utc, reading, record_from_row, transaction, utcnow
from assay.store.projects import check_name
from assay.store.review_schema import dataset_versions
from assay.store.schema import accounts, items
from assay.store.workspace import Workspace

"""What a version freezes unless told otherwise: the reviewed gold."""
SNAPSHOT_KEY = "dataset_version"
"""The key of the snapshot's own facts in the native manifest's ``extra``."""
UNHASHED_ITEM = ("created_at", "updated_at", "version", "author", "status_history")
UNHASHED_EVIDENCE = ("created_at", "author")


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
    frozen chunking and the items (evidence ``doc_id`` is the document's name);
    ``document_ids`` maps names to the ids the documents had when frozen."""

    version: DatasetVersion
    bundle: Bundle
    items: list[Item] = field(default_factory=list)
    document_ids: dict[str, str] = field(default_factory=dict)


def check_statuses(statuses: Iterable[str] | None) -> tuple[str, ...]:
    """The statuses to freeze (:func:`assay.gold.statuses.parse_statuses`: ``accepted``
    when none are given, ``all`` for every one)."""
    return parse_statuses(statuses)


def _gold_ids(conn: sa.Connection, project: Project, statuses: Sequence[str]) -> list[str]:
    """Ids of the gold items with ``statuses`` (never copies), oldest first."""
    return list(
        conn.scalars(
            sa.select(items.c.id)
            .where(
                items.c.project_id == project.id,
                items.c.status.in_(list(statuses)),
                items.c.copy_of.is_(None),
            )
            .order_by(items.c.created_at, items.c.id)
        )
    )


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


def canonical_item(item: Item, doc_name: dict[str, str]) -> dict[str, Any]:
    """An item as the hash sees it: its content, without what the store keeps about it."""
    data = item_to_json(item, lambda ref: doc_name.get(ref or "", ref))
    for key in UNHASHED_ITEM:
        data.pop(key, None)
    for turn in data["turns"]:
        for ev in turn["evidence"]:
            for key in UNHASHED_EVIDENCE:
                ev.pop(key, None)
    return data


def content_hash(
    gold: Iterable[Item], documents: Iterable[DocumentRecord], chunking: ChunkingRecord
) -> str:
    """The sha256 of the canonical JSON of a version's content (see the module's doc)."""
    docs = list(documents)
    names = {d.ref: d.name for d in docs}
    content = {
        "items": sorted((canonical_item(i, names) for i in gold), key=lambda i: str(i["id"])),
        "documents": sorted(
            ({"name": d.name, "sha256": d.sha256, "text_sha256": d.text_sha256} for d in docs),
            key=lambda d: d["name"],
        ),
        "chunking": {"name": chunking.name, "method": chunking.method, "params": chunking.params},
    }
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
        ids = [i for i in _gold_ids(conn, project, chosen) if i not in held]
        if not ids:
            raise InvalidInput(_empty_message(project, chosen, _status_counts(conn, project)))
        gold = list(items_in_batches(ws, ids, history=True, conn=conn))
        docs = [document_record(ws, d) for d in iter_documents(ws, project, conn=conn)]
        record = _chunking_record(ws, frozen, conn)
    bundle = Bundle(
        project=ProjectInfo(name=project.name, language=project.language),
        documents=docs,
        chunkings=[record],
        items=gold,
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
        native.write(bundle, path)
        blob = ws.blobs.put(path.read_bytes())
    evidence_count = sum(len(t.evidence) for i in gold for t in i.turns)
    summary = {
        "statuses": list(chosen),
        "documents": len(docs),
        "kinds": _tally(i.kind for i in gold),
        "query_types": _tally(t.query_type for i in gold for t in i.turns),
        "left_out_needing_review": sorted(held),
    }
    with transaction(ws.engine, None) as conn:
        _refuse_taken(conn, project, name)
        conn.execute(
            dataset_versions.insert().values(
                project_id=project.id,
                name=name,
                hash=content_hash(gold, docs, record),
                blob=blob,
                item_count=len(gold),
                evidence_count=evidence_count,
                chunking=frozen.name,
                summary=summary,
                author_id=author if author is not None else acting_account(ws, conn=conn),
                created_at=utcnow(),
            )
        )
    return get_version(ws, project, name)


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


def _tally(values: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return dict(sorted(counts.items()))


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
    """The version's zip read back; its content hash checked against the recorded one."""
    path = ws.blobs.path(version.blob)
    if not path.exists():
        raise NotFound(f"dataset version {version.name!r}: its stored file is missing")
    bundle = native.read(path)
    gold = list(bundle.items)
    facts = bundle.extra.get(SNAPSHOT_KEY) or {}
    chunking = bundle.chunkings[0]
    docs = list(bundle.documents)
    if content_hash(gold, docs, chunking) != version.hash:
        raise Conflict(
            f"dataset version {version.name!r}: its stored file does not match its hash "
            f"{version.hash[:12]} (the blob store was changed by hand)"
        )
    return Snapshot(version, bundle, gold, dict(facts.get("document_ids") or {}))
