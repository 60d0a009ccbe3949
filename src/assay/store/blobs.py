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
import tempfile
from pathlib import Path

from assay.errors import NotFound


class BlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes) -> str:
        sha256 = hashlib.sha256(data).hexdigest()
        target = self.path(sha256)
        if target.exists():
            return sha256
        if not target.parent.is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return sha256

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
