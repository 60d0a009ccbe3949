"""Content-addressed store for the original bytes of uploaded files.

A blob's name is the sha256 of its bytes, so the same file stored twice takes space once and
writes are idempotent. Writes go to a temporary file first and are renamed into place, so a
killed process never leaves a half-written blob under a real name. Like SQLite in WAL mode with
``synchronous=NORMAL``, blobs are not fsynced one by one: a killed process loses nothing, a power
cut may lose the last moments.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from assay.errors import NotFound

BLOCK = 1 << 20


def file_sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class BlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes) -> str:
        sha256 = hashlib.sha256(data).hexdigest()
        self._place(sha256, lambda handle: handle.write(data))
        return sha256

    def put_file(self, source: Path) -> str:
        """:meth:`put` of a file's bytes, read and copied a block at a time (a version's zip
        at 100,000 items is never held whole)."""
        sha256 = file_sha256(source)

        def copy(handle: BinaryIO) -> None:
            with source.open("rb") as reading:
                shutil.copyfileobj(reading, handle, BLOCK)

        self._place(sha256, copy)
        return sha256

    def _place(self, sha256: str, write: Callable[[BinaryIO], object]) -> None:
        """Write the blob ``sha256`` to a temporary file and rename it into place (nothing
        to do when it is there)."""
        target = self.path(sha256)
        if target.exists():
            return
        if not target.parent.is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                write(handle)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def file_hash(self, sha256: str) -> str:
        """The sha256 of the stored bytes named ``sha256`` (equal unless changed by hand)."""
        return file_sha256(self.path(sha256))

    def get(self, sha256: str) -> bytes:
        try:
            return self.path(sha256).read_bytes()
        except FileNotFoundError as exc:
            raise NotFound(f"stored file {sha256[:12]}… is missing from {self.root}") from exc

    def delete_unused(self, used: set[str]) -> int:
        """Remove blobs no document refers to; returns how many were removed."""
        removed = 0
        for path in self.root.glob("*/*"):
            if path.name not in used:
                path.unlink(missing_ok=True)
                removed += 1
        return removed
