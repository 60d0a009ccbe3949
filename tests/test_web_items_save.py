"""What an autosave costs the database, and that the cheaper way stores the same: the item is
read once before it is written, cited documents are read as passages (never whole), known
author names are found by index, and a PostgreSQL connection the server dropped is replaced
without the request failing. On SQLite and PostgreSQL."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from assay.corpus.anchoring import DocumentTexts, anchor_evidence
from assay.corpus.ingest import ingest_bytes
from assay.errors import InvalidInput
from assay.gold.item_rows import read_items
from assay.gold.items import get_item, item_events
from assay.people.accounts import create_account
from assay.people.actors import FEW_NAMES, account_ids
from assay.records import Document, Evidence, Project
from assay.store import db
from assay.store.import_lock import acquire
from assay.store.projects import create_project, get_project
from assay.store.schema import accounts, projects, turns
from assay.store.workspace import Workspace
from assay.web import create_app

TEXT = "Fähre 🚢 nach Föhr: 22:40 ab Pier 3. 渡船は夜に出る。\nThe night ferry leaves at 22:40.\n"
PASSWORD = "correct horse battery 9"


@pytest.fixture
def setup(any_ws: Workspace) -> tuple[Workspace, Project, Document]:
    project = create_project(any_ws, "p", "en")
    doc = ingest_bytes(any_ws, project, "ferry.txt", TEXT.encode())
    return any_ws, project, doc


@contextmanager
def statements(ws: Workspace) -> Iterator[list[str]]:
    """The SQL the block sends, one string per statement."""
    sent: list[str] = []

    def record(*args: Any) -> None:
        sent.append(" ".join(str(args[2]).split()))

    sa.event.listen(ws.engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        sa.event.remove(ws.engine, "before_cursor_execute", record)


def client_of(ws: Workspace) -> TestClient:
    client = TestClient(create_app(ws))
    client.get("/")  # the CSRF cookie
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def test_an_autosave_reads_the_item_once_and_no_document_whole(setup: Any) -> None:
    ws, project, doc = setup
    client = client_of(ws)
    stored_text = client.get(f"/api/projects/p/documents/{doc.id}").json()["text"]
    start = stored_text.index("22:40")
    evidence = [
        {"doc_id": doc.id, "start": start, "end": start + 5, "text": "22:40", "label": "relevant"},
        {"doc_id": doc.id, "text": "渡船は夜に出る", "label": "distracting"},
    ]
    item = {"turns": [{"query": "When?", "answer": "At 22:40.", "evidence": evidence}]}
    created = client.post("/api/projects/p/items", json=item).json()
    url = f"/api/projects/p/items/{created['item']['id']}"
    edited = created["input"]
    edited["turns"][0]["answer"] = "Twenty to eleven, from Föhr 🚢."
    with statements(ws) as sent:
        saved = client.put(url, json={"version": 1, "item": edited})
    assert saved.status_code == 200, saved.text
    reads_of_item = [s for s in sent if s.startswith("SELECT items.id, items.kind")]
    assert len(reads_of_item) == 2  # once before the write, once for the answer
    whole_texts = [s for s in sent if "documents.text" in s and "substr(documents.text" not in s]
    assert whole_texts == []
    assert [s.split()[0] for s in sent].count("UPDATE") == 1  # the item's row, once
    # what was stored is what the editor sent, anchored as before
    got = get_item(ws, project, created["item"]["id"])
    assert got.version == 2 and got.turns[0].answer == "Twenty to eleven, from Föhr 🚢."
    first, second = got.turns[0].evidence
    assert (first.start, first.end, first.text, first.anchor) == (start, start + 5, "22:40", "ok")
    assert stored_text[second.start : second.end] == second.text == "渡船は夜に出る"
    assert saved.json()["item"] == client.get(url).json()["item"]
    assert [e["action"] for e in item_events(ws, project, got.id)] == ["create", "save"]


def test_a_stale_autosave_writes_nothing(setup: Any) -> None:
    ws, project, _ = setup
    client = client_of(ws)
    created = client.post(
        "/api/projects/p/items", json={"turns": [{"query": "When?", "answer": "a"}]}
    ).json()
    url = f"/api/projects/p/items/{created['item']['id']}"
    mine = created["input"]
    mine["turns"][0]["answer"] = "b"
    assert client.put(url, json={"version": 1, "item": mine}).status_code == 200
    mine["turns"][0]["answer"] = "c"
    with statements(ws) as sent:
        stale = client.put(url, json={"version": 1, "item": mine})
    assert stale.status_code == 409
    assert stale.json()["current"]["version"] == 2
    assert stale.json()["current"]["turns"][0]["answer"] == "b"
    assert not [s for s in sent if s.split()[0] in ("INSERT", "UPDATE", "DELETE")]
    assert get_item(ws, project, created["item"]["id"]).turns[0].answer == "b"


def test_one_item_read_in_one_statement_is_the_batch_read(setup: Any) -> None:
    """The editor's read of one item (one statement: the item, its turns, their evidence)
    gives what the batch read of exports gives (three statements)."""
    ws, project, doc = setup
    client = client_of(ws)
    ana = create_account(ws, "ana", PASSWORD, display_name="Ana A.")
    start = TEXT.index("22:40")
    passages = [
        {"doc_id": doc.id, "start": start, "end": start + 5, "label": "relevant", "author": "ana"},
        {"doc_id": doc.id, "text": "🚢", "label": "distracting", "grade": 2},
        {"doc_id": doc.id, "text": "Föhr", "label": "relevant", "group": 1},
    ]
    turns = [
        {"query": "first?", "answer": "a", "evidence": passages[:2], "enrichments": {"k": ["v"]}},
        {"query": "second, without evidence?", "answer": "b"},
        {"query": "third?", "evidence": passages[2:], "alternatives": ["c", "d"]},
    ]
    made = client.post("/api/projects/p/items", json={"turns": turns[:1], "notes": "n"})
    ids = [made.json()["item"]["id"]]
    conversation = {"kind": "conversation", "turns": turns, "extra": {"x": 1}}
    ids.append(client.post("/api/projects/p/items", json=conversation).json()["item"]["id"])
    with ws.engine.connect() as conn:
        batch = read_items(conn, ids)
    one = [get_item(ws, project, item_id) for item_id in ids]
    assert one == batch
    assert [len(t.evidence) for t in one[-1].turns] == [2, 0, 1]
    assert one[-1].turns[0].evidence[0].author == "Ana A." and ana.id


BIG_TABLES = ("items", "turns", "evidence", "documents", "chunks", "assignments", "events")


@pytest.mark.sqlite_only("reads SQLite's query plans (EXPLAIN QUERY PLAN)")
def test_every_statement_of_a_read_and_a_save_uses_an_index(ws: Workspace) -> None:
    """SQLite's plans (``EXPLAIN QUERY PLAN``): no statement of the item JSON or the autosave
    walks a table or an index that grows with the project, such as the pool's tasks."""
    project = create_project(ws, "p", "en")
    doc = ingest_bytes(ws, project, "ferry.txt", TEXT.encode())
    client = client_of(ws)
    evidence = [{"doc_id": doc.id, "text": "22:40", "label": "relevant"}]
    item = {"turns": [{"query": "When?", "answer": "At 22:40.", "evidence": evidence}]}
    created = client.post("/api/projects/p/items", json=item).json()
    url = f"/api/projects/p/items/{created['item']['id']}"
    sent: list[tuple[str, Any]] = []

    def record(*args: Any) -> None:
        if not args[5]:  # executemany: inserts
            sent.append((args[2], args[3]))

    sa.event.listen(ws.engine, "before_cursor_execute", record)
    try:
        payload = client.get(url).json()
        saved = client.put(url, json={"version": 1, "item": payload["input"]})
    finally:
        sa.event.remove(ws.engine, "before_cursor_execute", record)
    assert saved.status_code == 200
    walks = []
    with ws.engine.connect() as conn:
        for sql, params in sent:
            if not sql.lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE")):
                continue
            plan = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, params).all()
            for line in (str(row[-1]) for row in plan):
                table = line.split()[1] if line.startswith(("SCAN", "SEARCH")) else ""
                scans = line.startswith("SCAN") and table in BIG_TABLES
                if scans or "ix_assignments_project_id_task" in line:
                    walks.append((" ".join(sql.split())[:80], line))
    assert len(sent) > 10 and walks == []


CASES = [
    ("exact span", dict(text="22:40")),
    ("empty text takes the span", dict(text="")),
    ("text differs", dict(text="23:40")),
    ("text differs, kept stale", dict(text="23:40", anchor="stale")),
    ("past the end", dict(start=len(TEXT) - 2, end=len(TEXT) + 3, text="x")),
    ("past the end, kept stale", dict(start=len(TEXT) - 2, end=len(TEXT) + 3, anchor="stale")),
    ("emoji and umlauts before it", dict(start=6, end=7, text="🚢")),
    ("kanji", dict(start=TEXT.index("渡"), end=TEXT.index("。"), text="渡船は夜に出る")),
    ("empty span", dict(start=5, end=5, text="x")),
    ("another project's document", dict(doc_id="elsewhere", text="22:40")),
]


@pytest.mark.parametrize("name, fields", CASES, ids=[c[0] for c in CASES])
def test_passages_anchor_evidence_as_whole_texts_do(setup: Any, name: str, fields: Any) -> None:
    ws, project, doc = setup
    start = TEXT.index("22:40")
    values: dict[str, Any] = {"doc_id": doc.id, "start": start, "end": start + 5}
    ev = Evidence(**{**values, "label": "relevant", **fields})

    def anchored(passages: bool) -> Any:
        with ws.engine.connect() as conn, statements(ws) as sent:
            texts = DocumentTexts(conn, project.id)
            if passages:
                texts.read_passages([(ev.doc_id, ev.start, ev.end)])
            try:
                found: Any = anchor_evidence(ev, texts, "turn 1, evidence 1")
            except InvalidInput as exc:
                found = str(exc)
        return found, len(sent)

    whole, _ = anchored(False)
    by_passage, sent = anchored(True)
    assert by_passage == whole
    if isinstance(whole, tuple) and whole[4] == "ok":
        assert sent == 1  # the passage alone: the text was not read


def test_known_author_names_are_found_as_a_read_of_all_finds_them(any_ws: Workspace) -> None:
    ana = create_account(any_ws, "ana", PASSWORD, display_name="Ana A.")
    first_bo = create_account(any_ws, "bo1", PASSWORD, display_name="Bo")
    create_account(any_ws, "bo2", PASSWORD, display_name="Bo")  # the same display name
    clash = create_account(any_ws, "cy", PASSWORD, display_name="ana")  # another's user name
    names = ["ana", "Ana A.", "Bo", "cy", "ana"]
    with any_ws.engine.begin() as conn:
        few = account_ids(conn, names)
        many = account_ids(conn, [*names, *(f"Reader {n}" for n in range(FEW_NAMES))])
        total = conn.scalar(sa.select(sa.func.count()).select_from(accounts))
    assert few == {"ana": ana.id, "Ana A.": ana.id, "Bo": first_bo.id, "cy": clash.id}
    assert {name: many[name] for name in few} == few
    with any_ws.engine.begin() as conn:
        assert account_ids(conn, names) == few
        assert conn.scalar(sa.select(sa.func.count()).select_from(accounts)) == total


@pytest.mark.postgres
def test_requests_survive_connections_the_server_dropped(
    pg_ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a ping per checkout: a pooled connection idle for a while is pinged (and
    replaced when dead); one dropped while in steady use fails its first statement, and the
    access guard tries once more on a new connection. Either way the request succeeds."""
    create_project(pg_ws, "p", "en")
    client = client_of(pg_ws)
    assert client.get("/api/projects/p/items").status_code == 200

    def drop_pooled_connections() -> int:
        admin = sa.create_engine(pg_ws.engine.url, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            dropped = conn.scalar(
                sa.text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            )
        admin.dispose()
        return int(dropped or 0)

    assert drop_pooled_connections() >= 1  # in steady use: no ping, the guard retries
    assert client.get("/api/projects/p/items").status_code == 200
    monkeypatch.setattr(db, "IDLE_PING_SECONDS", 0.0)  # now every pooled one counts as idle
    assert drop_pooled_connections() >= 1
    assert client.get("/api/projects/p/items").status_code == 200


def _turn_ids(ws: Workspace, item_id: str) -> list[int]:
    with ws.engine.connect() as conn:
        return list(
            conn.scalars(
                sa.select(turns.c.id).where(turns.c.item_id == item_id).order_by(turns.c.ordinal)
            )
        )


def test_a_save_keeps_its_turns_ids_and_asks_for_no_new_one(setup: Any) -> None:
    """The saved turns take the deleted turns' ids (only evidence refers to them); a
    conversation that grows takes new ids for its new turns only."""
    ws, _, doc = setup
    client = client_of(ws)
    evidence = [{"doc_id": doc.id, "text": "22:40", "label": "relevant"}]
    turn = {"query": "When?", "answer": "a", "evidence": evidence}
    made = client.post("/api/projects/p/items", json={"kind": "conversation", "turns": [turn]})
    item_id = made.json()["item"]["id"]
    url = f"/api/projects/p/items/{item_id}"
    first = _turn_ids(ws, item_id)
    body = made.json()["input"]
    body["turns"][0]["answer"] = "b"
    with statements(ws) as sent:
        saved = client.put(url, json={"version": 1, "item": body})
    assert saved.status_code == 200, saved.text
    assert _turn_ids(ws, item_id) == first
    assert not [s for s in sent if "nextval" in s or "max(turns.id)" in s]
    assert saved.json()["item"] == client.get(url).json()["item"]
    body["turns"].append({"query": "And back?", "answer": "c"})
    grown = client.put(url, json={"version": 2, "item": body})
    assert grown.status_code == 200, grown.text
    ids = _turn_ids(ws, item_id)
    assert ids[0] == first[0] and len(ids) == 2 and ids[1] not in first
    assert [t["answer"] for t in grown.json()["item"]["turns"]] == ["b", "c"]
    assert grown.json()["item"]["turns"][0]["evidence"][0]["text"] == "22:40"


def test_a_save_meeting_an_import_lock_is_refused_or_clears_a_stale_one(setup: Any) -> None:
    """The save's update checks the import lock itself: a live import's lock answers 423
    (a stale save too: the import answers first), a lock whose holder is gone is undone and
    the save goes through."""
    ws, project, _ = setup
    client = client_of(ws)
    made = client.post("/api/projects/p/items", json={"turns": [{"query": "When?"}]}).json()
    url = f"/api/projects/p/items/{made['item']['id']}"
    body = made["input"]
    body["turns"][0]["answer"] = "during the import"
    with ws.engine.begin() as conn:
        acquire(conn, project.id, "running-import")  # held by this (live) process
    assert client.put(url, json={"version": 1, "item": body}).status_code == 423
    assert client.put(url, json={"version": 7, "item": body}).status_code == 423
    gone = f"{socket.gethostname()}:{2**22 + 12345}"  # this host, no such process
    with ws.engine.begin() as conn:
        conn.execute(
            projects.update().where(projects.c.id == project.id).values(import_holder=gone)
        )
    saved = client.put(url, json={"version": 1, "item": body})
    assert saved.status_code == 200, saved.text
    assert saved.json()["item"]["turns"][0]["answer"] == "during the import"
    assert get_project(ws, "p").importing_since is None
