"""Embedded dense search: exact cosine similarity over float32 vectors kept in numpy files.

One index folder per project and chunking, holding immutable *segments* and one manifest:

``seg-N.npy``
    the chunk vectors, ``(rows, dim)`` float32, L2-normalised, opened as a memory map;
``seg-N.json``
    per row: chunk_id, doc_id, start, end and the byte offset of its text in ``seg-N.txt``;
``assay-dense.json``
    the manifest: embedder name and dim, the live segments, their dead rows, and
    ``doc_id -> fingerprint`` of every indexed document.

An update embeds the new chunks, appends them as a new segment, marks the old rows of the
changed or deleted documents dead, and writes the manifest last (temp file, fsync,
``os.replace``). Files are never changed once written, so a process killed at any moment
leaves the previous manifest and every file it names intact; files no manifest names are
swept away by the next update. When more than 30 % of the rows are dead, or segments pile
up, all live rows are rewritten into one segment.

Search is brute force (matrix-vector product, then ``argpartition``): exact, and fast enough
for the corpora of a gold dataset (figures in benchmarks/dense_search.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import Conflict, InvalidInput
from assay.records import Hit, IndexedDocument
from assay.search.analysis import build_analyzer, highlight_terms, make_snippet, query_terms
from assay.search.embeddings import Embedder

FORMAT = 1
MANIFEST = "assay-dense.json"
LOCK_FILE = "assay-dense.lock"
LOCK_TIMEOUT_SECONDS = 30.0
DEAD_SHARE_TO_COMPACT = 0.30
MAX_SEGMENTS = 16
EMBED_BATCH = 1024
"""Chunks embedded per call, so progress is steady and memory stays flat."""


@dataclass(slots=True)
class _Segment:
    """One immutable segment, loaded: vectors and text as memory maps, metadata in lists."""

    id: int
    vectors: np.ndarray
    chunk_ids: list[str]
    doc_ids: list[str]
    starts: list[int]
    ends: list[int]
    offsets: list[int]
    text: np.ndarray | None
    rows_of: dict[str, list[int]] = field(default_factory=dict)

    def chunk_text(self, row: int) -> str:
        if self.text is None:
            return ""
        return bytes(self.text[self.offsets[row] : self.offsets[row + 1]]).decode("utf-8")


@dataclass(slots=True)
class _Manifest:
    embedder: str
    dim: int
    segments: list[tuple[int, int]]
    """(segment id, rows), oldest first."""
    dead: dict[int, list[int]]
    docs: dict[str, str]
    next_segment: int

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "embedder": self.embedder,
            "dim": self.dim,
            "segments": [{"id": sid, "rows": rows} for sid, rows in self.segments],
            "dead": {str(sid): rows for sid, rows in sorted(self.dead.items()) if rows},
            "docs": self.docs,
            "next_segment": self.next_segment,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _Manifest:
        return cls(
            embedder=str(data["embedder"]),
            dim=int(data["dim"]),
            segments=[(int(s["id"]), int(s["rows"])) for s in data["segments"]],
            dead={int(sid): [int(r) for r in rows] for sid, rows in data["dead"].items()},
            docs={str(k): str(v) for k, v in data["docs"].items()},
            next_segment=int(data["next_segment"]),
        )


class DenseIndex:
    """Cosine search over the chunks of one project, stored in the folder `path`.

    `embedder` turns chunks and queries into vectors; an index built by another embedder (or
    format) is emptied on open, so the sync code refills it. `language` only picks the
    stemmer that marks query words in snippets. Any number of instances may read the same
    folder; writers take a file lock and wait up to `lock_timeout` seconds, then raise
    Conflict.
    """

    def __init__(
        self,
        path: Path,
        embedder: Embedder,
        *,
        language: str = "en",
        lock_timeout: float = LOCK_TIMEOUT_SECONDS,
    ) -> None:
        self.path = Path(path)
        self.embedder = embedder
        self.lock_timeout = lock_timeout
        self._language = language
        self._analyzer = build_analyzer(language)
        self._segments: dict[int, _Segment] = {}
        self._manifest: _Manifest | None = None
        self._manifest_stamp: tuple[int, int, int] | None = None
        self._open()

    def __repr__(self) -> str:
        return f"DenseIndex({str(self.path)!r}, embedder={self.embedder.name!r})"

    # -- opening ---------------------------------------------------------------------------

    def _open(self) -> None:
        manifest_path = self.path / MANIFEST
        foreign = self.path.is_dir() and any(
            entry.name != LOCK_FILE and not entry.name.endswith(".tmp")
            for entry in self.path.iterdir()
        )
        if foreign and not manifest_path.exists():
            raise InvalidInput(
                f"{self.path} is not empty and holds no Assay dense index ({MANIFEST} is "
                "missing); point the index at an empty or new folder."
            )
        self.path.mkdir(parents=True, exist_ok=True)
        if not self._fits(self._read_manifest()):
            with self._locked():
                current = self._read_manifest()
                if not self._fits(current):
                    empty = _Manifest(self.embedder.name, self.embedder.dim, [], {}, {}, 1)
                    empty.next_segment = current.next_segment if current else 1
                    self._write_manifest(empty)
                    self._sweep(empty)

    def _fits(self, manifest: _Manifest | None) -> bool:
        """Whether `manifest` was written for this index's embedder."""
        wanted = (self.embedder.name, self.embedder.dim)
        return manifest is not None and (manifest.embedder, manifest.dim) == wanted

    def _read_manifest(self) -> _Manifest | None:
        """The manifest on disk (cached while the file is unchanged); None if absent, or
        unreadable or of another format (the index is then rebuilt)."""
        manifest_path = self.path / MANIFEST
        try:
            stat = manifest_path.stat()
        except FileNotFoundError:
            return None
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if stamp == self._manifest_stamp and self._manifest is not None:
            return self._manifest
        try:
            data = json.loads(manifest_path.read_text(encoding="utf-8"))
            manifest = _Manifest.from_json(data) if data.get("format") == FORMAT else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            manifest = None
        self._manifest, self._manifest_stamp = manifest, stamp
        wanted = {sid for sid, _rows in manifest.segments} if manifest else set()
        for sid in list(self._segments):
            if sid not in wanted:
                del self._segments[sid]
        return manifest

    def _current(self) -> _Manifest:
        manifest = self._read_manifest()
        if manifest is None:
            raise InvalidInput(
                f"The dense index manifest {self.path / MANIFEST} is missing or unreadable; "
                "delete the folder and let Assay rebuild it."
            )
        return manifest

    def _segment(self, sid: int) -> _Segment:
        segment = self._segments.get(sid)
        if segment is None:
            segment = _load_segment(self.path, sid)
            self._segments[sid] = segment
        return segment

    # -- writing ---------------------------------------------------------------------------

    def update(self, add: Sequence[IndexedDocument], delete: Collection[str] = ()) -> None:
        """Remove all chunks of the doc_ids in `delete` and of every doc in `add`, then add the
        chunks of `add`; durable when it returns. Idempotent. If `add` names a doc_id twice,
        the last one wins. Chunks are embedded before the write lock is taken."""
        latest = {doc.doc_id: doc for doc in add}
        for doc in latest.values():
            _check_document(doc)
        gone = set(delete) | set(latest)
        if not gone:
            return
        rows = [chunk for doc in latest.values() for chunk in doc.chunks]
        vectors = self._embed([chunk.text for chunk in rows])
        with self._locked():
            manifest = _Manifest.from_json(self._current().to_json())  # a copy to edit
            doomed = self._rows_of(manifest, gone)
            docs = {d: fp for d, fp in manifest.docs.items() if d not in gone}
            docs.update((doc.doc_id, doc.fingerprint) for doc in latest.values())
            if not rows and not doomed and docs == manifest.docs:
                return
            for sid, dead_rows in doomed.items():
                manifest.dead[sid] = sorted(set(manifest.dead.get(sid, [])) | set(dead_rows))
            manifest.docs = docs
            if rows:
                sid = manifest.next_segment
                manifest.next_segment += 1
                metadata = [(c.chunk_id, c.doc_id, c.start, c.end, c.text) for c in rows]
                _write_segment(self.path, sid, iter([vectors]), metadata, *vectors.shape)
                manifest.segments.append((sid, len(rows)))
            manifest.segments = [
                (sid, n) for sid, n in manifest.segments if len(manifest.dead.get(sid, [])) < n
            ]
            manifest.dead = {
                sid: manifest.dead[sid] for sid, _n in manifest.segments if sid in manifest.dead
            }
            if _needs_compaction(manifest):
                self._compact(manifest)
            self._write_manifest(manifest)
            self._sweep(manifest)

    def _embed(self, texts: list[str]) -> np.ndarray:
        parts = [
            self.embedder.embed(texts[first : first + EMBED_BATCH])
            for first in range(0, len(texts), EMBED_BATCH)
        ]
        if not parts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        vectors = np.concatenate(parts).astype(np.float32, copy=False)
        if vectors.shape != (len(texts), self.embedder.dim):
            raise InvalidInput(
                f"Embedder {self.embedder.name!r} returned vectors of shape {vectors.shape} "
                f"for {len(texts)} texts; the dense index in {self.path} expects dim "
                f"{self.embedder.dim}."
            )
        return vectors

    def _rows_of(self, manifest: _Manifest, doc_ids: Collection[str]) -> dict[int, list[int]]:
        """Live rows per segment holding chunks of `doc_ids`."""
        found: dict[int, list[int]] = {}
        for sid, _n in manifest.segments:
            segment = self._segment(sid)
            dead = set(manifest.dead.get(sid, []))
            rows = [r for d in doc_ids for r in segment.rows_of.get(d, []) if r not in dead]
            if rows:
                found[sid] = rows
        return found

    def _compact(self, manifest: _Manifest) -> None:
        """Rewrite all live rows into one new segment, in their current order."""
        sid = manifest.next_segment
        manifest.next_segment += 1
        live = []
        for old, n in manifest.segments:
            alive = np.ones(n, dtype=bool)
            alive[manifest.dead.get(old, [])] = False
            live.append((self._segment(old), np.flatnonzero(alive)))
        total = sum(len(rows) for _segment, rows in live)
        if total == 0:
            manifest.segments, manifest.dead = [], {}
            return
        metadata = (
            (seg.chunk_ids[r], seg.doc_ids[r], seg.starts[r], seg.ends[r], seg.chunk_text(r))
            for seg, rows in live
            for r in rows.tolist()
        )
        _write_segment(self.path, sid, _stream_rows(live), metadata, total, manifest.dim)
        manifest.segments, manifest.dead = [(sid, total)], {}

    def _write_manifest(self, manifest: _Manifest) -> None:
        target = self.path / MANIFEST
        _write_durably(target, json.dumps(manifest.to_json()).encode("utf-8"))
        _fsync_folder(self.path)
        self._read_manifest()

    def _sweep(self, manifest: _Manifest) -> None:
        """Delete segment and temp files the manifest does not name (left by crashes or
        superseded by compaction). Readers holding them open keep their memory maps."""
        keep = {f"seg-{sid:06d}{ext}" for sid, _n in manifest.segments for ext in _EXTS}
        for entry in self.path.iterdir():
            ours = entry.name.startswith("seg-") or entry.name.startswith(MANIFEST)
            if ours and entry.name not in keep and entry.name != MANIFEST:
                with contextlib.suppress(FileNotFoundError):
                    entry.unlink()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """An exclusive lock on the folder across processes, waiting up to lock_timeout."""
        with (self.path / LOCK_FILE).open("a+b") as handle:
            deadline = time.monotonic() + self.lock_timeout
            pause = 0.01
            while True:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise Conflict(
                            f"The dense index in {self.path} is being written by another "
                            f"process (waited {self.lock_timeout:g} s for its lock); try again "
                            "when that update has finished."
                        ) from None
                    time.sleep(pause)
                    pause = min(pause * 2, 0.5)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    # -- reading ---------------------------------------------------------------------------

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Best k chunks by cosine similarity to the query, rank 1 first; a blank query
        returns []. Ties go to the chunk indexed first."""
        if k < 1:
            raise InvalidInput(f"k must be at least 1 to search the dense index, not {k}.")
        if not query.strip():
            return []
        manifest = self._current()
        if not manifest.segments:
            return []
        q = self._embed([query])[0]
        if not q.any():
            return []  # the embedder found nothing to go on (e.g. no words)
        candidates: list[tuple[float, int, int]] = []
        for position, (sid, n) in enumerate(manifest.segments):
            segment = self._segment(sid)
            scores = segment.vectors @ q
            dead = manifest.dead.get(sid)
            if dead:
                scores[dead] = -np.inf
            live = n - len(dead or ())
            take = min(k, live)
            if take <= 0:
                continue
            top = np.argpartition(-scores, take - 1)[:take] if take < n else np.arange(n)
            candidates.extend(
                (float(scores[row]), position, int(row)) for row in top if scores[row] > -np.inf
            )
        candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
        terms = highlight_terms(self._analyzer, query_terms(self._analyzer, query), self._language)
        hits: list[Hit] = []
        for rank, (score, position, row) in enumerate(candidates[:k], start=1):
            segment = self._segment(manifest.segments[position][0])
            text = segment.chunk_text(row)
            snippet, highlights = make_snippet(self._analyzer, text, terms)
            hits.append(
                Hit(
                    doc_id=segment.doc_ids[row],
                    chunk_id=segment.chunk_ids[row],
                    start=segment.starts[row],
                    end=segment.ends[row],
                    score=score,
                    rank=rank,
                    text=text,
                    snippet=snippet,
                    highlights=highlights,
                )
            )
        return hits

    def indexed(self) -> dict[str, str]:
        """doc_id -> fingerprint of every document the index holds (chunks or not)."""
        return dict(self._current().docs)

    def stats(self) -> dict[str, int]:
        """Rows, dead rows and segments: for diagnostics and tests."""
        manifest = self._current()
        return {
            "rows": sum(n for _sid, n in manifest.segments),
            "dead": sum(len(rows) for rows in manifest.dead.values()),
            "segments": len(manifest.segments),
        }


_EXTS = (".npy", ".json", ".txt")


def _needs_compaction(manifest: _Manifest) -> bool:
    rows = sum(n for _sid, n in manifest.segments)
    dead = sum(len(r) for r in manifest.dead.values())
    return len(manifest.segments) > MAX_SEGMENTS or (
        rows > 0 and dead > DEAD_SHARE_TO_COMPACT * rows
    )


def _stream_rows(live: list[tuple[_Segment, np.ndarray]]) -> Iterator[np.ndarray]:
    for segment, rows in live:
        for first in range(0, len(rows), 65_536):
            yield np.asarray(segment.vectors[rows[first : first + 65_536]])


def _write_segment(
    folder: Path,
    sid: int,
    blocks: Iterator[np.ndarray],
    chunks: Iterable[tuple[str, str, int, int, str]],
    rows: int,
    dim: int,
) -> None:
    """Write the three files of segment `sid`, each through a temp file and fsync. Vectors
    come in row blocks, so compaction never holds a large index twice in memory."""
    base = folder / f"seg-{sid:06d}"
    tmp = base.with_suffix(".npy.tmp")
    matrix = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(rows, dim))
    filled = 0
    for block in blocks:
        matrix[filled : filled + len(block)] = block
        filled += len(block)
    matrix.flush()
    del matrix
    _fsync_file(tmp)
    os.replace(tmp, base.with_suffix(".npy"))

    meta: dict[str, list[Any]] = {k: [] for k in ("chunk_id", "doc_id", "start", "end")}
    offsets = [0]
    text_tmp = base.with_suffix(".txt.tmp")
    with text_tmp.open("wb") as handle:
        for chunk_id, doc_id, start, end, text in chunks:
            meta["chunk_id"].append(chunk_id)
            meta["doc_id"].append(doc_id)
            meta["start"].append(start)
            meta["end"].append(end)
            data = text.encode("utf-8")
            handle.write(data)
            offsets.append(offsets[-1] + len(data))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(text_tmp, base.with_suffix(".txt"))
    meta["offsets"] = offsets
    _write_durably(base.with_suffix(".json"), json.dumps(meta).encode("utf-8"))


def _load_segment(folder: Path, sid: int) -> _Segment:
    base = folder / f"seg-{sid:06d}"
    try:
        vectors = np.load(base.with_suffix(".npy"), mmap_mode="r")
        meta = json.loads(base.with_suffix(".json").read_text(encoding="utf-8"))
        text_path = base.with_suffix(".txt")
        text = np.memmap(text_path, dtype=np.uint8, mode="r") if text_path.stat().st_size else None
    except (OSError, ValueError) as error:
        raise InvalidInput(
            f"Segment {base.name} of the dense index in {folder} is missing or damaged "
            f"({error}); delete the folder and let Assay rebuild it."
        ) from error
    segment = _Segment(
        id=sid,
        vectors=vectors,
        chunk_ids=meta["chunk_id"],
        doc_ids=meta["doc_id"],
        starts=meta["start"],
        ends=meta["end"],
        offsets=meta["offsets"],
        text=text,
    )
    for row, doc_id in enumerate(segment.doc_ids):
        segment.rows_of.setdefault(doc_id, []).append(row)
    return segment


def _write_durably(target: Path, data: bytes) -> None:
    tmp = target.with_name(target.name + ".tmp")
    with tmp.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, target)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_folder(path: Path) -> None:
    """Make the renames in `path` durable (a directory fsync; a no-op where unsupported)."""
    with contextlib.suppress(OSError):
        _fsync_file(path)


def _check_document(doc: IndexedDocument) -> None:
    for chunk in doc.chunks:
        if chunk.doc_id != doc.doc_id:
            raise InvalidInput(
                f"Chunk {chunk.chunk_id!r} says it belongs to document {chunk.doc_id!r} but was "
                f"handed to the dense index inside document {doc.doc_id!r}."
            )
