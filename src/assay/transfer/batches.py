"""Imports in short batches behind the project's import lock.

A 20,000-item import in one transaction held SQLite's only write lock for most of a minute,
so every autosave in the workspace waited and failed. Here an import commits every
``BatchPolicy.seconds`` (or ``records``), pauses briefly on SQLite so waiting writers get
their turn, and between batches holds the project lock of :mod:`assay.project_lock`: edits to
that project are refused, every row written is in the import journal, and a failure undoes
all batches so the import still lands whole or not at all.

The stage functions (ingest, chunkings, items) open their own transactions from
``ws.engine``; the importer hands them a workspace whose engine yields the one batch
connection, so they write into the current batch.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import sqlalchemy as sa

from assay.blobs import BlobStore
from assay.project_lock import (
    TOKEN_KEY,
    acquire,
    forget_journal,
    heartbeat,
    release,
    undo_import,
)
from assay.schema import import_journal
from assay.workspace import Workspace


@dataclass(frozen=True, slots=True)
class BatchPolicy:
    seconds: float = 0.075
    """Commit once a batch has held the write lock this long."""
    records: int = 1000
    """… or once it holds this many records."""
    pause: float = 0.025
    """SQLite only: sleep this long after each commit, so a writer waiting in SQLite's busy
    handler (which polls every 1–25 ms in its first 128 ms) finds the lock free; a writer
    that arrives during a batch waits at most about ``seconds + pause``."""


class _SameConnection:
    """Stands in for the engine: every ``begin()``/``connect()`` yields the batch connection,
    in the current batch (opened if none is)."""

    def __init__(self, batches: Batches, engine: sa.Engine) -> None:
        self._batches = batches
        self._engine = engine

    @contextmanager
    def begin(self) -> Iterator[sa.Connection]:
        self._batches.open()
        yield self._batches.conn

    @contextmanager
    def connect(self) -> Iterator[sa.Connection]:
        self._batches.open()
        yield self._batches.conn

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


class _KeepBlobs(BlobStore):
    """Blob store whose clean-up waits until the import has committed."""

    def delete_unused(self, used: set[str]) -> int:
        return 0


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
        self.commits = 0

    def open(self) -> None:
        if self.trans is not None:
            return
        self.trans = self.conn.begin()
        if self.sqlite:
            # take the write lock now: a deferred transaction that reads first can fail later
            self.conn.exec_driver_sql("BEGIN IMMEDIATE")
        self.started = time.perf_counter()
        self.records = 0

    def note(self, kind: str, ref: str, before: str | None = None) -> None:
        """Remember a row this import wrote (written to the journal with the batch)."""
        self.notes.append({"token": self.token, "kind": kind, "ref": ref, "before": before})

    def flush(self) -> None:
        """Write the noted rows to the journal (in the open batch)."""
        if self.notes:
            self.open()
            self.conn.execute(import_journal.insert(), self.notes)
            self.notes = []

    def lock(self, project_id: int) -> None:
        self.open()
        acquire(self.conn, project_id, self.token)

    def tick(self) -> None:
        """One record is done: commit when the batch has run long enough."""
        self.records += 1
        elapsed = time.perf_counter() - self.started
        if elapsed >= self.policy.seconds or self.records >= self.policy.records:
            self.commit()

    def commit(self, *, final: bool = False) -> None:
        if self.trans is None:
            if not final:
                return
            self.open()
        assert self.trans is not None
        self.flush()
        if final:
            release(self.conn, self.token, keep_journal=True)
        else:
            heartbeat(self.conn, self.token)
        self.trans.commit()
        self.trans = None
        self.commits += 1
        if self.sqlite and not final and self.policy.pause > 0:
            time.sleep(self.policy.pause)

    def rollback(self) -> None:
        if self.trans is not None:
            self.trans.rollback()
            self.trans = None
        self.notes = []


@contextmanager
def batched(ws: Workspace, policy: BatchPolicy) -> Iterator[tuple[Workspace, Batches]]:
    """A workspace whose writes go into ``Batches``; on any error every batch is undone."""
    token = str(uuid.uuid4())
    with ws.engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        raw: Any = conn.connection.driver_connection if sqlite else None
        previous = raw.isolation_level if sqlite else None
        if sqlite:
            # pysqlite's own transaction handling breaks SAVEPOINT; drive it explicitly.
            raw.isolation_level = None
        conn.info[TOKEN_KEY] = token
        batches = Batches(conn, token, policy)
        engine = cast(sa.Engine, _SameConnection(batches, ws.engine))
        try:
            yield dataclasses.replace(ws, engine=engine, blobs=_KeepBlobs(ws.blobs.root)), batches
            batches.commit(final=True)
            forget_journal(ws.engine, token)
        except BaseException:
            batches.rollback()
            with ws.engine.begin() as undo:
                undo_import(undo, token)
            raise
        finally:
            conn.info.pop(TOKEN_KEY, None)
            if sqlite:
                raw.isolation_level = previous
