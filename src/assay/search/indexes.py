"""Where a project's indexes live and how they follow the database.

Indexes are derived data. Each one keeps a small marker file with the state of the database it
last caught up with: the project's corpus version (a counter every write of documents or
chunkings bumps, see ``store.projects.bump_corpus_version``) and the chunking's identity.
Searching compares that marker with the database, one row read whatever the corpus size, and
resynchronises only when they differ: documents whose fingerprint changed are re-added,
documents gone from the database are dropped. So a process killed between a database commit and
an index commit loses nothing: the next search repairs the index.

Several processes (``assay serve --workers N``, CLI commands) and threads share the index
folders of a workspace, so one sync of a folder runs at a time: it holds a lock file next to the
folder from reading the database to writing the marker. Without it, a sync that read the
database before another process's write could finish after that process's sync and leave the
older text in the index under the newer marker. Opening an index takes the same lock, since
opening may create the folder or empty one of an older format. Waiting for the lock ends with
Conflict after the index's lock timeout, as a busy writer lock does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import sqlalchemy as sa

from assay.corpus.chunkings import get_chunking, list_chunkings
from assay.records import Chunking, ChunkText, Hit, IndexedDocument, Project
from assay.search import SearchIndex
from assay.search.dense import DenseIndex
from assay.search.embeddings import Embedder, workspace_embedder
from assay.search.hybrid import HybridIndex
from assay.search.keyword import META_FILE, KeywordIndex
from assay.search.locking import file_lock
from assay.search.retriever import RetrieverSettings
from assay.store.db import as_utc, autocommit
from assay.store.projects import corpus_version
from assay.store.schema import chunks, documents
from assay.store.workspace import Workspace

MARKER = "assay-sync.json"
LOCK_SUFFIX = ".sync-lock"
OPEN_LOCK_TIMEOUT_SECONDS = 30.0
BATCH = 500


@dataclass(frozen=True, slots=True)
class SyncReport:
    chunking: str
    added: int
    removed: int


def open_keyword_index(ws: Workspace, project: Project, chunking: Chunking) -> KeywordIndex:
    path = ws.index_path(project.id, chunking.id, "keyword")
    with _folder_lock(path, "keyword", OPEN_LOCK_TIMEOUT_SECONDS):  # it may create the folder
        return KeywordIndex(path, project.language)


def _kept_keyword_index(ws: Workspace, project: Project, chunking: Chunking) -> KeywordIndex:
    """The chunking's keyword index, opened once per process and kept on the workspace for
    searches (opening one took a third of a search). The key holds what would make a kept
    one wrong: its folder, the chunking's creation time (a reused id) and the language; a
    folder removed since (a deleted chunking) is opened afresh."""
    path = ws.index_path(project.id, chunking.id, "keyword")
    key = f"keyword-index:{path}:{as_utc(chunking.created_at).isoformat()}:{project.language}"
    if not (path / META_FILE).exists():
        ws.forget(key)
    index: KeywordIndex = ws.shared(key, lambda: open_keyword_index(ws, project, chunking))
    return index


def open_dense_index(
    ws: Workspace, project: Project, chunking: Chunking, embedder: Embedder | str = "minilm"
) -> DenseIndex:
    """One folder per embedder, so switching embedders back and forth rebuilds nothing.
    Building a MiniLMEmbedder costs ~0.4 s (model load + sha256): callers that search often
    should pass one they keep (e.g. on the Workspace) instead of a name."""
    built = workspace_embedder(ws, embedder) if isinstance(embedder, str) else embedder
    folder = "".join(c if c.isalnum() or c in "-_." else "_" for c in built.name)
    path = ws.index_path(project.id, chunking.id, f"dense-{folder}")
    with _folder_lock(path, "dense", OPEN_LOCK_TIMEOUT_SECONDS):
        return DenseIndex(path, built, language=project.language)


def _fingerprint(sha256: str, updated_at: datetime) -> str:
    return f"{sha256[:16]}@{as_utc(updated_at).isoformat()}"


def _database_marker(ws: Workspace, project: Project, chunking: Chunking) -> str:
    """The chunking's creation time guards against a reused id (SQLite may reuse one). Read
    before every search: in autocommit (no BEGIN/ROLLBACK round trips on PostgreSQL)."""
    with autocommit(ws.engine) as conn:
        version = corpus_version(conn, project.id)
    return f"v{version}|c{chunking.id}@{as_utc(chunking.created_at).isoformat()}"


def _read_marker(path: Path) -> str | None:
    try:
        return str(json.loads((path / MARKER).read_text())["database"])
    except (OSError, ValueError, KeyError):
        return None


def _write_marker(path: Path, marker: str) -> None:
    tmp = path / f"{MARKER}.tmp"
    tmp.write_text(json.dumps({"database": marker}))
    os.replace(tmp, path / MARKER)


def sync_index(
    ws: Workspace,
    project: Project,
    chunking: Chunking,
    index: KeywordIndex | DenseIndex | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> SyncReport:
    """Bring one index of a chunking (keyword unless given) in line with the database."""
    index = index or open_keyword_index(ws, project, chunking)
    with _sync_lock(index):
        return _sync(ws, project, chunking, index, progress)


def _sync_lock(index: KeywordIndex | DenseIndex) -> AbstractContextManager[None]:
    kind = "keyword" if isinstance(index, KeywordIndex) else "dense"
    return _folder_lock(index.path, kind, index.lock_timeout)


def _folder_lock(path: Path, kind: str, timeout: float) -> AbstractContextManager[None]:
    """The lock on opening and syncing one index folder. Its file sits beside the folder, not
    in it: an index opening a folder refuses or empties files it does not know."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_file = path.with_name(path.name + LOCK_SUFFIX)
    return file_lock(lock_file, timeout=timeout, index=kind, path=path, lock="sync lock")


def _sync(
    ws: Workspace,
    project: Project,
    chunking: Chunking,
    index: KeywordIndex | DenseIndex,
    progress: Callable[[int, int], None] | None,
) -> SyncReport:
    path = index.path
    marker = _database_marker(ws, project, chunking)
    with ws.engine.connect() as conn:
        current = {
            row.id: _fingerprint(row.sha256, row.updated_at)
            for row in conn.execute(
                sa.select(documents.c.id, documents.c.sha256, documents.c.updated_at).where(
                    documents.c.project_id == project.id
                )
            )
        }
    held = index.indexed()
    stale = [doc_id for doc_id, fp in current.items() if held.get(doc_id) != fp]
    gone = [doc_id for doc_id in held if doc_id not in current]
    if gone and not stale:
        index.update([], delete=gone)
    for done, batch in enumerate(_batches(stale), 1):
        index.update(
            _indexed_documents(ws, chunking, batch, current), delete=gone if done == 1 else ()
        )
        if progress:
            progress(min(done * BATCH, len(stale)), len(stale))
    _write_marker(path, marker)
    return SyncReport(chunking.name, len(stale), len(gone))


def _batches(items: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(items), BATCH):
        yield items[start : start + BATCH]


def _indexed_documents(
    ws: Workspace, chunking: Chunking, doc_ids: list[str], fingerprints: dict[str, str]
) -> list[IndexedDocument]:
    with ws.engine.connect() as conn:
        texts = {
            row.id: row.text
            for row in conn.execute(
                sa.select(documents.c.id, documents.c.text).where(documents.c.id.in_(doc_ids))
            )
        }
        rows = conn.execute(
            sa.select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.start, chunks.c.end)
            .where(chunks.c.chunking_id == chunking.id, chunks.c.doc_id.in_(doc_ids))
            .order_by(chunks.c.doc_id, chunks.c.ordinal)
        ).all()
    grouped: dict[str, list[ChunkText]] = {doc_id: [] for doc_id in doc_ids}
    for row in rows:
        text = texts[row.doc_id][row.start : row.end]
        grouped[row.doc_id].append(ChunkText(row.chunk_id, row.doc_id, row.start, row.end, text))
    return [
        IndexedDocument(doc_id, fingerprints[doc_id], tuple(grouped[doc_id]))
        for doc_id in doc_ids
        if doc_id in texts
    ]


def sync_project(
    ws: Workspace, project: Project, *, progress: Callable[[int, int], None] | None = None
) -> list[SyncReport]:
    """Sync every chunking's index of the project (after ingest, deletes, new chunkings)."""
    return [sync_index(ws, project, c, progress=progress) for c in list_chunkings(ws, project)]


def _synced(
    ws: Workspace, project: Project, chunking: Chunking, index: KeywordIndex | DenseIndex
) -> KeywordIndex | DenseIndex:
    """The index, synced first when its marker is behind the database. Another process may
    be syncing it already: then this waits for it and syncs only if still behind."""
    if _read_marker(index.path) != _database_marker(ws, project, chunking):
        with _sync_lock(index):
            if _read_marker(index.path) != _database_marker(ws, project, chunking):
                _sync(ws, project, chunking, index, None)
    return index


def search(
    ws: Workspace,
    project: Project,
    query: str,
    k: int = 10,
    chunking: str | Chunking | None = None,
    retriever: RetrieverSettings | None = None,
    embedder: Embedder | None = None,
) -> list[Hit]:
    """Search one chunking (the default one unless named or given, as the caller read it)
    with the retriever's kind of index (keyword unless given); indexes catch up with the
    database first."""
    retriever = retriever or RetrieverSettings()
    selected = chunking if isinstance(chunking, Chunking) else get_chunking(ws, project, chunking)
    members: dict[str, SearchIndex] = {}
    if retriever.kind in ("keyword", "hybrid"):
        keyword = _kept_keyword_index(ws, project, selected)
        members["keyword"] = _synced(ws, project, selected, keyword)
    if retriever.kind in ("dense", "hybrid"):
        dense = open_dense_index(ws, project, selected, embedder or retriever.embedder)
        members["dense"] = _synced(ws, project, selected, dense)
    if retriever.kind == "hybrid":
        fused = HybridIndex(members, retriever.fusion_weights(), k_rrf=retriever.k_rrf)
        return fused.search(query, k)
    return members[retriever.kind].search(query, k)
