"""What changed between two frozen dataset versions: items added, removed and changed (by
item id, each change naming its field as an item's history does), evidence added, removed and
relabelled, and the documents and chunking under them.

Neither version is held whole: the items of the first are read from its zip into a scratch
SQLite file as (id, digest of the content, query, passages), the second's are matched
against it one at a time (the content of those whose digest differs goes to the scratch
file too), and the first is read once more for the field-by-field changes of those. Memory
stays flat in the number of items; only the differences are kept."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import NotFound
from assay.records import Item, Project, to_json
from assay.review.history import Change, content_changes
from assay.review.version_hash import canonical_item, canonical_json
from assay.review.versions import DatasetVersion, Snapshot, get_version, read_snapshot
from assay.store.workspace import Workspace


@dataclass(frozen=True, slots=True)
class ItemDiff:
    id: str
    query: str
    changes: list[Change] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class VersionDiff:
    a: DatasetVersion
    b: DatasetVersion
    added: list[ItemDiff]
    removed: list[ItemDiff]
    changed: list[ItemDiff]
    evidence: dict[str, int]
    """How many passages were ``added``, ``removed`` and ``relabelled`` in all."""
    documents: dict[str, list[str]]
    """Names of the documents ``added``, ``removed`` and ``changed`` (other file or text)."""
    chunking: list[Change]

    @property
    def same(self) -> bool:
        return self.a.hash == self.b.hash


def _versions(ws: Workspace, project: Project, a: str, b: str) -> tuple[DatasetVersion, ...]:
    """Both versions, or one NotFound naming every unknown one."""
    found: list[DatasetVersion] = []
    unknown: list[str] = []
    for name in (a, b):
        try:
            found.append(get_version(ws, project, name))
        except NotFound as exc:
            unknown.append(name)
            last = exc
    if unknown:
        if len(unknown) == 1:
            raise last
        raise NotFound(
            f"project {project.name!r} has no dataset versions {unknown[0]!r} and "
            f"{unknown[1]!r}; list them with: assay versions list"
        )
    return tuple(found)


def _query(item: Item) -> str:
    return item.turns[0].query if item.turns else ""


def _content(item: Item) -> dict[str, Any]:
    """An item's content as history diffs read it (evidence names its document)."""
    data: dict[str, Any] = to_json(item)
    return data


def _documents(one: Snapshot, two: Snapshot) -> dict[str, list[str]]:
    def hashes(s: Snapshot) -> dict[str, tuple[str, str]]:
        return {d.name: (d.sha256, d.text_sha256) for d in s.bundle.documents}

    old, new = hashes(one), hashes(two)
    return {
        "added": sorted(set(new) - set(old)),
        "removed": sorted(set(old) - set(new)),
        "changed": sorted(n for n in set(old) & set(new) if old[n] != new[n]),
    }


def _digest(item: Item) -> bytes:
    """What tells two versions of an item apart: its content as the version hash sees it."""
    return hashlib.sha256(canonical_json(canonical_item(item, {})).encode("utf-8")).digest()


def _passages(item: Item) -> int:
    return sum(len(t.evidence) for t in item.turns)


@contextmanager
def _scratch() -> Iterator[sqlite3.Connection]:
    """A throwaway SQLite file for one diff (on disk, so memory stays flat)."""
    with (
        tempfile.TemporaryDirectory(prefix="assay-diff-") as folder,
        closing(sqlite3.connect(Path(folder) / "diff.db")) as db,
    ):
        db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
            "CREATE TABLE old (id TEXT PRIMARY KEY, digest BLOB, query TEXT,"
            " passages INTEGER, seen INTEGER NOT NULL DEFAULT 0);"
            "CREATE TABLE new_content (id TEXT PRIMARY KEY, content TEXT);"
        )
        yield db


def diff_versions(ws: Workspace, project: Project, a: str, b: str) -> VersionDiff:
    """What changed from version ``a`` to version ``b`` (see the module's doc)."""
    first, second = _versions(ws, project, a, b)
    one, two = read_snapshot(ws, first), read_snapshot(ws, second)
    evidence = {"added": 0, "removed": 0, "relabelled": 0}
    added: list[ItemDiff] = []
    changed: list[ItemDiff] = []
    with _scratch() as db:
        db.executemany(
            "INSERT INTO old (id, digest, query, passages) VALUES (?, ?, ?, ?)",
            ((i.id, _digest(i), _query(i), _passages(i)) for i in one.items),
        )
        for item in two.items:
            row = db.execute("SELECT digest FROM old WHERE id = ?", (item.id,)).fetchone()
            if row is None:
                added.append(ItemDiff(item.id, _query(item)))
                evidence["added"] += _passages(item)
                continue
            db.execute("UPDATE old SET seen = 1 WHERE id = ?", (item.id,))
            if row[0] != _digest(item):
                content = json.dumps(_content(item), ensure_ascii=False)
                db.execute("INSERT INTO new_content VALUES (?, ?)", (item.id, content))
        removed = [
            ItemDiff(item_id, query)
            for item_id, query in db.execute("SELECT id, query FROM old WHERE seen = 0")
        ]
        evidence["removed"] += db.execute(
            "SELECT coalesce(sum(passages), 0) FROM old WHERE seen = 0"
        ).fetchone()[0]
        if db.execute("SELECT count(*) FROM new_content").fetchone()[0]:
            for item in one.items:
                row = db.execute(
                    "SELECT content FROM new_content WHERE id = ?", (item.id,)
                ).fetchone()
                if row is not None:
                    entry = _changed(item, json.loads(row[0]))
                    if entry is not None:
                        changed.append(entry)
    for entry in changed:
        for change in entry.changes:
            if change.field == "evidence":
                evidence[change.change] += 1
    c1, c2 = one.bundle.chunkings[0], two.bundle.chunkings[0]
    chunking = [
        Change(key, getattr(c1, key), getattr(c2, key))
        for key in ("name", "method", "params")
        if getattr(c1, key) != getattr(c2, key)
    ]
    return VersionDiff(
        first,
        second,
        sorted(added, key=_by_id),
        sorted(removed, key=_by_id),
        sorted(changed, key=_by_id),
        evidence,
        _documents(one, two),
        chunking,
    )


def _by_id(entry: ItemDiff) -> str:
    return entry.id


def _changed(old: Item, after: dict[str, Any]) -> ItemDiff | None:
    """The field-by-field changes of one item, None when only what a version does not
    compare (times, authors) differs."""
    before = json.loads(json.dumps(_content(old), ensure_ascii=False))  # as ``after`` was
    changes = content_changes(before, after)
    if before["status"] != after["status"]:
        changes.insert(0, Change("status", before["status"], after["status"]))
    turns = after.get("turns") or []
    return ItemDiff(old.id, turns[0]["query"] if turns else "", changes) if changes else None
