"""Content-addressed store for the original bytes of uploaded files.

A blob's name is the sha256 of its bytes, so the same file stored twice takes space once and
writes are idempotent. Writes go to a temporary file first and are renamed into place, so a
killed process never leaves a half-written blob under a real name. Like SQLite in WAL mode with
``synchronous=NORMAL``, blobs are not fsynced one by one: a killed process loses nothing, a power
cut may lose the last moments.

In team mode on PostgreSQL (``shared`` given) every blob is saved in the database as well and the
folder is a read-through cache: a blob missing from it is fetched from the database and kept
(:mod:`assay.store.shared_files`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from assay.errors import NotFound

if TYPE_CHECKING:
    from assay.store.shared_files import SharedFiles

BLOCK = 1 << 20


def file_sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class BlobStore:
    def __init__(self, root: Path, shared: SharedFiles | None = None) -> None:
        self.root = root
        self.shared = shared

    def path(self, sha256: str) -> Path:
        """Where the blob is in this folder (it may not be there: see :meth:`local`)."""
        return self.root / sha256[:2] / sha256

    def local(self, sha256: str) -> Path:
        """:meth:`path`, with the blob fetched from the database first when this folder
        misses it (team mode); the file may still be missing when it is stored nowhere."""
        path = self.path(sha256)
        if self.shared is not None and not path.exists():
            self.shared.fetch(self._name(sha256), path)
        return path

    def _name(self, sha256: str) -> str:
        """The blob's name in the database copy: its folder's name and its hash."""
        return f"{self.root.name}/{sha256}"

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
        to do when it is there); in team mode save it in the database too."""
        target = self.path(sha256)
        if not target.exists():
            self._write(target, write)
        if self.shared is not None:
            self.shared.save(self._name(sha256), target)

    @staticmethod
    def _write(target: Path, write: Callable[[BinaryIO], object]) -> None:
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
        return file_sha256(self.local(sha256))

    def get(self, sha256: str) -> bytes:
        try:
            return self.local(sha256).read_bytes()
        except FileNotFoundError as exc:
            raise NotFound(f"stored file {sha256[:12]}… is missing from {self.root}") from exc

    def share_folder(self) -> int:
        """Team mode: save the blobs of this folder the database does not hold yet (those
        written before migration 0028 kept them there too); returns how many."""
        if self.shared is None:
            return 0
        stored = self.shared.names_under(self.root.name)
        saved = 0
        for path in self.root.glob("*/*"):
            if not path.name.startswith(".tmp-") and self._name(path.name) not in stored:
                self.shared.save(self._name(path.name), path)
                saved += 1
        return saved

    def delete(self, sha256: str) -> None:
        """Remove the blob here and from the database copy."""
        self.path(sha256).unlink(missing_ok=True)
        if self.shared is not None:
            self.shared.delete([self._name(sha256)])

    def delete_unused(self, used: set[str]) -> int:
        """Remove blobs not in ``used`` (here and in the database copy); returns how many
        were removed from this folder."""
        removed = 0
        for path in self.root.glob("*/*"):
            if path.name not in used and not path.name.startswith(".tmp-"):
                path.unlink(missing_ok=True)
                removed += 1
        if self.shared is not None:
            stored = self.shared.names_under(self.root.name)
            self.shared.delete(name for name in stored if name.rsplit("/", 1)[1] not in used)
        return removed
