"""A frozen version's content hash, computed as the items stream past.

The hash is the sha256 of one canonical JSON text (sorted keys, no spaces, UTF-8):
``{"chunking": …, "documents": [...], "items": [...]}`` with the items sorted by id, each
without the times, version numbers, authors and status history the store keeps about it, and
the documents sorted by name as their file and text hashes. So the same gold frozen twice has
the same hash, whenever and in whatever order it was read.

A version is written in the order its items were created, but hashed in the order of their
ids. Rather than hold every item until the end, :class:`ContentHash` writes each item's
canonical text to a scratch SQLite file (on disk, keyed by id) as it comes; at the end it
reads them back in id order and hashes them. JSON is compositional, so the pieces joined with
commas are byte for byte the text ``json.dumps`` gives for the whole. (SQLite compares text
as UTF-8 bytes, which orders as Python orders the strings: by code point.)
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from assay.formats import ChunkingRecord, DocumentRecord
from assay.formats.jsonrec import item_to_json
from assay.records import Item

UNHASHED_ITEM = ("created_at", "updated_at", "version", "author", "status_history")
UNHASHED_EVIDENCE = ("created_at", "author")


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def canonical_item(item: Item, doc_name: dict[str, str]) -> dict[str, Any]:
    """An item as the hash sees it: its content, without what the store keeps about it."""
    data = item_to_json(item, lambda ref: doc_name.get(ref or "", ref))
    for key in UNHASHED_ITEM:
        data.pop(key, None)
    for turn in data["turns"]:
        for ev in turn["evidence"]:
            for key in UNHASHED_EVIDENCE:
                ev.pop(key, None)
    return data


class ContentHash:
    """The content hash of a version whose items are given one at a time, in any order
    (see the module's doc); memory holds none of them."""

    def __init__(self, documents: Iterable[DocumentRecord], chunking: ChunkingRecord) -> None:
        docs = list(documents)
        self.names = {d.ref: d.name for d in docs}
        listed = sorted(
            ({"name": d.name, "sha256": d.sha256, "text_sha256": d.text_sha256} for d in docs),
            key=lambda d: d["name"],
        )
        about = {"name": chunking.name, "method": chunking.method, "params": chunking.params}
        self.head = f'{{"chunking":{canonical_json(about)},"documents":{canonical_json(listed)}'
        # removed by hexdigest(); by the object's end if that is never asked
        self.folder = tempfile.TemporaryDirectory(prefix="assay-hash-")
        self.spill = sqlite3.connect(Path(self.folder.name) / "items.db")
        self.spill.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
            "CREATE TABLE items (id TEXT PRIMARY KEY, text BLOB) WITHOUT ROWID;"
        )

    def add(self, item: Item) -> None:
        text = canonical_json(canonical_item(item, self.names)).encode("utf-8")
        self.spill.execute("INSERT INTO items VALUES (?, ?)", (str(item.id), text))

    def hexdigest(self) -> str:
        """The hash of everything added (the scratch file is removed)."""
        digest = hashlib.sha256(f'{self.head},"items":['.encode())
        try:
            rows = self.spill.execute("SELECT text FROM items ORDER BY id")
            for n, (text,) in enumerate(rows):
                digest.update(b"," if n else b"")
                digest.update(text)
        finally:
            self.spill.close()
            self.folder.cleanup()
        digest.update(b"]}")
        return digest.hexdigest()


def content_hash(
    gold: Iterable[Item], documents: Iterable[DocumentRecord], chunking: ChunkingRecord
) -> str:
    """The sha256 of the canonical JSON of a version's content (see the module's doc)."""
    hasher = ContentHash(documents, chunking)
    for item in gold:
        hasher.add(item)
    return hasher.hexdigest()
