"""Named chunkings of a project and their chunks.

A chunking is a method plus parameters; its chunks are ``(doc_id, start, end)`` views of the
documents. Every chunking covers every document of its project: ingest chunks new documents
with all chunkings, and creating a chunking chunks all existing documents. Re-chunking makes a
new chunking and touches nothing else.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import sqlalchemy as sa

from assay.corpus.chunker_registry import chunk_text
from assay.errors import Conflict, InvalidInput, NotFound
from assay.records import Chunk, Chunking, Project
from assay.store.db import as_utc, count_rows, read_only, reading, transaction, utcnow
from assay.store.projects import bump_corpus_version, check_name
from assay.store.schema import chunkings, chunks, documents
from assay.store.workspace import Workspace

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` during long work."""

IMPORTED = "imported"
"""Method of chunkings brought in from other tools: their chunk ids and offsets are kept as
they came. Documents ingested later get no chunks under them (there is no rule to apply)."""


def _row_to_chunking(row: sa.Row[Any]) -> Chunking:
    return Chunking(
        id=row.id,
        project_id=row.project_id,
        name=row.name,
        method=row.method,
        params=dict(row.params or {}),
        is_default=bool(row.is_default),
        created_at=as_utc(row.created_at),
    )


def project_chunkings(conn: sa.Connection, project_id: int) -> list[Chunking]:
    rows = conn.execute(
        sa.select(chunkings)
        .where(chunkings.c.project_id == project_id)
        .order_by(chunkings.c.created_at, chunkings.c.id)
    ).all()
    return [_row_to_chunking(row) for row in rows]


def list_chunkings(
    ws: Workspace, project: Project, *, conn: sa.Connection | None = None
) -> list[Chunking]:
    with read_only(ws.engine, conn) as conn:  # every search asks: no BEGIN/ROLLBACK around it
        return project_chunkings(conn, project.id)


def get_chunking(
    ws: Workspace,
    project: Project,
    name: str | None = None,
    *,
    conn: sa.Connection | None = None,
) -> Chunking:
    """The named chunking, or the project's default one."""
    found = list_chunkings(ws, project, conn=conn)
    for chunking in found:
        if (name is None and chunking.is_default) or chunking.name == name:
            return chunking
    names = ", ".join(c.name for c in found) or "none"
    if name is None:
        raise NotFound(
            f"project {project.name!r} has no default chunking (chunkings: {names})",
            key="raised.no_default_chunking",
            project=project.name,
            names=names,
        )
    raise NotFound(
        f"project {project.name!r} has no chunking named {name!r} (chunkings: {names})",
        key="raised.no_chunking_named",
        project=project.name,
        name=name,
        names=names,
    )


def chunk_document(conn: sa.Connection, chunking: Chunking, doc_id: str, text: str) -> list[Chunk]:
    """Write the chunks of one document under one chunking (inside the caller's transaction)."""
    if chunking.method == IMPORTED:
        return []
    spans = chunk_text(text, chunking.method, chunking.params)
    rows = [
        Chunk(chunking.id, f"{doc_id}#{ordinal}", doc_id, ordinal, start, end)
        for ordinal, (start, end) in enumerate(spans)
    ]
    if rows:
        conn.execute(
            chunks.insert(),
            [
                {
                    "chunking_id": c.chunking_id,
                    "chunk_id": c.chunk_id,
                    "doc_id": c.doc_id,
                    "ordinal": c.ordinal,
                    "start": c.start,
                    "end": c.end,
                }
                for c in rows
            ],
        )
    return rows


def create_chunking(
    ws: Workspace,
    project: Project,
    name: str,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    make_default: bool = False,
    progress: Progress | None = None,
    conn: sa.Connection | None = None,
) -> Chunking:
    """Create a chunking and chunk every document of the project with it, in one transaction."""
    name = check_name(name, "chunking")
    params = dict(params or {})
    chunk_text("", method, params)  # validates method and parameters before anything is written
    with transaction(ws.engine, conn) as conn:
        _refuse_taken_name(conn, project, name)
        chunking = _insert_chunking(conn, project, name, method, params, make_default)
        doc_ids = conn.scalars(
            sa.select(documents.c.id).where(documents.c.project_id == project.id)
        ).all()
        for done, doc_id in enumerate(doc_ids, 1):
            text = conn.scalar(sa.select(documents.c.text).where(documents.c.id == doc_id))
            chunk_document(conn, chunking, doc_id, text or "")
            if progress:
                progress(done, len(doc_ids))
    return chunking


def import_chunking(
    ws: Workspace,
    project: Project,
    name: str,
    spans: Iterable[tuple[str, str, int, int]],
    *,
    params: Mapping[str, Any] | None = None,
    make_default: bool = False,
    conn: sa.Connection | None = None,
) -> Chunking:
    """Create a chunking from ``(chunk_id, doc_id, start, end)`` views that keep their ids.

    All checks run before anything is written; the first bad chunk raises InvalidInput naming
    it, and nothing is stored.
    """
    name = check_name(name, "chunking")
    with transaction(ws.engine, conn) as conn:
        _refuse_taken_name(conn, project, name)
        lengths = {
            row.id: row.length
            for row in conn.execute(
                sa.select(documents.c.id, sa.func.length(documents.c.text).label("length")).where(
                    documents.c.project_id == project.id
                )
            )
        }
        rows: list[dict[str, Any]] = []
        seen: set[str] = set()
        ordinals: dict[str, int] = {}
        for chunk_id, doc_id, start, end in spans:
            where = f"chunk {chunk_id!r}"
            if not chunk_id or chunk_id in seen:
                raise InvalidInput(f"{where}: chunk ids must be unique and not empty")
            if doc_id not in lengths:
                raise InvalidInput(f"{where}: no document {doc_id!r} in project {project.name!r}")
            if not 0 <= start < end <= lengths[doc_id]:
                raise InvalidInput(
                    f"{where}: offsets {start}..{end} are outside document {doc_id!r} "
                    f"(0..{lengths[doc_id]})"
                )
            seen.add(chunk_id)
            ordinal = ordinals.get(doc_id, 0)
            ordinals[doc_id] = ordinal + 1
            rows.append(
                {
                    "chunk_id": chunk_id,
                    "doc_id": doc_id,
                    "ordinal": ordinal,
                    "start": start,
                    "end": end,
                }
            )
        chunking = _insert_chunking(conn, project, name, IMPORTED, params, make_default)
        for row in rows:
            row["chunking_id"] = chunking.id
        if rows:
            conn.execute(chunks.insert(), rows)
    return chunking


def _refuse_taken_name(conn: sa.Connection, project: Project, name: str) -> None:
    taken = conn.execute(
        sa.select(chunkings.c.id).where(
            chunkings.c.project_id == project.id, chunkings.c.name == name
        )
    ).first()
    if taken:
        raise Conflict(
            f"project {project.name!r} already has a chunking named {name!r}",
            key="raised.chunking_name_taken",
            project=project.name,
            name=name,
        )


def _insert_chunking(
    conn: sa.Connection,
    project: Project,
    name: str,
    method: str,
    params: Mapping[str, Any] | None,
    make_default: bool,
) -> Chunking:
    """The chunking row, without chunks; a new default takes the flag from the old one."""
    if make_default:
        conn.execute(
            chunkings.update().where(chunkings.c.project_id == project.id).values(is_default=False)
        )
    chunking_id = conn.execute(
        chunkings.insert().values(
            project_id=project.id,
            name=name,
            method=method,
            params=dict(params or {}),
            is_default=make_default,
            created_at=utcnow(),
        )
    ).inserted_primary_key[0]  # type: ignore[index]
    bump_corpus_version(conn, project.id)
    row = conn.execute(sa.select(chunkings).where(chunkings.c.id == chunking_id)).one()
    return _row_to_chunking(row)


def set_default_chunking(
    ws: Workspace, project: Project, name: str, *, conn: sa.Connection | None = None
) -> Chunking:
    chunking = get_chunking(ws, project, name, conn=conn)
    with transaction(ws.engine, conn) as conn:
        conn.execute(
            chunkings.update()
            .where(chunkings.c.project_id == project.id)
            .values(is_default=chunkings.c.id == chunking.id)
        )
        return get_chunking(ws, project, name, conn=conn)


def delete_chunking(
    ws: Workspace, project: Project, name: str, *, conn: sa.Connection | None = None
) -> None:
    chunking = get_chunking(ws, project, name, conn=conn)
    if chunking.is_default:
        raise InvalidInput(
            f"chunking {name!r} is the project's default; make another one the default first"
        )
    with transaction(ws.engine, conn) as conn:
        conn.execute(chunkings.delete().where(chunkings.c.id == chunking.id))
        bump_corpus_version(conn, project.id)
    for path in ws.index_path(project.id, chunking.id).parent.glob(f"c{chunking.id}-*"):
        shutil.rmtree(path, ignore_errors=True)


def document_chunks(
    ws: Workspace, chunking: Chunking, doc_id: str, *, conn: sa.Connection | None = None
) -> list[Chunk]:
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(
            sa.select(chunks)
            .where(chunks.c.chunking_id == chunking.id, chunks.c.doc_id == doc_id)
            .order_by(chunks.c.ordinal)
        ).all()
    return [Chunk(r.chunking_id, r.chunk_id, r.doc_id, r.ordinal, r.start, r.end) for r in rows]


def count_chunks(ws: Workspace, chunking: Chunking, *, conn: sa.Connection | None = None) -> int:
    with reading(ws.engine, conn) as conn:
        return count_rows(conn, chunks, chunks.c.chunking_id == chunking.id)


def iter_chunk_spans(
    ws: Workspace,
    chunking: Chunking,
    *,
    batch_size: int = 20_000,
    conn: sa.Connection | None = None,
) -> Iterator[tuple[str, str, int, int]]:
    """``(chunk_id, doc_id, start, end)`` of every chunk, documents oldest first, in document
    order: one streamed query, so exports of a million chunks stay small in memory."""
    query = (
        sa.select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.start, chunks.c.end)
        .join(documents, documents.c.id == chunks.c.doc_id)
        .where(chunks.c.chunking_id == chunking.id)
        .order_by(documents.c.created_at, documents.c.name, chunks.c.ordinal)
    )
    with reading(ws.engine, conn) as conn:
        result = conn.execution_options(yield_per=batch_size).execute(query)
        yield from ((row[0], row[1], row[2], row[3]) for row in result)
