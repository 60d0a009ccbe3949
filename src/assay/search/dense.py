"""Embedded dense search: exact cosine similarity over float32 vectors kept in numpy files.

One index folder per project and chunking, holding immutable *segments* and one manifest
(their files are described in :mod:`assay.search.dense_storage`).

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
import json
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np

from assay.errors import InvalidInput
from assay.records import Hit, IndexedDocument
from assay.search import planned_update
from assay.search.analysis import (
    build_analyzer,
    highlight_terms,
    query_terms,
    ranked_hits,
    stop_terms,
)
from assay.search.dense_storage import (
    FORMAT,
    MANIFEST,
    SEGMENT_SUFFIXES,
    Manifest,
    Segment,
    fsync_folder,
    load_segment,
    segment_stem,
    stream_rows,
    write_durably,
    write_segment,
)
from assay.search.embeddings import Embedder
from assay.search.locking import file_lock

LOCK_FILE = "assay-dense.lock"
LOCK_TIMEOUT_SECONDS = 30.0
DEAD_SHARE_TO_COMPACT = 0.30
MAX_SEGMENTS = 16
EMBED_BATCH = 1024
"""Chunks embedded per call, so progress is steady and memory stays flat."""


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
        self._stop = stop_terms(self._analyzer, language)
        self._segments: dict[int, Segment] = {}
        self._manifest: Manifest | None = None
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
                    empty = Manifest(self.embedder.name, self.embedder.dim, [], {}, {}, 1)
                    empty.next_segment = current.next_segment if current else 1
                    self._write_manifest(empty)
                    self._sweep(empty)

    def _fits(self, manifest: Manifest | None) -> bool:
        """Whether `manifest` was written for this index's embedder."""
        wanted = (self.embedder.name, self.embedder.dim)
        return manifest is not None and (manifest.embedder, manifest.dim) == wanted

    def _read_manifest(self) -> Manifest | None:
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
            manifest = Manifest.from_json(data) if data.get("format") == FORMAT else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            manifest = None
        self._manifest, self._manifest_stamp = manifest, stamp
        wanted = {sid for sid, _rows in manifest.segments} if manifest else set()
        for sid in list(self._segments):
            if sid not in wanted:
                del self._segments[sid]
        return manifest

    def _current(self) -> Manifest:
        manifest = self._read_manifest()
        if manifest is None:
            raise InvalidInput(
                f"The dense index manifest {self.path / MANIFEST} is missing or unreadable; "
                "delete the folder and let Assay rebuild it."
            )
        return manifest

    def _segment(self, sid: int) -> Segment:
        segment = self._segments.get(sid)
        if segment is None:
            segment = load_segment(self.path, sid)
            self._segments[sid] = segment
        return segment

    # -- writing ---------------------------------------------------------------------------

    def update(self, add: Sequence[IndexedDocument], delete: Collection[str] = ()) -> None:
        """Remove all chunks of the doc_ids in `delete` and of every doc in `add`, then add the
        chunks of `add`; durable when it returns. Idempotent. If `add` names a doc_id twice,
        the last one wins. Chunks are embedded before the write lock is taken."""
        latest, gone = planned_update(add, delete, "dense")
        if not gone:
            return
        rows = [chunk for doc in latest.values() for chunk in doc.chunks]
        vectors = self._embed([chunk.text for chunk in rows])
        with self._locked():
            manifest = Manifest.from_json(self._current().to_json())  # a copy to edit
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
                write_segment(self.path, sid, iter([vectors]), metadata, *vectors.shape)
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

    def _rows_of(self, manifest: Manifest, doc_ids: Collection[str]) -> dict[int, list[int]]:
        """Live rows per segment holding chunks of `doc_ids`."""
        found: dict[int, list[int]] = {}
        for sid, _n in manifest.segments:
            segment = self._segment(sid)
            dead = set(manifest.dead.get(sid, []))
            rows = [r for d in doc_ids for r in segment.rows_of.get(d, []) if r not in dead]
            if rows:
                found[sid] = rows
        return found

    def _compact(self, manifest: Manifest) -> None:
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
        write_segment(self.path, sid, stream_rows(live), metadata, total, manifest.dim)
        manifest.segments, manifest.dead = [(sid, total)], {}

    def _write_manifest(self, manifest: Manifest) -> None:
        target = self.path / MANIFEST
        write_durably(target, json.dumps(manifest.to_json()).encode("utf-8"))
        fsync_folder(self.path)
        self._read_manifest()

    def _sweep(self, manifest: Manifest) -> None:
        """Delete segment and temp files the manifest does not name (left by crashes or
        superseded by compaction). Readers holding them open keep their memory maps."""
        keep = {
            segment_stem(sid) + suffix
            for sid, _n in manifest.segments
            for suffix in SEGMENT_SUFFIXES
        }
        for entry in self.path.iterdir():
            ours = entry.name.startswith("seg-") or entry.name.startswith(MANIFEST)
            if ours and entry.name not in keep and entry.name != MANIFEST:
                with contextlib.suppress(FileNotFoundError):
                    entry.unlink()

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        """An exclusive lock on the folder across processes, waiting up to lock_timeout."""
        return file_lock(
            self.path / LOCK_FILE, timeout=self.lock_timeout, index="dense", path=self.path
        )

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
        terms = set(highlight_terms(query_terms(self._analyzer, query), self._stop))
        ranked = []
        for score, position, row in candidates[:k]:
            segment = self._segment(manifest.segments[position][0])
            ranked.append(
                (
                    segment.doc_ids[row],
                    segment.chunk_ids[row],
                    segment.starts[row],
                    segment.ends[row],
                    score,
                    segment.chunk_text(row),
                )
            )
        return ranked_hits(self._analyzer, terms, ranked)

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


def _needs_compaction(manifest: Manifest) -> bool:
    rows = sum(n for _sid, n in manifest.segments)
    dead = sum(len(r) for r in manifest.dead.values())
    return len(manifest.segments) > MAX_SEGMENTS or (
        rows > 0 and dead > DEAD_SHARE_TO_COMPACT * rows
    )
