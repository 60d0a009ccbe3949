"""What changed between two frozen dataset versions: items added, removed and changed (by
item id, each change naming its field as an item's history does), evidence added, removed and
relabelled, and the documents and chunking under them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.errors import NotFound
from assay.records import Item, Project, to_json
from assay.review.history import Change, content_changes
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


def diff_versions(ws: Workspace, project: Project, a: str, b: str) -> VersionDiff:
    """What changed from version ``a`` to version ``b``."""
    first, second = _versions(ws, project, a, b)
    one, two = read_snapshot(ws, first), read_snapshot(ws, second)
    old = {i.id: i for i in one.items}
    new = {i.id: i for i in two.items}
    changed: list[ItemDiff] = []
    for item_id in sorted(set(old) & set(new)):
        before, after = _content(old[item_id]), _content(new[item_id])
        changes = content_changes(before, after)
        if before["status"] != after["status"]:
            changes.insert(0, Change("status", before["status"], after["status"]))
        if changes:
            changed.append(ItemDiff(item_id, _query(new[item_id]), changes))
    evidence = {"added": 0, "removed": 0, "relabelled": 0}
    for entry in changed:
        for change in entry.changes:
            if change.field == "evidence":
                evidence[change.change] += 1
    added = [ItemDiff(i, _query(new[i])) for i in sorted(set(new) - set(old))]
    removed = [ItemDiff(i, _query(old[i])) for i in sorted(set(old) - set(new))]
    evidence["added"] += sum(len(t.evidence) for d in added for t in new[d.id].turns)
    evidence["removed"] += sum(len(t.evidence) for d in removed for t in old[d.id].turns)
    c1, c2 = one.bundle.chunkings[0], two.bundle.chunkings[0]
    chunking = [
        Change(key, getattr(c1, key), getattr(c2, key))
        for key in ("name", "method", "params")
        if getattr(c1, key) != getattr(c2, key)
    ]
    return VersionDiff(
        first, second, added, removed, changed, evidence, _documents(one, two), chunking
    )
