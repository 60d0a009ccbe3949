"""Storing new suggestions, at most one waiting per passage of a turn (relevance) and one per
turn (rewrite), even when two requests store theirs at once: two partial unique indexes hold
the rule (migration 0019), so a second request cannot store what the first one did.

A relevance suggestion for a passage that waits already is not stored (the request reports
the passage as pending). A new rewrite replaces the turn's waiting one, which stays as a
record in the state ``replaced``. :mod:`assay.gold.suggestions` lists and decides them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from assay.errors import Conflict
from assay.records import Project
from assay.store.db import utcnow
from assay.store.import_lock import check_writable
from assay.store.suggestion_schema import suggestions

RACES = 3
"""How often storing a rewrite replaces the waiting one before giving up: each try fails only
when another request stored its rewrite of the same turn in between."""


def insert_suggestions(
    conn: sa.Connection, project: Project, item_id: str, rows: Iterable[dict[str, Any]]
) -> list[int | None]:
    """Store new pending suggestions (rows with the table's columns, less id, project, item
    and state); their ids in order. None for a relevance suggestion whose passage has one
    waiting already (another request stored it meanwhile): it is not stored. A rewrite
    replaces the turn's waiting one, which becomes ``replaced``."""
    check_writable(conn, project.id)
    now = utcnow()
    ids: list[int | None] = []
    for row in rows:
        values = {**row, "project_id": project.id, "item_id": item_id, "state": "pending"}
        values.setdefault("created_at", now)
        if values["kind"] == "rewrite":
            ids.append(_replace_rewrite(conn, values))
        else:
            ids.append(_insert_pending(conn, values))
    return ids


def _insert_pending(conn: sa.Connection, values: dict[str, Any]) -> int | None:
    """Insert unless the partial unique indexes hold a pending one like it: its id, or None.
    ``ON CONFLICT DO NOTHING`` waits for a concurrent transaction that stored one, so two
    requests at once never both store theirs (SQLite and PostgreSQL alike)."""
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    statement = (
        insert(suggestions).values(**values).on_conflict_do_nothing().returning(suggestions.c.id)
    )
    found = conn.execute(statement).scalar()
    return None if found is None else int(found)


def _replace_rewrite(conn: sa.Connection, values: dict[str, Any]) -> int:
    """Store a rewrite in place of the turn's waiting one (kept as ``replaced``)."""
    waiting = suggestions.update().where(
        suggestions.c.item_id == values["item_id"],
        suggestions.c.turn_ordinal == values["turn_ordinal"],
        suggestions.c.kind == "rewrite",
        suggestions.c.state == "pending",
    )
    for _ in range(RACES):
        conn.execute(waiting.values(state="replaced"))
        stored = _insert_pending(conn, values)
        if stored is not None:
            return stored
    raise Conflict(
        f"turn {values['turn_ordinal'] + 1} of item {values['item_id']!r} got new rewrites "
        "from other requests meanwhile; ask again"
    )
