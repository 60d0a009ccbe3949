"""An item as stored rows, both ways. Writing: an item's turns become rows and every evidence is
anchored on write (``document.text[start:end] == evidence.text`` or the write is refused,
except imported text that could not be located, kept as ``unlocated``, and evidence whose
document changed under it, kept as ``stale``), and the items list's denormalised fields are
computed once here. Reading: :func:`read_items` builds any number of items with their turns
and evidence in three queries (the editor, experiments and exports build them alike).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.sql.dml import ReturningDelete

from assay.corpus.anchoring import DocumentTexts, anchor_evidence
from assay.errors import InvalidInput
from assay.gold.jsonvalues import finite, non_finite
from assay.gold.taxonomy import UNANSWERABLE
from assay.people.actors import AUTHOR_NAME
from assay.records import Evidence, Item, StatusChange, Turn
from assay.store.bulk import insert_dicts, next_ids
from assay.store.db import as_utc, driver_rows, utcnow
from assay.store.schema import accounts, events, evidence, items, turns

TurnRows = tuple[dict[str, Any], list[dict[str, Any]]]
"""One turn's row and the rows of its evidence (without ``turn_id``: the turn has no id yet)."""


class ItemRows(NamedTuple):
    """An item's turns as rows, anchored and checked but not written."""

    turns: list[TurnRows]
    listing: dict[str, Any]
    """The items list's denormalised fields."""
    unlocated: int
    """Passages kept unverified: imported text not found in its document."""


def _turn_rows(
    texts: DocumentTexts,
    item_id: str,
    data: Item,
    author: int,
    named: Mapping[str, int],
    now: datetime,
) -> Iterator[TurnRows]:
    for t_index, turn in enumerate(data.turns):
        rows: list[dict[str, Any]] = []
        next_group = max((e.group or 0 for e in turn.evidence), default=0) + 1
        for e_index, ev in enumerate(turn.evidence):
            if turn.query_type == UNANSWERABLE and ev.label == "relevant":
                continue  # an unanswerable question has no relevant passage (RAGold's rule)
            where = f"turn {t_index + 1}, evidence {e_index + 1}"
            doc_id, start, end, text, anchor = anchor_evidence(ev, texts, where)
            group = ev.group
            if group is None:
                group, next_group = (
                    (next_group, next_group + 1) if ev.label == "relevant" else (0, next_group)
                )
            rows.append(
                {
                    "ordinal": len(rows),
                    "doc_id": doc_id,
                    "start": start,
                    "end": end,
                    "text": text,
                    "label": ev.label,
                    "grade": ev.grade,
                    "group_no": group,
                    "origin": ev.origin,
                    "anchor": anchor,
                    "author_id": named.get(ev.author, author) if ev.author else author,
                    "created_at": as_utc(ev.created_at) if ev.created_at else now,
                }
            )
        turn_row = {
            "item_id": item_id,
            "ordinal": t_index,
            "query": turn.query,
            "rewrite": turn.rewrite,
            "query_type": turn.query_type.strip() or "fact_single",
            "enrichments": turn.enrichments,
            "answer": turn.answer,
            "alternatives": [a for a in turn.alternatives if a.strip()],
            "original_answer": turn.original_answer,
            "generation": turn.generation,
            "retrieved": turn.retrieved,
        }
        yield turn_row, rows


def item_rows(
    texts: DocumentTexts,
    item_id: str,
    data: Item,
    author: int,
    named: Mapping[str, int],
    now: datetime | None = None,
) -> ItemRows:
    """The item's turns and evidence as rows, every evidence anchored in ``texts``. Evidence
    is ``author``'s (an account id) unless it names its author, found in ``named``; new
    evidence is from ``now`` (default: this moment)."""
    found = list(_turn_rows(texts, item_id, data, author, named, now or utcnow()))
    if not found:
        raise InvalidInput("an item needs at least one turn")
    if data.kind == "qa" and len(data.turns) != 1:
        raise InvalidInput(f"a single-turn item has exactly one turn, not {len(data.turns)}")
    first = found[0][0]
    evidence_rows = [row for _, rows in found for row in rows]
    listing = {
        "query": first["query"],
        "query_type": first["query_type"],
        "turn_count": len(data.turns),
        "evidence_count": len(evidence_rows),
        "search_text": search_text(data.notes, [(t.query, t.answer) for t in data.turns]),
    }
    return ItemRows(found, listing, sum(row["anchor"] == "unlocated" for row in evidence_rows))


def insert_turns(
    conn: sa.Connection, written: Sequence[ItemRows], free_ids: Sequence[int] = ()
) -> None:
    """Insert the turns and evidence of items whose rows are built: the turns' ids are taken
    first (``free_ids``, ascending, before new ones), then all turns and all evidence go in
    at the driver's speed (:mod:`assay.store.bulk`)."""
    found = [turn for rows in written for turn in rows.turns]
    if not found:
        return
    ids = list(free_ids[: len(found)])
    if len(ids) < len(found):  # SQLite's next ids follow the largest left: maybe a freed one
        fresh = next_ids(conn, turns, len(found))
        ids += [i for i in fresh if i not in ids][: len(found) - len(ids)]
    numbered = [{"id": turn_id, **row} for turn_id, (row, _) in zip(ids, found, strict=True)]
    insert_dicts(conn, turns, numbered)
    passages = [
        {**row, "turn_id": turn_id}
        for turn_id, (_, rows) in zip(ids, found, strict=True)
        for row in rows
    ]
    insert_dicts(conn, evidence, passages)


def replace_turns(conn: sa.Connection, item_id: str, rows: ItemRows) -> None:
    """Replace the item's turns and evidence with ``rows`` (built by :func:`item_rows`).
    The new turns take the ids of the deleted ones, in order (only evidence refers to a
    turn's id, and it goes with its turn), so a save of as many turns asks for no new id."""
    freed = sorted(conn.execute(_turns_delete(), {"item_id": item_id}).scalars())
    insert_turns(conn, [rows], freed)


@functools.cache
def _turns_delete() -> ReturningDelete[int]:
    """Every save deletes the item's turns (their evidence goes with them) and learns their
    ids: built once per process (bound parameter)."""
    item_id = sa.bindparam("item_id", type_=sa.String)
    return turns.delete().where(turns.c.item_id == item_id).returning(turns.c.id)


def check_storable(data: Item) -> None:
    """Free JSON fields hold finite numbers only: NaN or Infinity would break every later
    read on SQLite and fail the write on PostgreSQL."""
    places: list[tuple[Any, str]] = [(data.extra, "extra")]
    for number, turn in enumerate(data.turns, start=1):
        places += [(turn.generation, f"turn {number}: generation")]
        places += [(turn.retrieved, f"turn {number}: retrieved")]
    for value, name in places:
        where = non_finite(value, name)
        if where:
            raise InvalidInput(
                f"{where} is not a finite number (NaN and Infinity cannot be stored)"
            )


def search_text(notes: str, turns_text: list[tuple[str, str]]) -> str:
    """What the items list's free-text filter looks in: questions, answers and notes, folded
    to lower case once at write time, so filtering scans one column instead of joining turns."""
    parts = [part for query, answer in turns_text for part in (query, answer)]
    return "\n".join([*parts, notes]).casefold()


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
