"""An item's history: every stored event as a field-level diff, and restoring an earlier
version.

Every write to an item leaves an ``events`` row (:mod:`assay.gold.items`): saves keep
the whole item before and the content after, status changes the status before and after.
Here each event becomes :class:`Change` rows (which field, of which turn, from what to what;
evidence added, removed or relabelled), and the content an item had after any event can be
saved again as a new version (action ``restore``), through the same optimistic version check
as every save.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from assay.errors import InvalidInput, NotFound
from assay.gold.items import EDITABLE, get_item, parse_item, save_item
from assay.gold.jsonvalues import finite
from assay.people.actors import AUTHOR_NAME
from assay.records import Item, Project
from assay.store.db import as_utc, reading
from assay.store.schema import accounts, events
from assay.store.workspace import Workspace

CONTENT_ACTIONS = frozenset({"create", "save", "restore", "review_edit", "merge"})
"""Actions whose ``after`` holds the item's whole content (any other action whose ``after``
holds ``turns`` counts too: see :func:`_content_after`)."""

TURN_FIELDS = (
    ("query", "question"),
    ("rewrite", "rewrite"),
    ("query_type", "type"),
    ("answer", "answer"),
    ("alternatives", "alternatives"),
    ("enrichments", "enrichments"),
    ("original_answer", "original_answer"),
    ("generation", "generation"),
)
"""Turn fields compared, with the names a diff gives them."""
ITEM_FIELDS = (("kind", "kind"), ("origin", "origin"), ("notes", "notes"), ("extra", "extra"))
RELABEL = ("label", "grade", "group")
"""Evidence fields whose change is a relabelling of the same passage."""


@dataclass(frozen=True, slots=True)
class Change:
    """One field that an event changed. ``turn`` is 1-based (None for the item's fields);
    ``change`` is ``changed``, or for evidence and turns ``added``, ``removed`` or
    ``relabelled``."""

    field: str
    before: Any
    after: Any
    turn: int | None = None
    change: str = "changed"


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One event of an item's history. ``restorable``: the event left content that
    :func:`restore_version` can bring back."""

    event: int
    at: datetime
    actor: str
    action: str
    changes: list[Change] = field(default_factory=list)
    restorable: bool = False


def _content_after(action: str, after: Any) -> dict[str, Any] | None:
    """The item's editable content an event left, when it holds one."""
    if isinstance(after, dict) and (action in CONTENT_ACTIONS or "turns" in after):
        return {key: after[key] for key in EDITABLE if key in after}
    return None


def _content(value: Any) -> dict[str, Any]:
    """The editable part of a stored item (an event's ``before``), or empty."""
    if not isinstance(value, dict):
        return {}
    return {key: value[key] for key in EDITABLE if key in value}


def _pairs(old: list[Any], new: list[Any]) -> tuple[list[tuple[Any, Any]], list[Any], list[Any]]:
    """The same passages across two versions, and the ones only before and only after. A
    passage is the same when its document and span are (or, for one sent without offsets,
    such as an import or a restored draft, its document and text)."""
    before = [e for e in old if isinstance(e, dict)]
    after = [e for e in new if isinstance(e, dict)]
    pairs: list[tuple[Any, Any]] = []
    for key in (
        lambda e: (e.get("doc_id"), e.get("start"), e.get("end")),
        lambda e: (e.get("doc_id"), e.get("text", "")),
    ):
        left = {key(e): e for e in before}
        for ev in list(after):
            match = left.pop(key(ev), None)
            if match is not None and key(ev)[1] is not None:
                pairs.append((match, ev))
                before.remove(match)
                after.remove(ev)
    return pairs, before, after


def _passage(ev: dict[str, Any]) -> dict[str, Any]:
    """What a diff shows of a passage."""
    keys = ("doc_id", "start", "end", "text", *RELABEL)
    return {key: ev.get(key) for key in keys}


def _relabelled(old: Any, new: Any, key: str) -> bool:
    # a group sent as None means "a group of its own", which the store numbers
    return old != new and not (key == "group" and new is None)


def _evidence_changes(number: int, old: list[Any], new: list[Any]) -> list[Change]:
    pairs, removed, added = _pairs(old, new)
    found = [Change("evidence", None, _passage(ev), number, "added") for ev in added]
    for was, ev in pairs:
        if any(_relabelled(was.get(k), ev.get(k), k) for k in RELABEL):
            shown = (
                {k: was.get(k) for k in RELABEL},
                {"text": ev.get("text"), **{k: ev.get(k) for k in RELABEL}},
            )
            found.append(Change("evidence", shown[0], shown[1], number, "relabelled"))
    found.extend(Change("evidence", _passage(ev), None, number, "removed") for ev in removed)
    return found


def _turn_changes(number: int, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    found = [
        Change(name, old.get(key), new.get(key), number)
        for key, name in TURN_FIELDS
        if (old.get(key) or None) != (new.get(key) or None)
    ]
    old_ctx, new_ctx = old.get("retrieved") or [], new.get("retrieved") or []
    if old_ctx != new_ctx:
        found.append(Change("retrieved", len(old_ctx), len(new_ctx), number))
    found.extend(_evidence_changes(number, old.get("evidence") or [], new.get("evidence") or []))
    return found


def content_changes(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """Field-level differences between two item contents (JSON as events keep them)."""
    found = [
        Change(name, before.get(key), after.get(key))
        for key, name in ITEM_FIELDS
        if key in after and (before.get(key) or None) != (after.get(key) or None)
    ]
    old_turns = [t for t in before.get("turns") or [] if isinstance(t, dict)]
    new_turns = [t for t in after.get("turns") or [] if isinstance(t, dict)]
    for index in range(max(len(old_turns), len(new_turns))):
        number = index + 1
        if index >= len(old_turns):
            if old_turns:  # a new item's first turns are its creation, not additions
                found.append(Change("turn", None, new_turns[index].get("query"), number, "added"))
            found.extend(_turn_changes(number, {}, new_turns[index]))
        elif index >= len(new_turns):
            found.append(Change("turn", old_turns[index].get("query"), None, number, "removed"))
        else:
            found.extend(_turn_changes(number, old_turns[index], new_turns[index]))
    return found


def _event_rows(conn: sa.Connection, project: Project, item_id: str) -> list[Any]:
    return list(
        conn.execute(
            sa.select(
                events.c.id, events.c.action, events.c.before, events.c.after, events.c.at,
                AUTHOR_NAME.label("actor"),
            )
            .join(accounts, accounts.c.id == events.c.actor_id)
            .where(events.c.project_id == project.id, events.c.item_id == item_id)
            .order_by(events.c.at, events.c.id)
        ).all()
    )  # fmt: skip


def item_history(
    ws: Workspace, project: Project, item_id: str, *, conn: sa.Connection | None = None
) -> list[HistoryEntry]:
    """The item's events, oldest first, each with the fields it changed. An unknown item
    (never stored in this project) is NotFound; a deleted one keeps its history."""
    with reading(ws.engine, conn) as conn:
        rows = _event_rows(conn, project, item_id)
    if not rows:
        raise NotFound(
            f"project {project.name!r} has no item {item_id!r}",
            key="raised.no_item",
            project=project.name,
            item_id=item_id,
        )
    entries: list[HistoryEntry] = []
    content: dict[str, Any] = {}
    for row in rows:
        before, after = finite(row.before), finite(row.after)
        changes: list[Change] = []
        new_content = _content_after(row.action, after)
        if new_content is not None:
            base = _content(before) if isinstance(before, dict) else content
            changes = content_changes(base, new_content)
            content = new_content
        elif isinstance(after, dict) and "status" in after:
            was = before.get("status") if isinstance(before, dict) else None
            changes = [Change("status", was, after["status"])]
        elif after is None and row.action == "delete":
            changes = [Change("item", "stored", None, change="removed")]
        entries.append(
            HistoryEntry(
                event=int(row.id),
                at=as_utc(row.at),
                actor=row.actor,
                action=row.action,
                changes=changes,
                restorable=new_content is not None,
            )
        )
    return entries


def status_history(entries: list[HistoryEntry]) -> list[dict[str, Any]]:
    """Only the status changes of a history: ``{"at", "actor", "from", "to"}``."""
    return [
        {"at": e.at, "actor": e.actor, "from": c.before, "to": c.after}
        for e in entries
        for c in e.changes
        if c.field == "status"
    ]


def version_content(
    ws: Workspace, project: Project, item_id: str, event: int, *, conn: sa.Connection | None = None
) -> Item:
    """The item's content as event ``event`` left it (one of its content events)."""
    with reading(ws.engine, conn) as conn:
        row = conn.execute(
            sa.select(events.c.action, events.c.after).where(
                events.c.id == event,
                events.c.project_id == project.id,
                events.c.item_id == item_id,
            )
        ).first()
    if row is None:
        raise NotFound(f"item {item_id} has no event {event} in project {project.name!r}")
    content = _content_after(row.action, finite(row.after))
    if content is None:
        raise InvalidInput(
            f"event {event} of item {item_id} ({row.action}) changed no content; choose a "
            "create, save or restore event of its history"
        )
    return parse_item(content, f"item {item_id}, event {event}")


def restore_version(
    ws: Workspace,
    project: Project,
    item_id: str,
    event: int,
    base_version: int,
    *,
    author: int | None = None,
    check: Callable[[Item, Item], None] | None = None,
    conn: sa.Connection | None = None,
) -> Item:
    """Save the content event ``event`` left as the item's next version (action
    ``restore``). ``base_version`` is the version the caller read: a stale one raises
    :class:`assay.gold.items.StaleItem` (409), as any save. The status stays.
    ``check(stored, restored)`` may refuse before anything is written (the web's
    question-edit rule)."""
    data = version_content(ws, project, item_id, event, conn=conn)
    get_item(ws, project, item_id, conn=conn)  # a deleted item cannot be restored here
    rule = (lambda stored: check(stored, data)) if check is not None else None
    return save_item(
        ws,
        project,
        item_id,
        data,
        base_version,
        author=author,
        action="restore",
        check=rule,
        conn=conn,
    )
