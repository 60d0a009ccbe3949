"""Suggestions waiting for a person: stored, listed, accepted, rejected and counted.

An LLM's relevance label for a passage (relevant, distracting or irrelevant, with a short
reason) or its standalone rewrite of a conversation question is a **suggestion**, never gold:
it is kept in its own table (:mod:`assay.store.suggestion_schema`) with the model, the prompt
hash and the parameters that made it, and waits as ``pending`` until a person decides.

* Accepting a relevance suggestion adds evidence of origin ``llm-suggestion`` to the turn
  through the item's normal save (:func:`assay.gold.items.save_item`), so the anchoring
  invariant ``document.text[start:end] == evidence.text`` is checked like for any evidence and
  the change is in the item's history. Accepting a rewrite sets the turn's standalone rewrite
  (the person may edit it first; the text taken is kept in ``final_text``).
* Rejecting changes nothing but the suggestion, which stays as a record.
* Either way the suggestion keeps who decided and when; :func:`acceptance_rates` counts them.
* At most one suggestion waits per passage of a turn and one rewrite per turn, even when two
  requests store theirs at once (:func:`insert_suggestions`: two partial unique indexes hold
  the rule, migration 0019). A relevance suggestion for a passage that waits already is not
  stored (the request reports the passage as pending); a new rewrite replaces the turn's
  waiting one, which stays as a record in the state ``replaced``, not counted in the rates.

Asking the generator is :mod:`assay.gold.suggesting`'s part.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from assay.errors import Conflict, InvalidInput, NotFound
from assay.gold.items import StaleItem, editable_copy, get_item, save_item
from assay.gold.taxonomy import UNANSWERABLE
from assay.records import LABELS, Evidence, Item, Project
from assay.store.db import as_utc, reading, transaction, utcnow
from assay.store.import_lock import check_writable
from assay.store.schema import accounts
from assay.store.suggestion_schema import suggestions
from assay.store.workspace import Workspace

ORIGIN = "llm-suggestion"


KINDS = ("relevance", "rewrite")


STATES = ("pending", "accepted", "rejected", "replaced")


COUNTED = STATES[:3]
"""The states :func:`acceptance_rates` counts (a replaced rewrite was never decided)."""


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One stored suggestion. ``turn`` counts from 1; ``doc_id``/``start``/``end`` name the
    passage of a relevance suggestion (``text`` is its text then, the rewrite otherwise)."""

    id: int
    item_id: str
    turn: int
    kind: str
    doc_id: str | None
    start: int | None
    end: int | None
    text: str
    label: str | None
    reason: str
    model: str
    prompt_hash: str
    params: dict[str, Any]
    state: str
    final_text: str | None
    created_by: str
    created_at: datetime
    decided_by: str | None = None
    decided_at: datetime | None = None


@dataclass(slots=True)
class Decided:
    """What one accept or reject did: the suggestions as stored after it, the item (when it
    was saved) and the suggestions left pending because the turn disagrees (``skipped``)."""

    suggestions: list[Suggestion] = field(default_factory=list)
    item: Item | None = None
    skipped: list[tuple[int, str]] = field(default_factory=list)


# ---------------------------------------------------------------- reading


def _shown_name(account: Any) -> Any:
    """An account's name as :data:`assay.people.actors.AUTHOR_NAME` shows it, for an alias."""
    return sa.case((account.c.display_name == "", account.c.username), else_=account.c.display_name)


def _select() -> Any:
    made = accounts.alias("made")
    decided = accounts.alias("decided")
    return (
        sa.select(
            *suggestions.c,
            _shown_name(made).label("made_name"),
            _shown_name(decided).label("decided_name"),
        )
        .join(made, made.c.id == suggestions.c.created_by)
        .outerjoin(decided, decided.c.id == suggestions.c.decided_by)
        .order_by(suggestions.c.turn_ordinal, suggestions.c.id)
    )


def _record(row: Any) -> Suggestion:
    return Suggestion(
        id=row.id,
        item_id=row.item_id,
        turn=row.turn_ordinal + 1,
        kind=row.kind,
        doc_id=row.doc_id,
        start=row.start,
        end=row.end,
        text=row.text,
        label=row.label,
        reason=row.reason,
        model=row.model,
        prompt_hash=row.prompt_hash,
        params=dict(row.params or {}),
        state=row.state,
        final_text=row.final_text,
        created_by=str(row.made_name or ""),
        created_at=as_utc(row.created_at),
        decided_by=None if row.decided_by is None else str(row.decided_name or ""),
        decided_at=None if row.decided_at is None else as_utc(row.decided_at),
    )


def list_suggestions(
    ws: Workspace,
    project: Project,
    item_id: str,
    *,
    turn: int | None = None,
    state: str | None = None,
    kind: str | None = None,
    conn: sa.Connection | None = None,
) -> list[Suggestion]:
    """The item's suggestions in turn order, oldest first; ``turn`` (from 1), ``state`` and
    ``kind`` narrow them."""
    if state is not None and state not in STATES:
        raise InvalidInput(f"unknown suggestion state {state!r}; states: {', '.join(STATES)}")
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"unknown suggestion kind {kind!r}; kinds: {', '.join(KINDS)}")
    query = _select().where(
        suggestions.c.project_id == project.id, suggestions.c.item_id == item_id
    )
    if turn is not None:
        query = query.where(suggestions.c.turn_ordinal == turn - 1)
    if state is not None:
        query = query.where(suggestions.c.state == state)
    if kind is not None:
        query = query.where(suggestions.c.kind == kind)
    with reading(ws.engine, conn) as conn:
        return [_record(row) for row in conn.execute(query)]


def _by_ids(
    conn: sa.Connection, project: Project, item_id: str, ids: Sequence[int]
) -> list[Suggestion]:
    if not ids:
        raise InvalidInput("name at least one suggestion")
    wanted = list(dict.fromkeys(ids))
    rows = conn.execute(
        _select().where(
            suggestions.c.project_id == project.id,
            suggestions.c.item_id == item_id,
            suggestions.c.id.in_(wanted),
        )
    ).all()
    found = {row.id: _record(row) for row in rows}
    missing = [str(i) for i in wanted if i not in found]
    if missing:
        raise NotFound(f"item {item_id!r} has no suggestion {', '.join(missing)}")
    return [found[i] for i in wanted]


# ---------------------------------------------------------------- deciding


def _check_pending(found: Sequence[Suggestion]) -> None:
    done = [f"{s.id} ({s.state})" for s in found if s.state != "pending"]
    if done:
        raise Conflict(f"suggestion(s) {', '.join(done)} were decided already")


def _mark(
    conn: sa.Connection, ids: Sequence[int], state: str, actor: int, final: dict[int, str]
) -> None:
    now = utcnow()
    for sid in ids:
        conn.execute(
            suggestions.update()
            .where(suggestions.c.id == sid, suggestions.c.state == "pending")
            .values(state=state, decided_by=actor, decided_at=now, final_text=final.get(sid))
        )


def _apply(data: Item, s: Suggestion, rewrite: str | None) -> str | None:
    """Change ``data`` as accepting ``s`` asks; the reason it cannot be accepted, else None."""
    if s.turn > len(data.turns):
        return f"suggestion {s.id}: the item has no turn {s.turn} any more"
    turn = data.turns[s.turn - 1]
    if s.kind == "rewrite":
        text = s.text if rewrite is None else " ".join(rewrite.split())
        if not text:
            return f"suggestion {s.id}: the rewrite is empty"
        turn.rewrite = text
        return None
    if s.label not in LABELS:
        return f"suggestion {s.id}: unknown label {s.label!r}"
    if s.label == "relevant" and turn.query_type == UNANSWERABLE:
        return (
            f"suggestion {s.id}: turn {s.turn} is marked unanswerable, so no passage may be "
            "relevant; change the question type first"
        )
    same = [e for e in turn.evidence if (e.doc_id, e.start, e.end) == (s.doc_id, s.start, s.end)]
    if same:
        if all(e.label == s.label for e in same):
            return None  # marked so already: accepting agrees, nothing to add
        return (
            f"suggestion {s.id}: the passage is already marked {same[0].label} in turn "
            f"{s.turn}; reject the suggestion or change the label in the editor"
        )
    turn.evidence.append(
        Evidence(
            doc_id=s.doc_id,
            start=s.start,
            end=s.end,
            text=s.text,
            label=s.label,
            group=None,
            origin=ORIGIN,
            anchor=None,
            author=None,
        )
    )
    return None


def accept_suggestions(
    ws: Workspace,
    project: Project,
    item_id: str,
    ids: Sequence[int],
    base_version: int,
    *,
    actor: int,
    rewrite: str | None = None,
    skip_disagreeing: bool = False,
) -> Decided:
    """Accept pending suggestions of one item in one transaction, from the item version the
    person saw (a stale one raises :class:`StaleItem`, nothing changes). Relevance
    suggestions become evidence of origin ``llm-suggestion`` (relevant ones in a group of
    their own), a rewrite suggestion the turn's rewrite (``rewrite``: the text as the person
    edited it). One that cannot be accepted (the passage is marked otherwise, the turn is
    gone) raises InvalidInput, unless ``skip_disagreeing``: then it stays pending and is
    listed in ``skipped`` (accept all)."""
    with transaction(ws.engine, None) as conn:
        check_writable(conn, project.id)
        found = _by_ids(conn, project, item_id, ids)
        _check_pending(found)
        if rewrite is not None and (len(found) != 1 or found[0].kind != "rewrite"):
            raise InvalidInput("an edited rewrite can only be sent with one rewrite suggestion")
        item = get_item(ws, project, item_id, conn=conn)
        if item.version != base_version:
            raise StaleItem(item, base_version)
        data = editable_copy(item)
        accepted: list[int] = []
        skipped: list[tuple[int, str]] = []
        for s in found:
            problem = _apply(data, s, rewrite)
            if problem is None:
                accepted.append(s.id)
            elif skip_disagreeing:
                skipped.append((s.id, problem))
            else:
                raise InvalidInput(problem)
        saved = None
        if data != item:
            saved = save_item(
                ws, project, item_id, data, base_version, author=actor,
                action="accept-suggestion", conn=conn,
            )  # fmt: skip
        final = {s.id: data.turns[s.turn - 1].rewrite for s in found if s.kind == "rewrite"}
        _mark(conn, accepted, "accepted", actor, final)
        after = _by_ids(conn, project, item_id, [s.id for s in found])
        return Decided(after, saved, skipped)


def reject_suggestions(
    ws: Workspace, project: Project, item_id: str, ids: Sequence[int], *, actor: int
) -> Decided:
    """Reject pending suggestions: the item stays as it is, the suggestions stay as records
    of who rejected them and when."""
    with transaction(ws.engine, None) as conn:
        check_writable(conn, project.id)
        found = _by_ids(conn, project, item_id, ids)
        _check_pending(found)
        _mark(conn, [s.id for s in found], "rejected", actor, {})
        return Decided(_by_ids(conn, project, item_id, [s.id for s in found]))


# ---------------------------------------------------------------- acceptance rates


def _rate(counts: dict[str, int]) -> dict[str, Any]:
    decided = counts["accepted"] + counts["rejected"]
    return {
        **counts,
        "total": decided + counts["pending"],
        "acceptance_rate": round(counts["accepted"] / decided, 4) if decided else None,
    }


def acceptance_rates(
    ws: Workspace, project: Project, *, conn: sa.Connection | None = None
) -> dict[str, Any]:
    """How many suggestions people accepted: relevance suggestions per suggested label and
    per model, rewrites per model, and all of them. ``acceptance_rate`` is accepted out of
    decided (accepted + rejected); pending ones are counted apart and do not lower it."""
    query = (
        sa.select(
            suggestions.c.kind,
            suggestions.c.label,
            suggestions.c.model,
            suggestions.c.state,
            sa.func.count(),
        )
        .where(suggestions.c.project_id == project.id)
        .group_by(suggestions.c.kind, suggestions.c.label, suggestions.c.model, suggestions.c.state)
    )
    with reading(ws.engine, conn) as conn:
        rows = conn.execute(query).all()
    empty = dict.fromkeys(COUNTED, 0)
    by_label = {label: dict(empty) for label in LABELS}
    by_model: dict[str, dict[str, int]] = {}
    rewrites: dict[str, dict[str, int]] = {}
    overall = dict(empty)
    for kind, label, model, state, n in rows:
        if state not in empty:
            continue
        overall[state] += n
        if kind == "rewrite":
            rewrites.setdefault(model, dict(empty))[state] += n
            continue
        by_label.setdefault(label or "", dict(empty))[state] += n
        by_model.setdefault(model, dict(empty))[state] += n
    return {
        "overall": _rate(overall),
        "relevance_by_label": [{"label": k, **_rate(v)} for k, v in by_label.items()],
        "relevance_by_model": [{"model": k, **_rate(v)} for k, v in sorted(by_model.items())],
        "rewrite_by_model": [{"model": k, **_rate(v)} for k, v in sorted(rewrites.items())],
    }


# ---------------------------------------------------------------- storing


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
