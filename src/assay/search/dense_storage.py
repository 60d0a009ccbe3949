"""The files of a dense index folder: immutable segments and the manifest that names them.

``seg-N.npy``
    the chunk vectors, ``(rows, dim)`` float32, L2-normalised, opened as a memory map;
``seg-N.json``
    per row: chunk_id, doc_id, start, end and the byte offset of its text in ``seg-N.txt``;
``assay-dense.json``
    the manifest: embedder name and dim, the live segments, their dead rows, and
    ``doc_id -> fingerprint`` of every indexed document.

Every file goes through a temp file, fsync and ``os.replace``, and is never changed once
written; :mod:`assay.search.dense` decides when to write which.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from assay.errors import InvalidInput

FORMAT = 1
MANIFEST = "assay-dense.json"
SEGMENT_SUFFIXES = (".npy", ".json", ".txt")
ROWS_PER_BLOCK = 65_536
"""Vectors copied at a time when a segment is rewritten."""


def segment_stem(sid: int) -> str:
    """The file name of segment `sid` without its suffix."""
    return f"seg-{sid:06d}"


@dataclass(slots=True)
class Segment:
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
class Manifest:
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
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        return cls(
            embedder=str(data["embedder"]),
            dim=int(data["dim"]),
            segments=[(int(s["id"]), int(s["rows"])) for s in data["segments"]],
            dead={int(sid): [int(r) for r in rows] for sid, rows in data["dead"].items()},
            docs={str(k): str(v) for k, v in data["docs"].items()},
            next_segment=int(data["next_segment"]),
        )


def stream_rows(live: list[tuple[Segment, np.ndarray]]) -> Iterator[np.ndarray]:
    """The vectors of the given rows of each segment, in blocks of ROWS_PER_BLOCK."""
    for segment, rows in live:
        for first in range(0, len(rows), ROWS_PER_BLOCK):
            yield np.asarray(segment.vectors[rows[first : first + ROWS_PER_BLOCK]])


def write_segment(
    folder: Path,
    sid: int,
    blocks: Iterator[np.ndarray],
    chunks: Iterable[tuple[str, str, int, int, str]],
    rows: int,
    dim: int,
) -> None:
    """Write the three files of segment `sid`, each through a temp file and fsync. Vectors
    come in row blocks, so compaction never holds a large index twice in memory."""
    base = folder / segment_stem(sid)
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
    write_durably(base.with_suffix(".json"), json.dumps(meta).encode("utf-8"))


def load_segment(folder: Path, sid: int) -> Segment:
    """Segment `sid` of the index in `folder`; InvalidInput if a file is missing or damaged."""
    base = folder / segment_stem(sid)
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
    segment = Segment(
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


def write_durably(target: Path, data: bytes) -> None:
    """Replace `target` by `data` all at once: a temp file, fsync, then ``os.replace``."""
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


def fsync_folder(path: Path) -> None:
    """Make the renames in `path` durable (a directory fsync; a no-op where unsupported)."""
    with contextlib.suppress(OSError):
        _fsync_file(path)
