"""Gold items, their turns and evidence: create, save, read, list, delete.

Saving an item replaces its turns and evidence as one transaction and carries the version the
editor read (optimistic concurrency): a stale save raises :class:`StaleItem` with the stored
item attached, so nothing either side wrote is lost. Every evidence is anchored on write:
``document.text[start:end] == evidence.text`` or the write is refused, except for imported
text that could not be located (kept as ``unlocated``) and evidence whose document changed
under it (kept as ``stale``). Drafts may be incomplete; completeness is checked by
``assay.gold.checks`` when an item is submitted.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, NamedTuple

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field

from assay.corpus.anchoring import (
    DocumentTexts,
    EvidenceIn,
    anchor_evidence,
    needing_review,
    needs_review,
)
from assay.errors import Conflict, InvalidInput, NotFound
from assay.gold.checks import check_item, errors
from assay.gold.jsonvalues import finite, non_finite
from assay.gold.taxonomy import UNANSWERABLE
from assay.records import Evidence, Item, ItemSummary, Project, Turn, to_json
from assay.store.db import as_utc, reading, transaction, utcnow
from assay.store.import_lock import check_writable
from assay.store.schema import events, evidence, items, turns
from assay.store.workspace import Workspace

Status = Literal["draft", "submitted", "accepted", "rejected"]
STATUSES: tuple[str, ...] = ("draft", "submitted", "accepted", "rejected")


class TurnIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = ""
    rewrite: str = ""
    query_type: str = "fact_single"
    enrichments: dict[str, list[str]] = Field(default_factory=dict)
    answer: str = ""
    alternatives: list[str] = Field(default_factory=list)
    original_answer: str = ""
    generation: dict[str, Any] = Field(default_factory=dict)
    retrieved: list[dict[str, Any]] = Field(default_factory=list)
    evidence: list[EvidenceIn] = Field(default_factory=list)


class ItemIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["qa", "conversation"] = "qa"
    notes: str = ""
    origin: str = "human"
    extra: dict[str, Any] = Field(default_factory=dict)
    turns: list[TurnIn] = Field(default_factory=lambda: [TurnIn()])


class StaleItem(Conflict):
    """The item changed since the editor read it; ``current`` is what is stored now."""

    def __init__(self, current: Item, base_version: int) -> None:
        super().__init__(
            f"item {current.id} was changed elsewhere (you edited version {base_version}, "
            f"it is now version {current.version}); nothing was overwritten"
        )
        self.current = current


# ---------------------------------------------------------------- writing


def _turn_rows(
    conn: sa.Connection, project: Project, item_id: str, data: ItemIn, author: str
) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    texts = DocumentTexts(conn, project.id)
    now = utcnow()
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
                    "author": ev.author or author,
                    "created_at": parse_time(ev.created_at) or now,
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


def parse_time(value: str | None) -> datetime | None:
    """An ISO 8601 time as UTC; None for an empty or unreadable one."""
    if not value:
        return None
    try:
        return as_utc(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        return None


def _write_turns(
    conn: sa.Connection, project: Project, item_id: str, data: ItemIn, author: str
) -> tuple[dict[str, Any], int]:
    """Replace the item's turns and evidence; returns the denormalised listing fields and how
    many passages are unlocated."""
    conn.execute(turns.delete().where(turns.c.item_id == item_id))
    evidence_count = unlocated = 0
    first: dict[str, Any] | None = None
    for turn_row, evidence_rows in _turn_rows(conn, project, item_id, data, author):
        turn_id = conn.execute(turns.insert(), turn_row).inserted_primary_key[0]  # type: ignore[index]
        if evidence_rows:
            conn.execute(evidence.insert(), [{**row, "turn_id": turn_id} for row in evidence_rows])
        evidence_count += len(evidence_rows)
        unlocated += sum(row["anchor"] == "unlocated" for row in evidence_rows)
        first = first or turn_row
    if first is None:
        raise InvalidInput("an item needs at least one turn")
    if data.kind == "qa" and len(data.turns) != 1:
        raise InvalidInput(f"a single-turn item has exactly one turn, not {len(data.turns)}")
    return {
        "query": first["query"],
        "query_type": first["query_type"],
        "turn_count": len(data.turns),
        "evidence_count": evidence_count,
        "search_text": search_text(data.notes, [(t.query, t.answer) for t in data.turns]),
    }, unlocated


def _check_storable(data: ItemIn) -> None:
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


def _event(
    conn: sa.Connection,
    project: Project,
    item_id: str,
    actor: str,
    action: str,
    before: Any,
    after: Any,
    *,
    at: datetime | None = None,
) -> None:
    conn.execute(
        events.insert(),
        {
            "project_id": project.id,
            "item_id": item_id,
            "actor": actor,
            "action": action,
            "before": before,
            "after": after,
            "at": at or utcnow(),
        },
    )


class Created(NamedTuple):
    id: str
    unlocated: int
    """Passages kept unverified: imported text not found in its document."""


def create_item(
    ws: Workspace,
    project: Project,
    data: ItemIn,
    *,
    author: str | None = None,
    status: Status = "draft",
    item_id: str | None = None,
    conn: sa.Connection | None = None,
) -> Item:
    created = insert_item(
        ws, project, data, author=author, status=status, item_id=item_id, conn=conn
    )
    return get_item(ws, project, created.id, conn=conn)


@dataclass(frozen=True, slots=True)
class KeptHistory:
    """What an import keeps of an item's past, so a round trip loses nothing: its dates,
    version and status changes ``(status, actor, ISO time)``, oldest first."""

    created_at: datetime | None = None
    updated_at: datetime | None = None
    version: int = 1
    status_changes: tuple[tuple[str, str, str], ...] = ()


def insert_item(
    ws: Workspace,
    project: Project,
    data: ItemIn,
    *,
    author: str | None = None,
    status: Status = "draft",
    item_id: str | None = None,
    history: KeptHistory | None = None,
    conn: sa.Connection | None = None,
) -> Created:
    """:func:`create_item` without reading the item back (an import stores thousands);
    ``history`` (imports) keeps the item's dates, version and status changes."""
    author = author if author is not None else ws.settings.author
    item_id = item_id or str(uuid.uuid4())
    _check_storable(data)
    history = history or KeptHistory()
    now = utcnow()
    with transaction(ws.engine, conn) as conn:
        check_writable(conn, project.id)
        if conn.scalar(sa.select(items.c.id).where(items.c.id == item_id)):
            raise Conflict(f"an item with id {item_id!r} already exists")
        conn.execute(
            items.insert(),  # parameters, not .values(): no statement to build per item
            {
                "id": item_id,
                "project_id": project.id,
                "kind": data.kind,
                "status": status,
                "origin": data.origin,
                "query": "",
                "query_type": "",
                "turn_count": 0,
                "evidence_count": 0,
                "notes": data.notes,
                "extra": data.extra,
                "author": author,
                "version": history.version,
                "created_at": history.created_at or now,
                "updated_at": history.updated_at or history.created_at or now,
            },
        )
        listing, unlocated = _write_turns(conn, project, item_id, data, author)
        conn.execute(items.update().where(items.c.id == item_id), listing)
        _event(conn, project, item_id, author, "create", None, data.model_dump())
        for status_now, actor, at in history.status_changes:
            _event(
                conn, project, item_id, actor, "status", None, {"status": status_now},
                at=parse_time(at),
            )  # fmt: skip
    return Created(item_id, unlocated)


def save_item(
    ws: Workspace,
    project: Project,
    item_id: str,
    data: ItemIn,
    base_version: int,
    *,
    author: str | None = None,
    action: str = "save",
    conn: sa.Connection | None = None,
) -> Item:
    """Replace an item's content if it is still at ``base_version``; else raise StaleItem.
    ``action`` names the change in the item's history (a plain save unless told)."""
    author = author if author is not None else ws.settings.author
    _check_storable(data)
    with transaction(ws.engine, conn) as conn:
        check_writable(conn, project.id)
        before = _load(conn, project, item_id)
        changed = conn.execute(
            items.update()
            .where(items.c.id == item_id, items.c.version == base_version)
            .values(
                kind=data.kind,
                origin=data.origin,
                notes=data.notes,
                extra=data.extra,
                version=base_version + 1,
                updated_at=utcnow(),
            )
        ).rowcount
        if changed != 1:
            raise StaleItem(before, base_version)
        listing, _ = _write_turns(conn, project, item_id, data, author)
        conn.execute(items.update().where(items.c.id == item_id).values(**listing))
        _event(conn, project, item_id, author, action, to_json(before), data.model_dump())
        return _load(conn, project, item_id)


def set_status(
    ws: Workspace,
    project: Project,
    item_id: str,
    status: str,
    base_version: int,
    *,
    actor: str | None = None,
    conn: sa.Connection | None = None,
) -> Item:
    if status not in STATUSES:
        raise InvalidInput(f"unknown status {status!r}; choose one of: {', '.join(STATUSES)}")
    actor = actor if actor is not None else ws.settings.author
    with transaction(ws.engine, conn) as conn:
        check_writable(conn, project.id)
        before = _load(conn, project, item_id)
        changed = conn.execute(
            items.update()
            .where(items.c.id == item_id, items.c.version == base_version)
            .values(status=status, version=base_version + 1, updated_at=utcnow())
        ).rowcount
        if changed != 1:
            raise StaleItem(before, base_version)
        _event(
            conn, project, item_id, actor, "status", {"status": before.status}, {"status": status}
        )
        return _load(conn, project, item_id)


def delete_item(
    ws: Workspace,
    project: Project,
    item_id: str,
    *,
    actor: str | None = None,
    conn: sa.Connection | None = None,
) -> None:
    with transaction(ws.engine, conn) as conn:
        check_writable(conn, project.id)
        before = _load(conn, project, item_id)
        conn.execute(items.delete().where(items.c.id == item_id))
        _event(
            conn,
            project,
            item_id,
            actor if actor is not None else ws.settings.author,
            "delete",
            to_json(before),
            None,
        )


def item_input(item: Item) -> ItemIn:
    """The editable form of a stored item (what an editor sends back when saving)."""
    return ItemIn(
        kind=item.kind,  # type: ignore[arg-type]
        notes=item.notes,
        origin=item.origin,
        extra=item.extra,
        turns=[
            TurnIn(
                query=t.query,
                rewrite=t.rewrite,
                query_type=t.query_type,
                enrichments=t.enrichments,
                answer=t.answer,
                alternatives=list(t.alternatives),
                original_answer=t.original_answer,
                generation=t.generation,
                retrieved=list(t.retrieved),
                evidence=[
                    EvidenceIn(
                        doc_id=e.doc_id,
                        start=e.start,
                        end=e.end,
                        text=e.text,
                        label=e.label,  # type: ignore[arg-type]
                        grade=e.grade,
                        group=e.group,
                        origin=e.origin,  # type: ignore[arg-type]
                        anchor=e.anchor,  # type: ignore[arg-type]
                        author=e.author,
                        created_at=e.created_at.isoformat(),
                    )
                    for e in t.evidence
                ],
            )
            for t in item.turns
        ],
    )


# ---------------------------------------------------------------- reading


def _load(conn: sa.Connection, project: Project, item_id: str) -> Item:
    row = conn.execute(
        sa.select(items).where(items.c.id == item_id, items.c.project_id == project.id)
    ).first()
    if row is None:
        raise NotFound(f"project {project.name!r} has no item {item_id!r}")
    return _assemble(conn, [row])[0]


def _assemble(conn: sa.Connection, rows: list[Any]) -> list[Item]:
    """Items with their turns and evidence, three queries for any number of rows."""
    turn_rows = conn.execute(
        sa.select(turns)
        .where(turns.c.item_id.in_([r.id for r in rows]))
        .order_by(turns.c.item_id, turns.c.ordinal)
    ).all()
    ev_rows = conn.execute(
        sa.select(evidence)
        .where(evidence.c.turn_id.in_([t.id for t in turn_rows]))
        .order_by(evidence.c.turn_id, evidence.c.ordinal)
    ).all()
    by_turn: dict[int, list[Evidence]] = {t.id: [] for t in turn_rows}
    for e in ev_rows:
        by_turn[e.turn_id].append(
            Evidence(
                doc_id=e.doc_id,
                start=e.start,
                end=e.end,
                text=e.text,
                label=e.label,
                grade=e.grade,
                group=e.group_no,
                origin=e.origin,
                anchor=e.anchor,
                author=e.author,
                created_at=as_utc(e.created_at),
            )
        )
    by_item: dict[str, list[Turn]] = {r.id: [] for r in rows}
    for t in turn_rows:
        by_item[t.item_id].append(
            Turn(
                ordinal=t.ordinal,
                query=t.query,
                rewrite=t.rewrite,
                query_type=t.query_type,
                enrichments=dict(t.enrichments or {}),
                answer=t.answer,
                alternatives=tuple(t.alternatives or ()),
                original_answer=t.original_answer,
                generation=finite(dict(t.generation or {})),
                retrieved=finite(tuple(t.retrieved or ())),
                evidence=tuple(by_turn[t.id]),
            )
        )
    return [
        Item(
            id=row.id,
            project_id=row.project_id,
            kind=row.kind,
            status=row.status,
            origin=row.origin,
            notes=row.notes,
            extra=finite(dict(row.extra or {})),
            author=row.author,
            version=row.version,
            created_at=as_utc(row.created_at),
            updated_at=as_utc(row.updated_at),
            turns=tuple(by_item[row.id]),
        )
        for row in rows
    ]


def iter_items(
    ws: Workspace,
    project: Project,
    *,
    statuses: Iterable[str] | None = None,
    batch_size: int = 500,
) -> Iterator[Item]:
    """Every item of a project (oldest first), read in batches: exports stream with this."""
    where = [items.c.project_id == project.id]
    if statuses is not None:
        where.append(items.c.status.in_(list(statuses)))
    with ws.engine.connect() as conn:
        ids = conn.scalars(
            sa.select(items.c.id).where(*where).order_by(items.c.created_at, items.c.id)
        ).all()
    for offset in range(0, len(ids), batch_size):
        batch = ids[offset : offset + batch_size]
        with ws.engine.connect() as conn:
            rows = {r.id: r for r in conn.execute(sa.select(items).where(items.c.id.in_(batch)))}
            yield from _assemble(conn, [rows[i] for i in batch if i in rows])


def evidence_spans(ws: Workspace, project: Project) -> dict[str, set[tuple[int, int]]]:
    """The anchored passages of a project's items by document: ``{doc_id: {(start, end)}}``."""
    spans: dict[str, set[tuple[int, int]]] = {}
    with ws.engine.connect() as conn:
        rows = conn.execute(
            sa.select(evidence.c.doc_id, evidence.c.start, evidence.c.end)
            .join(turns, turns.c.id == evidence.c.turn_id)
            .join(items, items.c.id == turns.c.item_id)
            .where(
                items.c.project_id == project.id,
                evidence.c.doc_id.is_not(None),
                evidence.c.start.is_not(None),
                evidence.c.end.is_not(None),
            )
            .distinct()
        )
        for doc_id, start, end in rows:
            spans.setdefault(doc_id, set()).add((start, end))
    return spans


def _summary(r: Any) -> ItemSummary:
    return ItemSummary(
        id=r.id,
        kind=r.kind,
        status=r.status,
        origin=r.origin,
        query=r.query,
        query_type=r.query_type,
        turn_count=r.turn_count,
        evidence_count=r.evidence_count,
        author=r.author,
        version=r.version,
        updated_at=as_utc(r.updated_at),
        needs_review=bool(r.needs_review),
    )


def get_item(
    ws: Workspace, project: Project, item_id: str, *, conn: sa.Connection | None = None
) -> Item:
    with reading(ws.engine, conn) as conn:
        return _load(conn, project, item_id)


SORTS: dict[str, Any] = {
    "updated": items.c.updated_at,
    "created": items.c.created_at,
    "query": items.c.query,
    "status": items.c.status,
    "type": items.c.query_type,
    "author": items.c.author,
}


def list_items(
    ws: Workspace,
    project: Project,
    *,
    status: str | None = None,
    query_type: str | None = None,
    author: str | None = None,
    kind: str | None = None,
    text: str = "",
    review: bool = False,
    sort: str = "-updated",
    offset: int = 0,
    limit: int = 50,
) -> tuple[int, list[ItemSummary]]:
    """One page of a project's items and the total matching the filters; ``review``: only
    items that need review (evidence that cannot be used as gold, see
    ``assay.corpus.anchoring``)."""
    key = sort.lstrip("-")
    if key not in SORTS:
        raise InvalidInput(f"unknown sort {sort!r}; choose one of: {', '.join(SORTS)}")
    where = [items.c.project_id == project.id]
    if status:
        where.append(items.c.status == status)
    if query_type:
        where.append(items.c.query_type == query_type)
    if author:
        where.append(items.c.author == author)
    if kind:
        where.append(items.c.kind == kind)
    if text.strip():
        where.append(items.c.search_text.contains(text.strip().casefold(), autoescape=True))
    if review:
        where.append(needing_review())
    column = SORTS[key]
    # the id breaks ties in the same direction, so one index (project_id, column, id) serves
    # the whole ORDER BY and deep pages do not sort the table (see benchmarks/workbench.py)
    descending = sort.startswith("-")
    order = [c.desc() if descending else c.asc() for c in (column, items.c.id)]
    with ws.engine.connect() as conn:
        total = conn.scalar(sa.select(sa.func.count()).select_from(items).where(*where)) or 0
        rows = conn.execute(
            sa.select(
                items.c.id,
                items.c.kind,
                items.c.status,
                items.c.origin,
                items.c.query,
                items.c.query_type,
                items.c.turn_count,
                items.c.evidence_count,
                items.c.author,
                items.c.version,
                items.c.updated_at,
                needs_review().label("needs_review"),
            )
            .where(*where)
            .order_by(*order)
            .offset(offset)
            .limit(limit)
        ).all()
    return int(total), [_summary(r) for r in rows]


def items_citing(ws: Workspace, doc_id: str) -> list[ItemSummary]:
    """Items whose evidence points at a document (a document delete is refused while any do)."""
    with ws.engine.connect() as conn:
        ids = conn.scalars(
            sa.select(turns.c.item_id)
            .join(evidence, evidence.c.turn_id == turns.c.id)
            .where(evidence.c.doc_id == doc_id)
            .distinct()
        ).all()
        rows = conn.execute(
            sa.select(items, needs_review().label("needs_review")).where(items.c.id.in_(ids))
        ).all()
    return [_summary(r) for r in rows]


def item_events(ws: Workspace, project: Project, item_id: str) -> list[dict[str, Any]]:
    with ws.engine.connect() as conn:
        rows = conn.execute(
            sa.select(events)
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


def submit_item(
    ws: Workspace, project: Project, item_id: str, base_version: int, *, actor: str | None = None
) -> Item:
    """Mark an item as submitted for review, if it passes the completeness rules."""
    item = get_item(ws, project, item_id)
    problems = errors(check_item(item, project))
    if problems:
        listed = "; ".join(p.message for p in problems)
        raise InvalidInput(f"item {item_id} cannot be submitted yet: {listed}")
    return set_status(ws, project, item_id, "submitted", base_version, actor=actor)
