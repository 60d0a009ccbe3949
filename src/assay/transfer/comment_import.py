"""The comments stage of an import: a Bundle's comments, after its items, into the comments
table (:mod:`assay.review.comments`), threads kept (a reply's ``parent_id`` names a comment of
the same Bundle), authors turned into accounts as the items' are. An anchored comment is
stored as the file gives it; whether its quote still sits at its offsets is worked out when
it is read (``ok``, ``moved`` or ``outdated``), so none is dropped for that."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from assay.errors import InvalidInput
from assay.people.actors import account_ids
from assay.records import Comment, Project
from assay.review.comments import insert_comment
from assay.store.workspace import Workspace
from assay.transfer.batches import Batches
from assay.transfer.import_actors import ImportAuthors
from assay.transfer.report import ImportReport


def import_comments(
    ws: Workspace,
    batches: Batches,
    project: Project,
    records: Iterable[Comment],
    *,
    items: dict[str, tuple[str, str]],
    authors: ImportAuthors,
    report: ImportReport,
    lenient: bool,
) -> None:
    """Store ``records``; ``items`` maps a Bundle item id to (its stored id now, its id
    once the import has finished). Roots go first so that replies find their thread."""
    found = list(records)
    if not found:
        return
    _new_authors(ws, batches, authors, found)
    stored: dict[int, int] = {}
    parents = {c.id: c.parent_id for c in found}
    ordered = [c for c in found if c.parent_id is None]
    ordered += [replace(c, parent_id=_root(c.parent_id, parents)) for c in found if c.parent_id]
    for comment in ordered:
        ref = f"{comment.item_id}#{comment.id}"

        def skipped(message: str, ref: str = ref) -> None:
            report.add("comment", ref, "skipped", message)

        with batches.record(lenient, skipped):
            new_id = _store(batches, project, comment, items, authors, stored)
            stored[comment.id] = new_id
            report.add("comment", ref, "imported", "", str(new_id))


def _root(parent: int, parents: dict[int, int | None]) -> int:
    """The first comment of the thread ``parent`` is in (a reply to a reply joins it)."""
    seen = {parent}
    while (up := parents.get(parent)) is not None and up not in seen:
        seen.add(up)
        parent = up
    return parent


def _new_authors(
    ws: Workspace, batches: Batches, authors: ImportAuthors, found: list[Comment]
) -> None:
    """Names of comment authors not met yet become accounts, in a transaction of their own
    (as :class:`assay.transfer.item_import.ItemStage` makes them)."""
    names = {c.author for c in found if c.author.strip()} - authors.named.keys()
    names |= {c.resolved_by for c in found if c.resolved_by.strip()} - authors.named.keys()
    if names:
        batches.commit()
        with ws.engine.begin() as conn:
            authors.named.update(account_ids(conn, names))


def _store(
    batches: Batches,
    project: Project,
    comment: Comment,
    items: dict[str, tuple[str, str]],
    authors: ImportAuthors,
    stored: dict[int, int],
) -> int:
    where = f"comment {comment.id} on item {comment.item_id!r}"
    placed = items.get(comment.item_id)
    if placed is None:
        raise InvalidInput(f"{where}: its item was not imported")
    parent = None
    if comment.parent_id is not None:
        parent = stored.get(comment.parent_id)
        if parent is None:
            raise InvalidInput(f"{where}: it replies to comment {comment.parent_id}, not imported")
    for name in ("turn", "evidence", "start", "end"):
        value = getattr(comment, name)
        if value is not None and value < 0:
            raise InvalidInput(f"{where}: field {name!r} must not be negative")
    resolver = authors.of(comment.resolved_by) if comment.resolved else None
    stored_comment = replace(comment, item_id=placed[0], parent_id=parent)
    return insert_comment(
        batches.current, project, stored_comment, author=authors.of(comment.author),
        resolved_by=resolver,
    )  # fmt: skip
