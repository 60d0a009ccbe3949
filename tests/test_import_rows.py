"""The rows a bulk import writes, field by field, against what the item API reads back.

Imports write items, turns, evidence and history events straight through the driver
(:mod:`assay.store.bulk`) rather than SQLAlchemy's per-row parameters; every stored value must
still be what the API gives and what the import was given, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from assay.corpus.ingest import ingest_bytes
from assay.formats import Bundle
from assay.gold.items import editable_json, get_item, item_events
from assay.people.actors import AUTHOR_NAME
from assay.records import Evidence, Item, StatusChange, Turn
from assay.store.projects import create_project
from assay.store.schema import accounts, events, evidence, items, turns
from assay.store.workspace import Workspace
from assay.transfer import import_bundle

TRAINS = (
    "Trains are second class.\n\nFirst class is paid from four hours of travel.\n"
    "Night trains get a sleeper.\n"
)
HOTELS = "Hotels are refunded up to 140 euros per night, Ünïcode included: “quoted”.\n"
SENTENCES = [TRAINS[:24], TRAINS[26:73], TRAINS[74:101], HOTELS[:40], HOTELS[42:]]
EPOCH = datetime(2024, 5, 1, 9, 30, tzinfo=UTC)


def bundle_items(count: int) -> list[Item]:
    """Items of every shape an import meets: located text, offsets, unlocated text, several
    turns, labels, grades, groups, authors, notes, extra, dates and status changes."""
    made: list[Item] = []
    for n in range(count):
        doc = "trains" if n % 2 else "hotels"
        text = SENTENCES[n % 3] if doc == "trains" else SENTENCES[3 + n % 2]
        passages = [Evidence(doc_id=doc, text=text, origin="imported")]
        if n % 5 == 0:
            passages.append(Evidence(doc_id="trains", start=0, end=6, text="Trains", grade=n % 3))
        if n % 7 == 0:
            passages.append(
                Evidence(
                    doc_id="hotels", text="not in the text", label="distracting", origin="imported"
                )
            )
        if n % 11 == 0:
            passages.append(Evidence(doc_id="trains", text=SENTENCES[1], group=4, author="ada"))
        turn = Turn(
            query=f"Question {n}: how are trains paid?",
            answer=f"Answer {n}",
            alternatives=[f"alt {n}"] if n % 4 == 0 else [],
            enrichments={"topic": ["travel"]} if n % 6 == 0 else {},
            generation={"model": "m", "temperature": 0.5} if n % 8 == 0 else {},
            evidence=passages,
        )
        turns_ = [turn]
        if n % 9 == 0:
            follow = Turn(query=f"And {n} at night?", rewrite="night trains", answer="A sleeper.")
            turns_.append(follow)
        history = []
        if n % 10 == 0:
            history = [StatusChange(status="approved", actor="bea", at=EPOCH + timedelta(n))]
        made.append(
            Item(
                id=f"row-{n}",
                kind="conversation" if len(turns_) > 1 else "qa",
                status="approved" if history else "draft",
                origin="imported",
                notes=f"note {n}" if n % 3 == 0 else "",
                extra={"source": "test", "n": n, "nested": {"list": [1, 2.5, None]}},
                author="ada" if n % 2 else "",
                created_at=EPOCH + timedelta(minutes=n) if n % 4 == 1 else None,
                turns=turns_,
                status_history=history,
            )
        )
    return made


def stored(conn: sa.Connection, table: sa.Table, *where: Any) -> list[dict[str, Any]]:
    return [dict(row._mapping) for row in conn.execute(sa.select(table).where(*where))]


def test_imported_rows_are_what_the_item_api_reads(any_ws: Workspace) -> None:
    ws = any_ws
    project = create_project(ws, "rows")
    docs = {
        "trains": ingest_bytes(ws, project, "trains.txt", TRAINS.encode()),
        "hotels": ingest_bytes(ws, project, "hotels.txt", HOTELS.encode()),
    }
    given = bundle_items(200)
    for item in given:  # the items name the documents already in the project by id
        for turn in item.turns:
            for ev in turn.evidence:
                ev.doc_id = docs[ev.doc_id].id if ev.doc_id else None
    report = import_bundle(ws, project, Bundle(items=given))
    placed = {entry.ref: entry.id for entry in report.outcomes if entry.kind == "item"}
    assert len(placed) == 200
    with ws.engine.connect() as conn:
        names = dict(conn.execute(sa.select(accounts.c.id, AUTHOR_NAME)).all())
        item_rows = {r["id"]: r for r in stored(conn, items, items.c.project_id == project.id)}
        assert set(item_rows) == set(placed.values())
        for source in given:
            item_id = placed[source.id]
            api = get_item(ws, project, item_id, conn=conn)
            row = item_rows[item_id]
            check_item_row(row, api, source, names)
            turn_rows = sorted(
                stored(conn, turns, turns.c.item_id == item_id), key=lambda t: t["ordinal"]
            )
            assert len(turn_rows) == len(api.turns) == len(source.turns)
            for turn_row, turn, given_turn in zip(turn_rows, api.turns, source.turns, strict=True):
                check_turn_row(conn, turn_row, turn, given_turn, names, docs)
            history = stored(conn, events, events.c.item_id == item_id)
            check_events(history, api, source, names, item_events(ws, project, item_id, conn=conn))


def check_item_row(row: dict[str, Any], api: Item, source: Item, names: dict[int, str]) -> None:
    assert (row["kind"], row["status"], row["origin"]) == (api.kind, api.status, api.origin)
    assert (row["kind"], row["status"], row["origin"]) == (source.kind, source.status, "imported")
    assert row["notes"] == api.notes == source.notes
    assert row["extra"] == api.extra == {**source.extra, "source_id": source.id}
    assert names[row["author_id"]] == api.author == (source.author or names[row["author_id"]])
    assert row["version"] == api.version == 1
    assert row["query"] == api.turns[0].query == source.turns[0].query
    assert row["turn_count"] == len(source.turns)
    assert row["evidence_count"] == sum(len(t.evidence) for t in api.turns)
    assert row["copy_of"] is None
    texts = [part for t in source.turns for part in (t.query, t.answer)]
    assert row["search_text"] == "\n".join([*texts, source.notes]).casefold()
    assert as_utc(row["created_at"]) == as_utc(api.created_at)
    assert as_utc(row["updated_at"]) == as_utc(api.updated_at)
    if source.created_at is not None:
        assert as_utc(row["created_at"]) == source.created_at


def check_turn_row(
    conn: sa.Connection,
    row: dict[str, Any],
    turn: Turn,
    given: Turn,
    names: dict[int, str],
    docs: dict[str, Any],
) -> None:
    for field in ("query", "rewrite", "query_type", "answer", "original_answer"):
        assert row[field] == getattr(turn, field) == getattr(given, field)
    assert row["enrichments"] == turn.enrichments == given.enrichments
    assert row["alternatives"] == turn.alternatives == given.alternatives
    assert row["generation"] == turn.generation == given.generation
    assert row["retrieved"] == [] and turn.retrieved == []
    rows = sorted(
        stored(conn, evidence, evidence.c.turn_id == row["id"]), key=lambda e: e["ordinal"]
    )
    assert len(rows) == len(turn.evidence) == len(given.evidence)
    texts = {doc.id: doc.text for doc in docs.values()}
    for ev_row, ev, wanted in zip(rows, turn.evidence, given.evidence, strict=True):
        assert ev_row["doc_id"] == ev.doc_id == wanted.doc_id
        assert (ev_row["start"], ev_row["end"]) == (ev.start, ev.end)
        assert ev_row["text"] == ev.text == wanted.text
        assert (ev_row["label"], ev_row["grade"]) == (ev.label, ev.grade)
        assert (ev_row["label"], ev_row["grade"]) == (wanted.label, wanted.grade)
        assert ev_row["group_no"] == ev.group
        assert (ev_row["origin"], ev_row["anchor"]) == (ev.origin, ev.anchor)
        assert names[ev_row["author_id"]] == ev.author
        assert ev.author == (wanted.author or ev.author)
        if wanted.text == "not in the text":
            assert ev.anchor == "unlocated" and ev.start is None
        else:
            assert ev.anchor == "ok"
            assert texts[ev.doc_id][ev.start : ev.end] == ev.text
        assert ev_row["created_at"] is not None


def check_events(
    rows: list[dict[str, Any]],
    api: Item,
    source: Item,
    names: dict[int, str],
    listed: list[dict[str, Any]],
) -> None:
    actions = [row["action"] for row in sorted(rows, key=lambda r: r["id"])]
    assert actions == ["create"] + ["status"] * len(source.status_history)
    create = next(row for row in rows if row["action"] == "create")
    assert create["before"] is None
    # the event keeps the item as the import gave it to the store: passages before anchoring
    kept = ("doc_id", "text", "label", "grade", "origin", "chunk_ids")
    content = json.loads(json.dumps(editable_json(api)))
    after = create["after"]
    for data in (content, after):
        data["turns"] = [
            {**t, "evidence": [{k: e[k] for k in kept} for e in t["evidence"]]}
            for t in data["turns"]
        ]
    assert after == content
    assert set(create["after"]) == {"kind", "notes", "origin", "extra", "turns"}
    assert names[create["actor_id"]] == api.author
    for row, change in zip(
        [r for r in rows if r["action"] == "status"], source.status_history, strict=True
    ):
        assert row["before"] is None
        assert row["after"] == {"status": change.status}
        assert names[row["actor_id"]] == change.actor
        assert as_utc(row["at"]) == change.at
    assert len(listed) == len(rows)


def as_utc(value: datetime | None) -> datetime | None:
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)
