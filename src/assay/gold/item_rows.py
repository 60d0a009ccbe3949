"""Turning an item's turns into stored rows: every evidence is anchored on write
(``document.text[start:end] == evidence.text`` or the write is refused, except imported text
that could not be located, kept as ``unlocated``, and evidence whose document changed under
it, kept as ``stale``), and the items list's denormalised fields are computed once here.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.sql.dml import ReturningDelete

from assay.corpus.anchoring import DocumentTexts, anchor_evidence
from assay.errors import InvalidInput
from assay.gold.jsonvalues import non_finite
from assay.gold.taxonomy import UNANSWERABLE
from assay.records import Item
from assay.store.bulk import insert_dicts, next_ids
from assay.store.db import as_utc, utcnow
from assay.store.schema import evidence, turns

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
