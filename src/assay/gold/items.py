"""One gold item: what an editor, an import or a generator may send, reading it, and writing it
(create, save, change status, delete, submit), each write with its event in the item's history.

Items are :class:`assay.records.Item` everywhere; the rules for the ones that come in from
outside: only the :data:`EDITABLE` fields may be sent (the store sets id, status, author,
version and times), unknown keys are refused, and a body without turns gets one empty turn.
Drafts may be incomplete; ``assay.gold.checks`` judges completeness when an item is submitted.

Saving an item replaces its turns and evidence as one transaction and carries the version the
editor read (optimistic concurrency): a stale save raises :class:`StaleItem` with the stored
item attached, so nothing either side wrote is lost. How turns and evidence become rows (and
are anchored) and are read back is in ``assay.gold.item_rows``; lists of items are in
``assay.gold.item_lists``.
"""

from __future__ import annotations

import copy
import functools
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal, NamedTuple

import sqlalchemy as sa
from pydantic import BeforeValidator, TypeAdapter, ValidationError

from assay.corpus.anchoring import DocumentTexts
from assay.errors import Conflict, InvalidInput, NotFound
from assay.gold.checks import check_item, errors
from assay.gold.item_rows import (
    ItemRows,
    check_storable,
    insert_turns,
    item_rows,
    read_items,
    replace_turns,
)
from assay.gold.jsonvalues import finite
from assay.gold.taxonomy import check_single_choice
from assay.people.actors import AUTHOR_NAME, account_ids, acting_account
from assay.records import STATUSES, Evidence, Item, Project, to_json
from assay.store.bulk import insert_dicts
from assay.store.db import as_utc, read_only, reading, transaction, utcnow
from assay.store.import_lock import check_writable, lock_checked_in_write, unlocked
from assay.store.schema import accounts, events, items
from assay.store.workspace import Workspace

Status = Literal["draft", "submitted", "accepted", "rejected"]


EDITABLE: tuple[str, ...] = ("kind", "notes", "origin", "extra", "turns")
"""The fields of an item an editor sends; the others belong to the store."""


def _editable_only(raw: Any) -> Any:
    if isinstance(raw, dict):
        for key in raw:
            if key not in EDITABLE and key in Item.__dataclass_fields__:
                raise ValueError(
                    f"field {key!r} is kept by the store and cannot be sent "
                    f"(an item body holds {', '.join(EDITABLE)})"
                )
        if "turns" not in raw:
            raw = {**raw, "turns": [{}]}
    return raw


ItemBody = Annotated[Item, BeforeValidator(_editable_only)]
"""An item as a request body: the editable fields only (a new item has one empty turn)."""


@functools.cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def first_error(exc: ValidationError) -> str:
    """The first validation error as ``field 'a.b': message``."""
    error = exc.errors()[0]
    place = ".".join(str(p) for p in error.get("loc", ()))
    return f"field {place!r}: {error.get('msg', 'invalid')}"


def parse_item(raw: Any, where: str) -> Item:
    """An item body (JSON values) checked as :data:`ItemBody`; errors name ``where``."""
    item: Item = _validated(ItemBody, raw, where)
    return item


def checked_evidence(values: dict[str, Any], where: str) -> Evidence:
    """Evidence built by a reader or generator, its labels and bounds checked."""
    evidence: Evidence = _validated(Evidence, values, where)
    return evidence


def _validated(kind: Any, raw: Any, where: str) -> Any:
    """``raw`` checked as ``kind``; the first problem raised as InvalidInput naming ``where``."""
    try:
        return _adapter(kind).validate_python(raw)
    except ValidationError as exc:
        raise InvalidInput(f"{where}: {first_error(exc)}") from exc


def editable_copy(item: Item) -> Item:
    """A stored item to change and save back, sharing nothing with the original (which a
    caller keeps as the "before" of its history)."""
    return copy.deepcopy(item)


def editable_json(item: Item) -> dict[str, Any]:
    """The fields an editor sends back when saving, as JSON values."""
    return {key: to_json(getattr(item, key)) for key in EDITABLE}


def editable_fields(item: Item) -> dict[str, Any]:
    """:func:`editable_json` for a JSON column: the fields as they are (records inside), which
    the store writes as the same JSON without converting them first."""
    return {key: getattr(item, key) for key in EDITABLE}


def _load(conn: sa.Connection, project: Project, item_id: str) -> Item:
    found = read_items(conn, [item_id], project_id=project.id)
    if not found:
        raise NotFound(
            f"project {project.name!r} has no item {item_id!r}",
            key="raised.no_item",
            project=project.name,
            item_id=item_id,
        )
    return found[0]


def get_item(
    ws: Workspace, project: Project, item_id: str, *, conn: sa.Connection | None = None
) -> Item:
    with read_only(ws.engine, conn) as conn:
        return _load(conn, project, item_id)


def item_events(
    ws: Workspace, project: Project, item_id: str, *, conn: sa.Connection | None = None
) -> list[dict[str, Any]]:
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(
            sa.select(events, AUTHOR_NAME.label("actor"))
            .join(accounts, accounts.c.id == events.c.actor_id)
            .where(events.c.project_id == project.id, events.c.item_id == item_id)
            .order_by(events.c.at, events.c.id)
        ).all()
    return [
        {
            "actor": r.actor,
            "action": r.action,
            "before": finite(r.before),
            "after": finite(r.after),
            "at": as_utc(r.at).isoformat(),
        }
        for r in rows
    ]


class StaleItem(Conflict):
    """The item changed since the editor read it; ``current`` is what is stored now."""

    def __init__(self, current: Item, base_version: int) -> None:
        super().__init__(
            f"item {current.id} was changed elsewhere (you edited version {base_version}, "
            f"it is now version {current.version}); nothing was overwritten",
            key="raised.item_changed_elsewhere",
            item_id=current.id,
            base_version=base_version,
            version=current.version,
        )
        self.current = current


def _event_row(
    project: Project,
    item_id: str,
    actor: int,
    action: str,
    before: Any,
    after: Any,
    *,
    at: datetime | None = None,
) -> dict[str, Any]:
    return {
        "project_id": project.id,
        "item_id": item_id,
        "actor_id": actor,
        "action": action,
        "before": before,
        "after": after,
        "at": at or utcnow(),
    }


def _event(conn: sa.Connection, *fields: Any) -> None:
    """Write one event of an item's history (fields as :func:`_event_row` takes them)."""
    conn.execute(events.insert(), _event_row(*fields))


def _next_version(
    ws: Workspace,
    conn: sa.Connection,
    project: Project,
    item_id: str,
    base_version: int,
    values: dict[str, Any],
    check: Callable[[Item], None] | None = None,
) -> Item:
    """Write ``values`` and the next version if the item is still at ``base_version``
    (optimistic concurrency), else raise :class:`StaleItem`; the item as it was before
    (``check``: see :func:`save_item`)."""
    before = get_item(ws, project, item_id, conn=conn)
    if check is not None:
        check(before)
    changed = conn.execute(
        items.update()
        .where(items.c.id == item_id, items.c.version == base_version)
        .values(**values, version=base_version + 1, updated_at=utcnow())
    ).rowcount
    if changed != 1:
        raise StaleItem(before, base_version)
    return before


class Created(NamedTuple):
    id: str
    unlocated: int
    """Passages kept unverified: imported text not found in its document."""


def create_item(
    ws: Workspace,
    project: Project,
    data: Item,
    *,
    author: int | None = None,
    status: Status = "draft",
    item_id: str | None = None,
    conn: sa.Connection | None = None,
) -> Item:
    created = insert_item(
        ws, project, data, author=author, status=status, item_id=item_id, conn=conn
    )
    return get_item(ws, project, created.id, conn=conn)


def insert_item(
    ws: Workspace,
    project: Project,
    data: Item,
    *,
    author: int | None = None,
    status: Status = "draft",
    item_id: str | None = None,
    keep_history: bool = False,
    named: Mapping[str, int] | None = None,
    conn: sa.Connection | None = None,
) -> Created:
    """:func:`create_item` without reading the item back; ``keep_history`` (imports) keeps
    the item's dates, version and status changes, so a round trip loses nothing; otherwise
    the item starts now at version 1.

    ``author`` is the acting account's id (None: :func:`acting_account`); names the item
    brings (evidence authors, with ``keep_history`` its status changes' actors) are found in
    ``named`` (an import resolves its names once) or looked up (:func:`_named`)."""
    item_id = item_id or str(uuid.uuid4())
    check_storable(data)
    with transaction(ws.engine, conn) as conn:
        check_writable(conn, project.id)
        author = author if author is not None else acting_account(ws, conn=conn)
        if named is None:
            named = _named(conn, data, keep_history)
        if conn.scalar(sa.select(items.c.id).where(items.c.id == item_id)):
            raise Conflict(f"an item with id {item_id!r} already exists")
        made = new_item(
            DocumentTexts(conn, project.id), project, data, author=author, named=named,
            status=status, item_id=item_id, keep_history=keep_history,
        )  # fmt: skip
        insert_items(conn, project, [made])
    return Created(item_id, made.rows.unlocated)


class NewItem(NamedTuple):
    """The rows of one new item, checked and anchored, not yet written."""

    id: str
    row: dict[str, Any]
    rows: ItemRows
    events: list[dict[str, Any]]


def new_item(
    texts: DocumentTexts,
    project: Project,
    data: Item,
    *,
    author: int,
    named: Mapping[str, int],
    status: Status,
    item_id: str,
    keep_history: bool,
) -> NewItem:
    """The rows :func:`insert_items` writes for ``data``: refused here, before anything is
    written, when the item cannot be stored (its evidence is anchored in ``texts``).
    ``author`` and ``named`` as :func:`insert_item` takes them."""
    check_storable(data)
    check_single_choice(project, data)
    now = utcnow()
    created = (data.created_at if keep_history else None) or now
    updated = (data.updated_at if keep_history else None) or created
    rows = item_rows(texts, item_id, data, author, named, now)
    row = {
        "id": item_id,
        "project_id": project.id,
        "kind": data.kind,
        "status": status,
        "origin": data.origin,
        **rows.listing,
        "notes": data.notes,
        "extra": data.extra,
        "author_id": author,
        "version": data.version if keep_history else 1,
        "created_at": created,
        "updated_at": updated,
    }
    content = editable_fields(data)
    history = [_event_row(project, item_id, author, "create", None, content, at=now)]
    for change in data.status_history if keep_history else []:
        actor = named.get(change.actor, author)
        after = {"status": change.status}
        history.append(_event_row(project, item_id, actor, "status", None, after, at=change.at))
    return NewItem(item_id, row, rows, history)


def insert_items(conn: sa.Connection, project: Project, made: Sequence[NewItem]) -> None:
    """Write new items built by :func:`new_item` in a few statements for all of them (an
    import writes hundreds at once); their ids must be free."""
    if not made:
        return
    check_writable(conn, project.id)
    insert_dicts(conn, items, [m.row for m in made])  # at the driver's speed: store.bulk
    insert_turns(conn, [m.rows for m in made])
    insert_dicts(conn, events, [event for m in made for event in m.events])


def save_item(
    ws: Workspace,
    project: Project,
    item_id: str,
    data: Item,
    base_version: int,
    *,
    author: int | None = None,
    action: str = "save",
    check: Callable[[Item], None] | None = None,
    conn: sa.Connection | None = None,
) -> Item:
    """Replace an item's content if it is still at ``base_version``; else raise StaleItem.
    ``action`` names the change in the item's history (a plain save unless told); ``author``
    is the acting account's id (None: :func:`acting_account`); ``check`` is called with the
    stored item before anything is written and may refuse the save by raising (the web's
    question-edit rule), so the item is read once."""
    with transaction(ws.engine, conn) as conn:
        before = get_item(ws, project, item_id, conn=conn)
        if check is not None:
            check(before)
        return save_read_item(
            ws, project, before, data, base_version, author=author, action=action, conn=conn
        )


def save_read_item(
    ws: Workspace,
    project: Project,
    before: Item,
    data: Item,
    base_version: int,
    *,
    author: int | None = None,
    action: str = "save",
    conn: sa.Connection,
) -> Item:
    """:func:`save_item` of an item the caller read as ``before`` in the transaction of
    ``conn``. Everything is read and checked (the evidence anchored, reading only the cited
    passages of their documents) before the first write, so on SQLite the write lock is held
    for the writes alone; the item's row changes in one statement."""
    check_storable(data)
    check_single_choice(project, data)
    in_write = lock_checked_in_write(conn, project.id)  # the import lock, checked by the update
    if before.version != base_version:
        if in_write:
            check_writable(conn, project.id)  # a running import still answers first
        raise StaleItem(before, base_version)  # nothing to write: no write lock taken
    author = author if author is not None else acting_account(ws, conn=conn)
    texts = DocumentTexts(conn, project.id)
    texts.read_passages(
        (ev.doc_id, ev.start, ev.end)
        for turn in data.turns
        for ev in turn.evidence
        if ev.doc_id is not None and ev.start is not None and ev.end is not None
    )
    rows = item_rows(texts, before.id, data, author, _named(conn, data, False))
    content = {"kind": data.kind, "origin": data.origin, "notes": data.notes, "extra": data.extra}
    values = {**content, **rows.listing, "version": base_version + 1, "updated_at": utcnow()}
    assert values.keys() == set(SAVED_COLUMNS), "a listing field the update does not write"
    params = {f"new_{name}": value for name, value in values.items()}
    params.update(item_id=before.id, base_version=base_version, lock_project=project.id)
    changed = conn.execute(_save_update(in_write), params).rowcount
    if changed != 1 and in_write:  # an import holds the project, or someone saved meanwhile
        check_writable(conn, project.id)  # ImportRunning, or a stale lock undone: try again
        changed = conn.execute(_save_update(False), params).rowcount
    if changed != 1:  # saved by someone else since it was read
        raise StaleItem(get_item(ws, project, before.id, conn=conn), base_version)
    replace_turns(conn, before.id, rows)
    _event(conn, project, before.id, author, action, to_json(before), editable_json(data))
    return get_item(ws, project, before.id, conn=conn)


SAVED_COLUMNS = (
    "kind", "origin", "notes", "extra", "query", "query_type", "turn_count", "evidence_count",
    "search_text", "version", "updated_at",
)  # fmt: skip
"""What a save writes into the item's row: its content, the list's fields, the version."""


@functools.cache
def _save_update(unlocked_only: bool) -> sa.Update:
    """The item row's update of every save: built once per process (bound parameters).
    ``unlocked_only``: it changes nothing while an import holds the project
    (:func:`assay.store.import_lock.lock_checked_in_write`)."""
    values = {name: sa.bindparam(f"new_{name}", type_=items.c[name].type) for name in SAVED_COLUMNS}
    where = [
        items.c.id == sa.bindparam("item_id", type_=sa.String),
        items.c.version == sa.bindparam("base_version", type_=sa.Integer),
    ]
    if unlocked_only:
        where.append(unlocked(sa.bindparam("lock_project", type_=sa.Integer)))
    return items.update().where(*where).values(values)


def set_status(
    ws: Workspace,
    project: Project,
    item_id: str,
    status: str,
    base_version: int,
    *,
    actor: int | None = None,
    conn: sa.Connection | None = None,
) -> Item:
    if status not in STATUSES:
        raise InvalidInput(f"unknown status {status!r}; choose one of: {', '.join(STATUSES)}")
    with transaction(ws.engine, conn) as conn:
        check_writable(conn, project.id)
        actor = actor if actor is not None else acting_account(ws, conn=conn)
        before = _next_version(ws, conn, project, item_id, base_version, {"status": status})
        _event(
            conn, project, item_id, actor, "status", {"status": before.status}, {"status": status}
        )
        return get_item(ws, project, item_id, conn=conn)


def delete_item(
    ws: Workspace,
    project: Project,
    item_id: str,
    *,
    actor: int | None = None,
    conn: sa.Connection | None = None,
) -> None:
    with transaction(ws.engine, conn) as conn:
        check_writable(conn, project.id)
        before = get_item(ws, project, item_id, conn=conn)
        conn.execute(items.delete().where(items.c.id == item_id))
        _event(
            conn,
            project,
            item_id,
            actor if actor is not None else acting_account(ws, conn=conn),
            "delete",
            to_json(before),
            None,
        )


def submit_item(
    ws: Workspace,
    project: Project,
    item_id: str,
    base_version: int,
    *,
    actor: int | None = None,
    conn: sa.Connection | None = None,
) -> Item:
    """Mark an item as submitted for review, if it passes the completeness rules."""
    with transaction(ws.engine, conn) as conn:
        item = get_item(ws, project, item_id, conn=conn)
        problems = errors(check_item(item, project))
        if problems:
            listed = "; ".join(p.message for p in problems)
            raise InvalidInput(f"item {item_id} cannot be submitted yet: {listed}")
        return set_status(ws, project, item_id, "submitted", base_version, actor=actor, conn=conn)


def _named(conn: sa.Connection, data: Item, history: bool) -> dict[str, int]:
    """Account ids for the names an item brings: its evidence authors and, with ``history``,
    its status changes' actors (see :func:`assay.people.actors.account_ids`)."""
    names = {ev.author or "" for turn in data.turns for ev in turn.evidence}
    if history:
        names.update(change.actor for change in data.status_history)
    return account_ids(conn, names)
