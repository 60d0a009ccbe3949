"""Reading and editing stored documents (ingest.py is where they come from)."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

import sqlalchemy as sa

from assay.errors import Conflict, InvalidInput, NotFound
from assay.formats import DocumentRecord
from assay.people.actors import AUTHOR_NAME
from assay.records import Document, DocumentSummary, ParseInfo, Project
from assay.store.db import as_utc, count_rows, read_only, reading, transaction
from assay.store.import_lock import check_writable
from assay.store.projects import bump_corpus_version, check_name
from assay.store.schema import accounts, chunkings, chunks, documents, evidence, items, turns
from assay.store.workspace import Workspace


def document_record(ws: Workspace, doc: Document) -> DocumentRecord:
    """A stored document as a Bundle's (exports, frozen versions): its text, the hashes of
    its file and text, and its file read from the blob store only when a writer asks."""
    sha256 = doc.sha256
    return DocumentRecord(
        ref=doc.id,
        name=doc.name,
        media_type=doc.media_type,
        text=doc.text,
        metadata=doc.metadata,
        notes=doc.notes,
        author=doc.author,
        sha256=sha256,
        text_sha256=hashlib.sha256(doc.text.encode("utf-8")).hexdigest(),
        created_at=doc.created_at.isoformat(),
        updated_at=doc.updated_at.isoformat(),
        load=lambda: ws.blobs.get(sha256),
    )


def parse_info_from_json(data: dict[str, Any]) -> ParseInfo:
    return ParseInfo(
        parser=str(data.get("parser", "")),
        pages=data.get("pages"),
        warnings=tuple(data.get("warnings", ())),
        page_starts=tuple(data.get("page_starts", ())),
    )


def parse_info_to_json(info: ParseInfo) -> dict[str, Any]:
    return {
        "parser": info.parser,
        "pages": info.pages,
        "warnings": list(info.warnings),
        "page_starts": list(info.page_starts),
    }


def _select_documents() -> sa.Select[Any]:
    """Whole documents with their author's shown name (``author_name``)."""
    return sa.select(documents, AUTHOR_NAME.label("author_name")).join(
        accounts, accounts.c.id == documents.c.author_id
    )


def _row_to_document(row: sa.Row[Any]) -> Document:
    return Document(
        id=row.id,
        project_id=row.project_id,
        name=row.name,
        media_type=row.media_type,
        size=row.size,
        sha256=row.sha256,
        text=row.text,
        parse_info=parse_info_from_json(row.parse_info or {}),
        notes=row.notes,
        metadata=dict(row.metadata or {}),
        author=row.author_name,
        created_at=as_utc(row.created_at),
        updated_at=as_utc(row.updated_at),
    )


def list_documents(
    ws: Workspace,
    project: Project,
    *,
    name_contains: str = "",
    offset: int = 0,
    limit: int | None = None,
    conn: sa.Connection | None = None,
) -> list[DocumentSummary]:
    """Documents of a project by name, without their text."""
    query = (
        sa.select(
            documents.c.id,
            documents.c.name,
            documents.c.media_type,
            documents.c.size,
            documents.c.sha256,
            sa.func.length(documents.c.text).label("chars"),
            documents.c.parse_info,
            documents.c.created_at,
        )
        .where(documents.c.project_id == project.id)
        .order_by(documents.c.name)
        .offset(offset)
        .limit(limit)
    )
    if name_contains:
        query = query.where(documents.c.name.icontains(name_contains, autoescape=True))
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(query).all()
        ids = [row.id for row in rows]
        chunk_counts = _default_chunk_counts(conn, project.id, ids)
        used_by = citing_counts(conn, ids)
    return [
        DocumentSummary(
            id=row.id,
            name=row.name,
            media_type=row.media_type,
            size=row.size,
            sha256=row.sha256,
            chars=row.chars or 0,
            warnings=tuple((row.parse_info or {}).get("warnings", ())),
            created_at=as_utc(row.created_at),
            chunks=chunk_counts.get(row.id, 0),
            used_by=used_by.get(row.id, 0),
        )
        for row in rows
    ]


def _default_chunk_counts(conn: sa.Connection, project_id: int, ids: list[str]) -> dict[str, int]:
    """Chunks per document under the project's default chunking: one grouped query."""
    if not ids:
        return {}
    rows = conn.execute(
        sa.select(chunks.c.doc_id, sa.func.count().label("n"))
        .join(chunkings, chunkings.c.id == chunks.c.chunking_id)
        .where(
            chunkings.c.project_id == project_id,
            chunkings.c.is_default.is_(True),
            chunks.c.doc_id.in_(ids),
        )
        .group_by(chunks.c.doc_id)
    )
    return {row.doc_id: row.n for row in rows}


def citing_counts(conn: sa.Connection, ids: list[str]) -> dict[str, int]:
    """How many items (conversations among them) cite each document in their evidence: one
    grouped query over the evidence index, no document text read."""
    if not ids:
        return {}
    rows = conn.execute(
        sa.select(evidence.c.doc_id, sa.func.count(sa.distinct(turns.c.item_id)).label("n"))
        .join(turns, turns.c.id == evidence.c.turn_id)
        .where(evidence.c.doc_id.in_(ids))
        .group_by(evidence.c.doc_id)
    )
    return {row.doc_id: row.n for row in rows}


@functools.cache
def _names_read() -> sa.Select[Any]:
    """Read by the editor's every save and search: built once per process."""
    ids = sa.bindparam("ids", expanding=True, type_=sa.String)
    return sa.select(documents.c.id, documents.c.name, documents.c.project_id).where(
        documents.c.id.in_(ids)
    )


def document_names(
    ws: Workspace, project: Project, doc_ids: Iterable[str], *, conn: sa.Connection | None = None
) -> dict[str, str]:
    """Names of the project's documents among ``doc_ids`` (ids of other projects or of deleted
    documents are left out), read without their text.

    The rows are found by primary key alone and the project is checked here: given the project
    as well, SQLite's planner walks the project's documents by another index, a cost that grows
    with the corpus on every search."""
    wanted = sorted(set(doc_ids))
    names: dict[str, str] = {}
    with read_only(ws.engine, conn) as reader:
        for first in range(0, len(wanted), 500):
            rows = reader.execute(_names_read(), {"ids": wanted[first : first + 500]})
            names.update({row.id: row.name for row in rows if row.project_id == project.id})
    return dict(sorted(names.items()))


def count_documents(ws: Workspace, project: Project, *, conn: sa.Connection | None = None) -> int:
    with reading(ws.engine, conn) as conn:
        return count_rows(conn, documents, documents.c.project_id == project.id)


def iter_documents(
    ws: Workspace, project: Project, *, batch_size: int = 100, conn: sa.Connection | None = None
) -> Iterator[Document]:
    """Every document of a project with its text, oldest first, read in batches (exports)."""
    with reading(ws.engine, conn) as reader:
        ids = reader.scalars(
            sa.select(documents.c.id)
            .where(documents.c.project_id == project.id)
            .order_by(documents.c.created_at, documents.c.name)
        ).all()
    for offset in range(0, len(ids), batch_size):
        batch = ids[offset : offset + batch_size]
        with reading(ws.engine, conn) as reader:
            rows = {
                r.id: r
                for r in reader.execute(_select_documents().where(documents.c.id.in_(batch)))
            }
        yield from (_row_to_document(rows[i]) for i in batch if i in rows)


def get_document(
    ws: Workspace, project: Project, doc_id: str, *, conn: sa.Connection | None = None
) -> Document:
    """A document by id, or by a unique id prefix of at least 4 characters."""
    doc_id = doc_id.strip()
    with reading(ws.engine, conn) as conn:
        row = conn.execute(
            _select_documents().where(
                documents.c.project_id == project.id, documents.c.id == doc_id
            )
        ).first()
        if row is None and len(doc_id) >= 4:
            rows = conn.execute(
                _select_documents()
                .where(
                    documents.c.project_id == project.id,
                    documents.c.id.startswith(doc_id, autoescape=True),
                )
                .limit(2)
            ).all()
            if len(rows) > 1:
                raise InvalidInput(f"document id prefix {doc_id!r} is ambiguous; give more of it")
            row = rows[0] if rows else None
    if row is None:
        raise NotFound(
            f"project {project.name!r} has no document with id {doc_id!r}",
            key="raised.no_document_id",
            project=project.name,
            doc_id=doc_id,
        )
    return _row_to_document(row)


def get_document_by_name(
    ws: Workspace, project: Project, name: str, *, conn: sa.Connection | None = None
) -> Document:
    with reading(ws.engine, conn) as conn:
        row = conn.execute(
            _select_documents().where(
                documents.c.project_id == project.id, documents.c.name == name
            )
        ).first()
    if row is None:
        raise NotFound(
            f"project {project.name!r} has no document named {name!r}",
            key="raised.no_document_named",
            project=project.name,
            name=name,
        )
    return _row_to_document(row)


def original_bytes(ws: Workspace, document: Document) -> bytes:
    return ws.blobs.get(document.sha256)


def update_document(
    ws: Workspace,
    document: Document,
    *,
    name: str | None = None,
    notes: str | None = None,
    metadata: dict[str, Any] | None = None,
    conn: sa.Connection | None = None,
) -> Document:
    """Rename a document or change its notes/metadata (its text and chunks stay as they are)."""
    values: dict[str, Any] = {}
    if name is not None:
        values["name"] = check_name(name, "document")
    if notes is not None:
        values["notes"] = notes
    if metadata is not None:
        values["metadata"] = metadata
    if not values:
        return document
    with transaction(ws.engine, conn) as conn:
        check_writable(conn, document.project_id)
        if "name" in values:
            clash = conn.execute(
                sa.select(documents.c.id).where(
                    documents.c.project_id == document.project_id,
                    documents.c.name == values["name"],
                    documents.c.id != document.id,
                )
            ).first()
            if clash:
                raise Conflict(
                    f"another document is already named {values['name']!r}",
                    key="raised.document_name_taken",
                    name=values["name"],
                )
        # Metadata edits do not bump updated_at: it marks changes to text and chunks.
        conn.execute(documents.update().where(documents.c.id == document.id).values(**values))
        row = conn.execute(_select_documents().where(documents.c.id == document.id)).one()
    return _row_to_document(row)


def citing_items(conn: sa.Connection, doc_id: str) -> list[tuple[str, str]]:
    """``(item_id, query)`` of the items whose evidence points at a document."""
    return [(item_id, query) for item_id, query, _kind in cited_by(conn, doc_id)]


def cited_by(conn: sa.Connection, doc_id: str) -> list[tuple[str, str, str]]:
    """``(item_id, query, kind)`` of the items whose evidence points at a document, oldest
    first (``kind``: qa or conversation)."""
    rows = conn.execute(
        sa.select(items.c.id, items.c.query, items.c.kind)
        .where(
            items.c.id.in_(
                sa.select(turns.c.item_id)
                .join(evidence, evidence.c.turn_id == turns.c.id)
                .where(evidence.c.doc_id == doc_id)
            )
        )
        .order_by(items.c.created_at, items.c.id)
    ).all()
    return [(row.id, row.query, row.kind) for row in rows]


def delete_document(
    ws: Workspace, document: Document, *, conn: sa.Connection | None = None
) -> None:
    """Delete a document and its chunks (search indexes follow on their next sync).

    Refused while evidence points at it, like RAGold: the message names the items.
    """
    with transaction(ws.engine, conn) as conn:
        check_writable(conn, document.project_id)
        cited = citing_items(conn, document.id)
        if cited:
            shown = "; ".join(
                f"{query[:60] or '(no question yet)'!r} ({item_id[:8]})"
                for item_id, query in cited[:5]
            )
            more = f" and {len(cited) - 5} more" if len(cited) > 5 else ""
            raise Conflict(
                f"cannot delete {document.name!r}: evidence in {len(cited)} item(s) points at "
                f"it: {shown}{more}"
            )
        conn.execute(documents.delete().where(documents.c.id == document.id))
        bump_corpus_version(conn, document.project_id)
        still_used = conn.execute(
            sa.select(documents.c.id).where(documents.c.sha256 == document.sha256).limit(1)
        ).first()
    if not still_used and conn is None:  # a caller's transaction may still roll back
        ws.blobs.delete(document.sha256)


def citations(
    ws: Workspace, document: Document, *, conn: sa.Connection | None = None
) -> list[tuple[str, str, str]]:
    """:func:`cited_by` in its own read: what a page lists before a delete."""
    with reading(ws.engine, conn) as reader:
        return cited_by(reader, document.id)
