"""Files become documents: size check, dedupe by content, parse, name, store, chunk.

Each file is stored in its own transaction together with its chunks for every chunking of the
project, so a failure or a killed process leaves whole documents or none. Bad files are
reported by name and the rest go on. Search indexes are derived data and catch up on their
next sync (see ``assay.search.indexes``).
"""

from __future__ import annotations

import hashlib
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import Any, Literal

import sqlalchemy as sa

from assay.corpus.anchoring import flag_stale_evidence
from assay.corpus.chunkings import IMPORTED, chunk_document, project_chunkings
from assay.corpus.documents import get_document, parse_info_to_json
from assay.errors import AssayError, InvalidInput
from assay.parsing import ParsedText, guess_media_type, parse
from assay.people.actors import account_name, acting_account
from assay.records import Document, ParseInfo, Project
from assay.store.db import reading, transaction, utcnow
from assay.store.import_lock import check_writable
from assay.store.projects import bump_corpus_version
from assay.store.schema import chunks, documents
from assay.store.workspace import Workspace

Status = Literal["added", "duplicate", "error"]


@dataclass(frozen=True, slots=True)
class Source:
    """One file to ingest: a display name, how to read it, and its size if known up front."""

    name: str
    read: Callable[[], bytes]
    size: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


KEEP_TEXTLESS = "keep_textless_documents"
"""The project setting that keeps files without extractable text (default: refused)."""


class NoText(InvalidInput):
    """A file yielded no text and the project does not keep such files."""


def keeps_textless(project: Project) -> bool:
    """Whether the project keeps files that yield no text (with a warning) or refuses them."""
    return bool(project.settings.get(KEEP_TEXTLESS))


def check_text(name: str, parsed: ParsedText, media_type: str, project: Project) -> None:
    """Refuse a file without extractable text unless the project keeps such files."""
    if parsed.text.strip() or keeps_textless(project):
        return
    why = (
        f"Assay reads no text from {media_type} files"
        if parsed.parser == "none"
        else "the file holds no text (a scanned PDF is only images; run OCR on it first)"
    )
    raise NoText(
        f"{name}: no text could be extracted ({why}); not added. Upload text, Markdown, CSV, "
        f"JSON, HTML, PDF or Word files, or let the project keep files without text "
        f"(assay projects settings --keep-textless)"
    )


@dataclass(frozen=True, slots=True)
class Outcome:
    source: str
    status: Status
    message: str = ""
    doc_id: str = ""
    name: str = ""
    warnings: tuple[str, ...] = ()
    reason: str = ""
    """Why a file was refused, when it is one a page explains: ``no_text``."""


@dataclass
class IngestReport:
    outcomes: list[Outcome] = field(default_factory=list)

    def _with(self, status: Status) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == status]

    @property
    def added(self) -> list[Outcome]:
        return self._with("added")

    @property
    def duplicates(self) -> list[Outcome]:
        return self._with("duplicate")

    @property
    def errors(self) -> list[Outcome]:
        return self._with("error")


def sources_from_paths(paths: Iterable[str | Path]) -> Iterator[Source | Outcome]:
    """Files named directly, files inside folders (recursively, hidden ones skipped), ``-`` for
    standard input. A path that does not exist yields an error outcome."""
    for raw in paths:
        if str(raw) == "-":
            data = sys.stdin.buffer.read()
            yield Source("stdin.txt", _constant(data), len(data), {"path": "-"})
            continue
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                rel = child.relative_to(path)
                if child.is_file() and not any(part.startswith(".") for part in rel.parts):
                    yield _file_source(child, rel)
        elif path.is_file():
            yield _file_source(path, PurePath(path.name))
        else:
            yield Outcome(str(raw), "error", f"{raw}: no such file or folder")


def _constant(data: bytes) -> Callable[[], bytes]:
    return lambda: data


def _file_source(path: Path, rel: PurePath) -> Source:
    stat = path.stat()
    modified = datetime.fromtimestamp(stat.st_mtime, UTC).isoformat()
    return Source(
        path.name,
        path.read_bytes,
        stat.st_size,
        {"path": rel.as_posix(), "last_modified": modified},
    )


def ingest_paths(
    ws: Workspace,
    project: Project,
    paths: Iterable[str | Path],
    *,
    author: int | None = None,
    progress: Callable[[Outcome], None] | None = None,
) -> IngestReport:
    """Ingest files and folders; every file gets an outcome, bad files never stop the rest."""
    report = IngestReport()
    for item in sources_from_paths(paths):
        outcome = item if isinstance(item, Outcome) else ingest_source(ws, project, item, author)
        report.outcomes.append(outcome)
        if progress:
            progress(outcome)
    return report


def ingest_source(
    ws: Workspace, project: Project, source: Source, author: int | None = None
) -> Outcome:
    try:
        document, duplicate_of = _store(ws, project, source, author, require_text=True)
    except NoText as exc:
        return Outcome(source.name, "error", str(exc), reason="no_text")
    except AssayError as exc:
        return Outcome(source.name, "error", str(exc))
    except Exception as exc:  # a parser bug must not stop a batch of a thousand files
        return Outcome(source.name, "error", f"{source.name}: unexpected error: {exc!r}")
    if duplicate_of:
        return Outcome(
            source.name,
            "duplicate",
            f"{source.name}: same content as document {duplicate_of.name!r}; not added again",
            duplicate_of.id,
            duplicate_of.name,
        )
    return Outcome(
        source.name, "added", "", document.id, document.name, document.parse_info.warnings
    )


def ingest_bytes(
    ws: Workspace,
    project: Project,
    name: str,
    data: bytes,
    *,
    metadata: dict[str, Any] | None = None,
    author: int | None = None,
    conn: sa.Connection | None = None,
) -> Document:
    """Store one file's bytes as a document (or return the existing one with the same bytes).

    A file without extractable text is kept (with a warning) whatever the project's setting:
    imports and scripts call this; uploads and ``assay ingest`` go through
    :func:`ingest_source`, which applies the setting."""
    source = Source(name, _constant(data), len(data), dict(metadata or {}))
    document, duplicate_of = _store(ws, project, source, author, conn=conn)
    return duplicate_of or document


def _store(
    ws: Workspace,
    project: Project,
    source: Source,
    author: int | None,
    *,
    conn: sa.Connection | None = None,
    require_text: bool = False,
) -> tuple[Document, Document | None]:
    limit = ws.settings.max_file_bytes
    if source.size is not None and source.size > limit:
        raise InvalidInput(_over_limit(source.name, source.size, ws.settings.max_file_mb))
    data = source.read()
    if len(data) > limit:
        raise InvalidInput(_over_limit(source.name, len(data), ws.settings.max_file_mb))
    sha256 = hashlib.sha256(data).hexdigest()
    existing = _find_by_sha(ws, project, sha256, conn)
    if existing is not None:
        return existing, existing
    media_type = guess_media_type(source.name, data)
    parsed = parse(
        source.name,
        data,
        media_type,
        fallback_encoding=ws.settings.text_fallback_encoding or None,
    )
    if require_text:
        check_text(source.name, parsed, media_type, project)
    ws.blobs.put(data)
    info = ParseInfo(parsed.parser, parsed.pages, parsed.warnings, parsed.page_starts)
    now = utcnow()
    values: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "project_id": project.id,
        "media_type": media_type,
        "size": len(data),
        "sha256": sha256,
        "text": parsed.text,
        "notes": "",
        "metadata": source.metadata,
        "created_at": now,
        "updated_at": now,
    }
    with transaction(ws.engine, conn) as conn:
        check_writable(conn, project.id)
        author = author if author is not None else acting_account(ws, conn=conn)
        values["name"] = unique_name(conn, project.id, _clean_name(source.name))
        conn.execute(
            documents.insert().values(
                parse_info=parse_info_to_json(info), author_id=author, **values
            )
        )
        # Chunkings are read inside the transaction so a chunking created meanwhile either
        # sees this document or is seen here: every chunking covers every document.
        for chunking in project_chunkings(conn, project.id):
            chunk_document(conn, chunking, values["id"], parsed.text)
        bump_corpus_version(conn, project.id)
        shown = account_name(ws, author, conn=conn)
    return Document(parse_info=info, author=shown, **values), None


def _over_limit(name: str, size: int, limit_mb: float) -> str:
    return f"{name}: {size / 1048576:.3g} MB is over the {limit_mb:g} MB limit (ASSAY_MAX_FILE_MB)"


def _find_by_sha(
    ws: Workspace, project: Project, sha256: str, conn: sa.Connection | None
) -> Document | None:
    with reading(ws.engine, conn) as reader:
        doc_id = reader.scalar(
            sa.select(documents.c.id)
            .where(documents.c.project_id == project.id, documents.c.sha256 == sha256)
            .limit(1)
        )
    return get_document(ws, project, doc_id, conn=conn) if doc_id else None


def _clean_name(name: str) -> str:
    cleaned = "".join(ch for ch in PurePath(name.replace("\\", "/")).name if ord(ch) >= 32)
    return cleaned.strip() or "unnamed"


def unique_name(conn: sa.Connection, project_id: int, name: str) -> str:
    """``report.pdf`` → ``report-1.pdf`` → ``report-2.pdf`` while the name is taken.

    Exact lookups on the (project_id, name) index, a batch of candidates at a time, so the
    cost follows the number of same-named documents, not the size of the project.
    """
    if not _taken(conn, project_id, [name]):
        return name
    path = PurePath(name)
    stem, suffix = (path.stem, path.suffix) if path.stem else (name, "")
    first = 1
    while True:
        candidates = [f"{stem}-{n}{suffix}" for n in range(first, first + NAME_BATCH)]
        taken = _taken(conn, project_id, candidates)
        free = next((c for c in candidates if c not in taken), None)
        if free is not None:
            return free
        first += NAME_BATCH


NAME_BATCH = 32


def _taken(conn: sa.Connection, project_id: int, names: list[str]) -> set[str]:
    return set(
        conn.scalars(
            sa.select(documents.c.name).where(
                documents.c.project_id == project_id, documents.c.name.in_(names)
            )
        )
    )


@dataclass(frozen=True, slots=True)
class ReplaceReport:
    document: Document
    stale_evidence: int
    """Evidence whose passage no longer matches the new text: flagged, offsets unchanged."""
    dropped_imported_chunks: int
    """Chunks of imported chunkings for this document, removed because their offsets no
    longer fit the new text."""


def replace_document(
    ws: Workspace,
    project: Project,
    document: Document,
    name: str,
    data: bytes,
    *,
    actor: int | None = None,
    conn: sa.Connection | None = None,
) -> ReplaceReport:
    """Replace a document's file: re-parse, re-chunk, and flag evidence that no longer matches.

    The document keeps its id and name; evidence is never moved to a new place. A file without
    extractable text is refused (:class:`NoText`) unless the project keeps such files. Items whose
    evidence went stale need review (:func:`assay.corpus.anchoring.flag_stale_evidence`); ``actor``
    (an account id; default: :func:`acting_account`) is recorded in their history.
    """
    if len(data) > ws.settings.max_file_bytes:
        raise InvalidInput(_over_limit(name, len(data), ws.settings.max_file_mb))
    media_type = guess_media_type(name, data)
    fallback = ws.settings.text_fallback_encoding or None
    parsed = parse(name, data, media_type, fallback_encoding=fallback)
    check_text(name, parsed, media_type, project)
    sha256 = ws.blobs.put(data)
    info = ParseInfo(parsed.parser, parsed.pages, parsed.warnings, parsed.page_starts)
    dropped = 0
    with transaction(ws.engine, conn) as conn:
        check_writable(conn, project.id)
        conn.execute(
            documents.update()
            .where(documents.c.id == document.id)
            .values(
                media_type=media_type,
                size=len(data),
                sha256=sha256,
                text=parsed.text,
                parse_info=parse_info_to_json(info),
                updated_at=utcnow(),
            )
        )
        for chunking in project_chunkings(conn, project.id):
            removed = conn.execute(
                chunks.delete().where(
                    chunks.c.chunking_id == chunking.id, chunks.c.doc_id == document.id
                )
            ).rowcount
            if chunking.method == IMPORTED:
                dropped += removed
            chunk_document(conn, chunking, document.id, parsed.text)
        bump_corpus_version(conn, project.id)
        stale = flag_stale_evidence(
            conn,
            project.id,
            document.id,
            document.name,
            parsed.text,
            actor if actor is not None else acting_account(ws, conn=conn),
        )
        return ReplaceReport(get_document(ws, project, document.id, conn=conn), stale, dropped)
