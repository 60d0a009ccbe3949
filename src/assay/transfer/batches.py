"""Imports in short batches behind the project's import lock.

A 20,000-item import in one transaction held SQLite's only write lock for most of a minute,
so every autosave in the workspace waited and failed. Here an import commits every
``BatchPolicy.seconds`` (or ``records``) and between batches holds the project lock of
:mod:`assay.store.import_lock`: edits to that project are refused, every row written is in the
import journal, and a failure undoes all batches so the import still lands whole or not at all.

On SQLite the import also lets other writers in (:func:`pause_after`): an edit asks for its
turn before it waits for the lock, and the import commits and pauses at its next record;
while others are writing it pauses after every batch. Alone it does not pause, so it runs
as fast as one long transaction did, except for a short pause every few seconds for writers
that do not ask.

The stage functions (ingest, chunkings, items) take the connection they write with
(``conn=``); the importer passes :attr:`Batches.current`, so they write into the current batch,
and blobs are cleaned up only after the import has committed.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from assay.errors import AssayError
from assay.store.bulk import insert_dicts
from assay.store.import_lock import (
    HELD_KEY,
    TOKEN_KEY,
    acquire,
    forget_journal,
    heartbeat,
    last_asked,
    release,
    turns_file,
    undo_import,
)
from assay.store.schema import import_journal
from assay.store.workspace import Workspace


@dataclass(frozen=True, slots=True)
class BatchPolicy:
    seconds: float = 0.075
    """SQLite, while another writer is active: commit once a batch has held the write lock
    this long."""
    quiet_seconds: float = 2.0
    """Otherwise commit after this long: each commit writes the pages of every index it
    touched again, so short batches write the same pages many times over."""
    records: int = 5000
    """… or once it holds this many records."""
    pause: float = 0.025
    """SQLite: pause this long after a commit so a writer waiting for the lock gets it (its
    busy handler polls every 1–25 ms in its first 128 ms); 0 turns every pause off."""
    linger: float = 2.0
    """SQLite: after another writer asked or wrote, pause after every batch for this long."""
    every: float = 4.0
    """SQLite: pause ``long_pause`` at least this often, for writers that do not ask."""
    long_pause: float = 0.11
    """Longer than the 100 ms a writer's busy handler sleeps once it has waited a while."""


def pause_after(
    policy: BatchPolicy,
    *,
    elapsed: float,
    records: int,
    since_pause: float,
    asked: bool,
    others_active: bool,
) -> float | None:
    """After a record of a SQLite import: ``None`` to go on with the batch, else commit it and
    pause that many seconds (0: commit and go on).

    ``elapsed`` and ``records``: the open batch so far; ``since_pause``: seconds since the last
    pause ended; ``asked``: a writer asked for its turn since then; ``others_active``: another
    writer asked or wrote in the last ``policy.linger`` seconds. An asking writer gets in at
    once, but the import keeps at least half the time (``since_pause >= pause``).
    """
    limit = policy.seconds if others_active else policy.quiet_seconds
    if policy.pause <= 0:
        return 0.0 if elapsed >= limit or records >= policy.records else None
    if asked and since_pause >= policy.pause:
        return policy.pause
    if since_pause >= policy.every:
        return policy.long_pause
    if elapsed >= limit or records >= policy.records:
        return policy.pause if others_active else 0.0
    return None


class Batches:
    """The batch transaction of one import: open lazily, commit by policy, note written rows."""

    def __init__(self, conn: sa.Connection, token: str, policy: BatchPolicy) -> None:
        self.conn = conn
        self.token = token
        self.policy = policy
        self.sqlite = conn.dialect.name == "sqlite"
        self.trans: sa.RootTransaction | None = None
        self.started = 0.0
        self.records = 0
        self.notes: list[dict[str, Any]] = []
        self.before_commit: list[Callable[[], None]] = []
        """Writes to make before each commit (an import writes its items a group at a time)."""
        self.commits = 0
        self.pauses = 0
        # SQLite: when the last pause ended, when others last asked or wrote
        self.turns = turns_file(conn)
        self.paused_at = time.perf_counter()
        self.paused_at_ns = time.time_ns()
        self.asked_seen = last_asked(self.turns)
        self.active_until = 0.0
        self.data_version: int | None = None

    @property
    def current(self) -> sa.Connection:
        """The batch connection with its transaction open: what an import passes as ``conn=``
        to the stage functions (a batch commits between records, and the next write opens
        the next one)."""
        self.open()
        return self.conn

    @contextmanager
    def record(self, lenient: bool, skipped: Callable[[str], None]) -> Iterator[None]:
        """One record of the import. Strict: any error ends the import. Lenient: the record
        runs in a savepoint, and on an Assay error it is undone and ``skipped(message)`` told.
        Either way the batch commits when it has run long enough."""
        self.open()
        if not lenient:
            yield
            self.tick()
            return
        savepoint = self.conn.begin_nested()
        try:
            yield
        except AssayError as exc:
            savepoint.rollback()
            skipped(str(exc))
        else:
            savepoint.commit()
        self.tick()

    def open(self) -> None:
        if self.trans is not None:
            return
        self.trans = self.conn.begin()
        if self.sqlite:
            # take the write lock now: a deferred transaction that reads first can fail later
            self.conn.exec_driver_sql("BEGIN IMMEDIATE")
            version = self.conn.exec_driver_sql("PRAGMA data_version").scalar()
            if self.data_version is not None and version != self.data_version:
                self.active_until = time.perf_counter() + self.policy.linger  # someone wrote
            self.data_version = version
        self.started = time.perf_counter()
        self.records = 0

    def note(self, kind: str, ref: str, before: str | None = None) -> None:
        """Remember a row this import wrote (written to the journal with the batch)."""
        self.notes.append({"token": self.token, "kind": kind, "ref": ref, "before": before})

    def flush(self) -> None:
        """Write the noted rows to the journal (in the open batch)."""
        if self.notes:
            self.open()
            insert_dicts(self.conn, import_journal, self.notes)  # one per item: store.bulk
            self.notes = []

    def lock(self, project_id: int) -> None:
        self.open()
        acquire(self.conn, project_id, self.token)

    def tick(self, records: int = 1) -> None:
        """One record is done: commit when the batch has run long enough or, on SQLite, when
        another writer waits (see :func:`pause_after`)."""
        if self.trans is None:
            return  # nothing written since the last commit
        self.records += records
        now = time.perf_counter()
        if not self.sqlite:
            elapsed = now - self.started  # no writer waits for an import on PostgreSQL
            if elapsed >= self.policy.quiet_seconds or self.records >= self.policy.records:
                self.commit()
            return
        asked_at = last_asked(self.turns)
        if asked_at > self.asked_seen:
            self.asked_seen = asked_at
            self.active_until = now + self.policy.linger
        pause = pause_after(
            self.policy,
            elapsed=now - self.started,
            records=self.records,
            since_pause=now - self.paused_at,
            asked=asked_at > self.paused_at_ns,
            others_active=now < self.active_until,
        )
        if pause is not None:
            self.commit(pause=pause)

    def idle(self) -> None:
        """The import waits for its next record: as :meth:`tick`, without one."""
        self.tick(0)

    def commit(self, *, final: bool = False, pause: float = 0.0) -> None:
        if self.trans is None:
            if not final:
                return
            self.open()
        assert self.trans is not None
        for write in self.before_commit:
            write()
        self.flush()
        if final:
            release(self.conn, self.token, keep_journal=True)
        else:
            heartbeat(self.conn, self.token)
        self.trans.commit()
        self.trans = None
        self.commits += 1
        if pause > 0 and not final:
            time.sleep(pause)
            self.pauses += 1
            self.paused_at, self.paused_at_ns = time.perf_counter(), time.time_ns()

    def rollback(self) -> None:
        if self.trans is not None:
            self.trans.rollback()
            self.trans = None
        self.notes = []


SQLITE_CACHE_KIB = 64 * 1024
"""SQLite page cache of an import's connection (the default is 2 MiB): the pages of the
indexes an import adds to stay in memory instead of being read back before every change."""
SQLITE_CHECKPOINT_PAGES = 16 * 1024
"""Pages the write-ahead log may hold during an import before SQLite copies them into the
database (the default is 1000): each copy syncs the disk, and a page changed by many batches
is copied once instead of once per 4 MB."""


@contextmanager
def batched(ws: Workspace, policy: BatchPolicy) -> Iterator[Batches]:
    """The batches of one import: stage functions write into them through ``conn=`` (see
    :attr:`Batches.current`); on any error every batch is undone."""
    token = str(uuid.uuid4())
    with ws.engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        raw: Any = conn.connection.driver_connection if sqlite else None
        previous = raw.isolation_level if sqlite else None
        if sqlite:
            # pysqlite's own transaction handling breaks SAVEPOINT; drive it explicitly.
            raw.isolation_level = None
            settings = _sqlite_settings(
                raw, cache_size=-SQLITE_CACHE_KIB, wal_autocheckpoint=SQLITE_CHECKPOINT_PAGES
            )
        conn.info[TOKEN_KEY] = token
        batches = Batches(conn, token, policy)
        try:
            yield batches
            batches.commit(final=True)
            forget_journal(ws.engine, token)
        except BaseException:
            batches.rollback()
            with ws.engine.begin() as undo:
                undo_import(undo, token)
            raise
        finally:
            conn.info.pop(TOKEN_KEY, None)
            conn.info.pop(HELD_KEY, None)
            if sqlite:
                _sqlite_settings(raw, **settings)
                raw.isolation_level = previous


def _sqlite_settings(raw: Any, **values: int) -> dict[str, int]:
    """Set pragmas of the ``sqlite3`` connection ``raw``; returns what they were, to set them
    back (the connection goes back to the pool after the import)."""
    before: dict[str, int] = {}
    for name, value in values.items():
        before[name] = raw.execute(f"PRAGMA {name}").fetchone()[0]
        raw.execute(f"PRAGMA {name} = {int(value)}")
    return before
