"""Reading gold items: one item with its turns and evidence, every item of a project in
batches (the editor, experiments and exports build them alike), and an item's history. The
items list's pages are in :mod:`assay.gold.item_lists`."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from assay.errors import NotFound
from assay.gold.item_scope import copies_of_project
from assay.gold.jsonvalues import finite
from assay.people.actors import AUTHOR_NAME
from assay.records import Evidence, Item, Project, StatusChange, Turn
from assay.store.db import as_utc, driver_rows, read_only, reading
from assay.store.schema import accounts, events, evidence, items, turns
from assay.store.workspace import Workspace


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


def _json(raw: Any) -> Any:
    """A JSON column read as text; the common empty values skip the parser."""
    if raw == "{}":
        return {}
    if raw == "[]":
        return []
    if isinstance(raw, str):
        return json.loads(raw)
    return raw


def _time(value: Any, cache: dict[Any, datetime]) -> datetime:
    """A stored time in UTC (SQLite's driver gives text, PostgreSQL's a datetime); the same
    stamps recur across a batch's rows, so each is converted once."""
    found = cache.get(value)
    if found is None:
        stamp = datetime.fromisoformat(value) if isinstance(value, str) else value
        cache[value] = found = as_utc(stamp)
    return found


def _text(column: sa.ColumnElement[Any]) -> sa.ColumnElement[str]:
    return sa.cast(column, sa.Text)


def item_ids(
    ws: Workspace,
    project: Project,
    statuses: Iterable[str] | None = None,
    *,
    conn: sa.Connection | None = None,
) -> list[str]:
    """Gold item ids in export order (oldest first), optionally only those of ``statuses``;
    annotators' copies (overlap) are not gold and are left out (found apart, by their own
    index, so the ids still come from an index alone)."""
    chosen = [] if statuses is None else [items.c.status.in_(list(statuses))]
    with reading(ws.engine, conn) as reader:
        copies = set(
            reader.scalars(sa.select(items.c.id).where(*copies_of_project(project.id), *chosen))
        )
        ordered = reader.scalars(
            sa.select(items.c.id)
            .where(items.c.project_id == project.id, *chosen)
            .order_by(items.c.created_at, items.c.id)
        )
        return [i for i in ordered if i not in copies]


def iter_items(
    ws: Workspace,
    project: Project,
    *,
    statuses: Iterable[str] | None = None,
    batch_size: int = 500,
    conn: sa.Connection | None = None,
) -> Iterator[Item]:
    """Every gold item of a project (oldest first, no copies), read in batches (each batch
    on a connection of its own, unless the caller passes ``conn``)."""
    ids = item_ids(ws, project, statuses, conn=conn)
    yield from items_in_batches(ws, ids, batch_size=batch_size, conn=conn)


def items_in_batches(
    ws: Workspace,
    ids: Sequence[str],
    *,
    batch_size: int = 500,
    history: bool = False,
    finite_json: bool = True,
    conn: sa.Connection | None = None,
) -> Iterator[Item]:
    """The items of ``ids`` in that order, :func:`read_items` per batch, each batch on a
    connection of its own unless the caller passes ``conn`` (exports stream with this)."""
    for offset in range(0, len(ids), batch_size):
        batch = list(ids[offset : offset + batch_size])
        with reading(ws.engine, conn) as reader:
            yield from read_items(reader, batch, history=history, finite_json=finite_json)


def read_items(
    conn: sa.Connection,
    ids: list[str],
    *,
    project_id: int | None = None,
    history: bool = False,
    finite_json: bool = True,
) -> list[Item]:
    """The items of ``ids`` (of ``project_id`` when given) in that order, with their turns
    and evidence: three queries for any number of ids (four with ``history``, each item's
    status changes). JSON columns come as text, parsed only when not empty, and a batch's
    rows as the driver hands them over, so an export of 100k items builds no per-row objects
    it does not need. ``finite_json``: extras, generation settings and retrieved contexts
    read with NaN and Infinity as null (``assay.gold.jsonvalues``); exports read them as
    stored."""
    stamps: dict[Any, datetime] = {}
    rows = _fetcher(len(ids))
    if len(ids) == 1 and project_id is not None:  # the editor: statements built once
        item_rows, turn_rows, ev_rows = _one_item_rows(conn, ids[0], project_id)
    else:
        where: list[sa.ColumnElement[bool]] = [items.c.id.in_(ids)]
        if project_id is not None:
            where.append(items.c.project_id == project_id)
        item_sel, turn_sel, ev_sel = _selects(sa.and_(*where), turns.c.item_id.in_(ids))
        item_rows = rows(conn, item_sel)
        turn_rows = rows(conn, turn_sel) if item_rows else []
        ev_rows = rows(conn, ev_sel) if item_rows else []
    if not item_rows:
        return []
    changes = _status_history(conn, ids, rows) if history else {}
    free = finite if finite_json else _as_stored
    by_turn: dict[int, list[Evidence]] = {}
    for e in ev_rows:
        by_turn.setdefault(e[0], []).append(
            Evidence(
                e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9], e[10],
                _time(e[11], stamps),
            )
        )  # fmt: skip
    by_item: dict[str, list[Turn]] = {}
    for t in turn_rows:
        by_item.setdefault(t[1], []).append(
            Turn(
                query=t[2],
                rewrite=t[3],
                query_type=t[4],
                enrichments=_json(t[5]) or {},
                answer=t[6],
                alternatives=list(_json(t[7]) or ()),
                original_answer=t[8],
                generation=free(_json(t[9]) or {}),
                retrieved=free(list(_json(t[10]) or ())),
                evidence=by_turn.get(t[0], []),
            )
        )
    found = {
        r[0]: Item(
            id=r[0],
            kind=r[1],
            status=r[2],
            origin=r[3],
            notes=r[4],
            extra=free(_json(r[5]) or {}),
            author=r[6],
            created_at=_time(r[7], stamps),
            updated_at=_time(r[8], stamps),
            version=r[9],
            turns=by_item.get(r[0], []),
            status_history=changes.get(r[0], []),
        )
        for r in item_rows
    }
    return [found[i] for i in ids if i in found]


def _selects(
    which_items: sa.ColumnElement[bool], which_turns: sa.ColumnElement[bool]
) -> tuple[sa.Select[Any], sa.Select[Any], sa.Select[Any]]:
    """The three reads of :func:`read_items`: items, their turns, their evidence."""
    item_sel = (
        sa.select(
            items.c.id,
            items.c.kind,
            items.c.status,
            items.c.origin,
            items.c.notes,
            _text(items.c.extra),
            AUTHOR_NAME,
            items.c.created_at,
            items.c.updated_at,
            items.c.version,
        )
        .join(accounts, accounts.c.id == items.c.author_id)
        .where(which_items)
    )
    turn_sel = (
        sa.select(
            turns.c.id,
            turns.c.item_id,
            turns.c.query,
            turns.c.rewrite,
            turns.c.query_type,
            _text(turns.c.enrichments),
            turns.c.answer,
            _text(turns.c.alternatives),
            turns.c.original_answer,
            _text(turns.c.generation),
            _text(turns.c.retrieved),
        )
        .where(which_turns)
        .order_by(turns.c.item_id, turns.c.ordinal)
    )
    ev_sel = (
        sa.select(
            evidence.c.turn_id,
            evidence.c.doc_id,
            evidence.c.start,
            evidence.c.end,
            evidence.c.text,
            evidence.c.label,
            evidence.c.grade,
            evidence.c.group_no,
            evidence.c.origin,
            evidence.c.anchor,
            AUTHOR_NAME,
            evidence.c.created_at,
        )
        .join(turns, turns.c.id == evidence.c.turn_id)
        .join(accounts, accounts.c.id == evidence.c.author_id)
        .where(which_turns)
        .order_by(evidence.c.turn_id, evidence.c.ordinal)
    )
    return item_sel, turn_sel, ev_sel


@functools.cache
def _one_item_select() -> sa.Select[Any]:
    """One item of one project with its turns and evidence in one statement (a row per
    evidence, or per turn without any), with bound parameters, built once per process: the
    editor reads an item on every page, read and save. Its columns are those of
    :func:`_selects`' three reads, in order."""
    item_id = sa.bindparam("item_id", type_=sa.String)
    mine = sa.and_(items.c.id == item_id, items.c.project_id == sa.bindparam("project_id"))
    item_sel, turn_sel, ev_sel = _selects(mine, turns.c.item_id == item_id)
    author = accounts.alias("evidence_author")
    ev_author = sa.case(
        (author.c.display_name == "", author.c.username), else_=author.c.display_name
    )
    ev_columns = [c for c in ev_sel.selected_columns][:-2]  # its author name and time follow
    return (
        sa.select(
            *item_sel.selected_columns,
            *turn_sel.selected_columns,
            *ev_columns,
            ev_author,
            evidence.c.created_at,
        )
        .select_from(
            items.join(accounts, accounts.c.id == items.c.author_id)
            .outerjoin(turns, turns.c.item_id == items.c.id)
            .outerjoin(evidence, evidence.c.turn_id == turns.c.id)
            .outerjoin(author, author.c.id == evidence.c.author_id)
        )
        .where(mine)
        .order_by(turns.c.ordinal, evidence.c.ordinal)
    )


ITEM_COLUMNS, TURN_COLUMNS = 10, 11
"""How many columns of a :func:`_one_item_select` row are the item's, then the turn's."""


def _one_item_rows(
    conn: sa.Connection, item_id: str, project_id: int
) -> tuple[Sequence[Any], Sequence[Any], Sequence[Any]]:
    """The rows of :func:`_selects`' three reads for one item, from one statement."""
    found = conn.execute(_one_item_select(), {"item_id": item_id, "project_id": project_id})
    item_rows: list[Any] = []
    turn_rows: list[Any] = []
    ev_rows: list[Any] = []
    for row in found:
        if not item_rows:
            item_rows.append(row[:ITEM_COLUMNS])
        turn = row[ITEM_COLUMNS : ITEM_COLUMNS + TURN_COLUMNS]
        if turn[0] is None:
            continue  # an item without turns
        if not turn_rows or turn_rows[-1][0] != turn[0]:
            turn_rows.append(turn)
        ev = row[ITEM_COLUMNS + TURN_COLUMNS :]
        if ev[0] is not None:
            ev_rows.append(ev)
    return item_rows, turn_rows, ev_rows


def _as_stored(value: Any) -> Any:
    return value


def _fetcher(count: int) -> Callable[[sa.Connection, sa.Select[Any]], Sequence[Any]]:
    """How to run a read of ``count`` items: a batch bypasses SQLAlchemy's row processing
    (``driver_rows``); one item (the editor) keeps its cached compiled statements."""
    return driver_rows if count > 1 else _cached_rows


def _cached_rows(conn: sa.Connection, statement: sa.Select[Any]) -> Sequence[Any]:
    return conn.execute(statement).all()


def _status_history(
    conn: sa.Connection, ids: list[str], rows: Callable[[sa.Connection, sa.Select[Any]], Any]
) -> dict[str, list[StatusChange]]:
    """Per item, each recorded status change, oldest first."""
    stamps: dict[Any, datetime] = {}
    found = rows(
        conn,
        sa.select(events.c.item_id, _text(events.c.after), AUTHOR_NAME, events.c.at)
        .select_from(
            events.join(
                items,
                sa.and_(items.c.project_id == events.c.project_id, items.c.id == events.c.item_id),
            ).join(accounts, accounts.c.id == events.c.actor_id)
        )
        .where(items.c.id.in_(ids), events.c.action == "status")
        .order_by(events.c.item_id, events.c.at, events.c.id),
    )
    history: dict[str, list[StatusChange]] = {}
    for item_id, after, actor, at in found:
        status = (_json(after) or {}).get("status")
        if isinstance(status, str):
            history.setdefault(item_id, []).append(StatusChange(status, actor, _time(at, stamps)))
    return history


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
