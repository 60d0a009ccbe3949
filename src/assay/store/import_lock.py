"""The import lock: a project that an import is writing into, in batches, refuses other writes.

Imports commit in short batches so a long one never holds the database's write lock for long
(SQLite allows one writer at a time; autosaves must not wait behind a 20,000-item import).
Between batches the project carries a lock: a token, who holds it (``host:pid``), when it
started and a heartbeat that every batch refreshes. While the lock is live, writes to the
project's items and documents raise :class:`ImportRunning` (423 on the web), and every row
the import has written is listed in ``import_journal`` (a group of items in one row) so a
failed or killed import can be undone: from the user's side an import lands whole or not at
all.

**Asking for a turn** (SQLite): an edit writes the time into a file next to the database
(``assay.db-writers``, its modification time) before it waits for the write lock; a running
import sees it at its next record and lets the edit in (:mod:`assay.transfer.batches`).

**When a lock is stale** (and is then undone and cleared): its holder ran on this host and is
no longer running, or its heartbeat is older than :data:`EXPIRES`. Stale locks are cleared
when a workspace opens (every CLI command, every server start), when an import starts, and
when an edit meets one.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from assay.errors import ImportRunning
from assay.store.db import as_utc, utcnow
from assay.store.review_schema import comments
from assay.store.schema import chunkings, documents, events, import_journal, items, projects, turns

EXPIRES = timedelta(minutes=10)
"""A lock whose heartbeat is older than this is stale (a batch never takes that long)."""
TOKEN_KEY = "assay_import_token"
"""Key in a connection's ``info``: the lock token its transaction may write under."""
HELD_KEY = "assay_import_projects"
"""Key in a connection's ``info``: the ids of the projects its import has locked (its own
writes there need no lock check)."""
IN_LIMIT = 500


@dataclass(frozen=True, slots=True)
class Lock:
    project: str
    token: str
    holder: str
    started_at: datetime
    heartbeat_at: datetime

    def is_stale(self, now: datetime | None = None) -> bool:
        now = now or utcnow()
        if now - self.heartbeat_at > EXPIRES:
            return True
        return holder_gone(self.holder)

    def message(self) -> str:
        since = self.started_at.strftime("%Y-%m-%d %H:%M:%S")
        return (
            f"project {self.project!r} is locked by an import running since {since} UTC; "
            "try again when it has finished (nothing was changed)"
        )


def holder_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def holder_gone(holder: str) -> bool:
    """Whether ``host:pid`` names a process of this host that no longer runs (a process of
    another host is only known gone by its missing heartbeat)."""
    host, _, pid = holder.rpartition(":")
    return host == socket.gethostname() and pid.isdigit() and not process_running(int(pid))


def process_running(pid: int) -> bool:
    """Whether a process of this host with that id is alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _lock_of(row: Any) -> Lock | None:
    if row is None or row.import_token is None:
        return None
    return Lock(
        project=row.name,
        token=row.import_token,
        holder=row.import_holder or "",
        started_at=as_utc(row.import_started_at),
        heartbeat_at=as_utc(row.import_heartbeat_at or row.import_started_at),
    )


_LOCK_COLUMNS = (
    projects.c.name,
    projects.c.import_token,
    projects.c.import_holder,
    projects.c.import_started_at,
    projects.c.import_heartbeat_at,
)


@functools.cache
def _lock_read() -> sa.Select[Any]:
    """Read before every write: built once per process (bound parameter)."""
    return sa.select(*_LOCK_COLUMNS).where(projects.c.id == sa.bindparam("project_id"))


def current_lock(conn: sa.Connection, project_id: int) -> Lock | None:
    row = conn.execute(_lock_read(), {"project_id": project_id}).first()
    return _lock_of(row)


def check_writable(conn: sa.Connection, project_id: int) -> None:
    """Raise ImportRunning when an import other than this connection's holds the project; a
    stale lock is undone on the way. Any other writer asks for its turn first."""
    if project_id in conn.info.get(HELD_KEY, ()):
        return
    if TOKEN_KEY not in conn.info:
        ask_for_turn(conn)
    lock = current_lock(conn, project_id)
    if lock is None or lock.token == conn.info.get(TOKEN_KEY):
        return
    if lock.is_stale():
        undo_import(conn, lock.token)
        return
    raise ImportRunning(lock.message())


def lock_checked_in_write(conn: sa.Connection, project_id: int) -> bool:
    """Whether a write may check the import lock in its own statement (a condition
    :func:`unlocked`, then :func:`check_writable` only when it changed nothing) instead of
    reading the lock first: a round trip less for every writer but an import, whose own lock
    lets it write (for it the plain :func:`check_writable` is made here, and False
    returned). Asks for SQLite's turn as :func:`check_writable` does."""
    if project_id in conn.info.get(HELD_KEY, ()) or TOKEN_KEY in conn.info:
        check_writable(conn, project_id)
        return False
    ask_for_turn(conn)
    return True


def unlocked(project_id: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
    """SQL: no import holds the project ``project_id`` (see :func:`lock_checked_in_write`)."""
    held = sa.exists().where(projects.c.id == project_id, projects.c.import_token.is_not(None))
    return ~held


def acquire(conn: sa.Connection, project_id: int, token: str) -> None:
    """Lock the project for the import ``token`` (taking over a stale lock after undoing it)."""
    lock = current_lock(conn, project_id)
    if lock is not None and lock.token != token:
        if not lock.is_stale():
            raise ImportRunning(lock.message())
        undo_import(conn, lock.token)
    if conn.info.get(TOKEN_KEY) == token:
        conn.info.setdefault(HELD_KEY, set()).add(project_id)
    now = utcnow()
    conn.execute(
        projects.update()
        .where(projects.c.id == project_id)
        .values(
            import_token=token,
            import_holder=holder_id(),
            import_started_at=now,
            import_heartbeat_at=now,
        )
    )


def turns_file(conn: sa.Connection) -> str | None:
    """SQLite: the file whose modification time says when a writer last asked for its turn
    (None for PostgreSQL, where writers to other rows never wait for an import)."""
    if conn.dialect.name != "sqlite":
        return None
    database = conn.engine.url.database
    return f"{database}-writers" if database and database != ":memory:" else None


def ask_for_turn(conn: sa.Connection) -> None:
    """Tell a running import that a writer is about to wait for SQLite's write lock."""
    path = turns_file(conn)
    if path is None:
        return
    now = time.time_ns()
    try:
        os.utime(path, ns=(now, now))
    except FileNotFoundError:
        with contextlib.suppress(OSError):
            Path(path).touch()
            os.utime(path, ns=(now, now))
    except OSError:
        pass  # a read-only folder: the import still pauses now and then


def last_asked(path: str | None) -> int:
    """When a writer last asked for its turn (``time.time_ns()``), 0 when none ever did."""
    if path is None:
        return 0
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def heartbeat(conn: sa.Connection, token: str) -> None:
    conn.execute(
        projects.update()
        .where(projects.c.import_token == token)
        .values(import_heartbeat_at=utcnow())
    )


def release(conn: sa.Connection, token: str, *, keep_journal: bool = False) -> None:
    """The import is finished (or undone): clear its locks and forget its journal. A finished
    import keeps its journal for :func:`forget_journal` (deleting 20,000 rows in the last
    batch would hold the write lock for a second); without a lock the rows undo nothing."""
    conn.execute(
        projects.update()
        .where(projects.c.import_token == token)
        .values(
            import_token=None, import_holder=None, import_started_at=None, import_heartbeat_at=None
        )
    )
    if not keep_journal:
        conn.execute(import_journal.delete().where(import_journal.c.token == token))


def forget_journal(engine: sa.Engine, token: str | None = None, batch: int = 2000) -> None:
    """Delete the journal rows of a finished import (or of every token no project holds), a
    few thousand per transaction so other writers get their turn."""
    while True:
        with engine.begin() as conn:
            held = sa.select(projects.c.import_token).where(projects.c.import_token.is_not(None))
            which = (
                import_journal.c.token == token
                if token is not None
                else import_journal.c.token.not_in(held)
            )
            ids = conn.scalars(sa.select(import_journal.c.id).where(which).limit(batch)).all()
            if ids:
                conn.execute(import_journal.delete().where(import_journal.c.id.in_(ids)))
        if len(ids) < batch:
            return


def journal(
    conn: sa.Connection, token: str, kind: str, ref: str, before: str | None = None
) -> None:
    """Note a row the import wrote: ``project``, ``document``, ``chunking`` or ``item`` (ids);
    ``notes``: a document whose notes it changed (``before``: the old notes); ``rekey``: an
    item stored under a stand-in id until the project it replaces is gone (``before``: its
    own id)."""
    conn.execute(import_journal.insert().values(token=token, kind=kind, ref=ref, before=before))


def rekey_items(conn: sa.Connection, token: str) -> None:
    """Give the items of a finished ``import --replace`` their own ids back (the replaced
    project, which held them, is deleted by now): copy each row under its id, move its turns,
    history and comments over, drop the stand-in. Five statements, however many items."""
    pending = sa.select(import_journal.c.ref).where(
        import_journal.c.token == token, import_journal.c.kind == "rekey"
    )
    copy = sa.select(
        import_journal.c.before,
        *[c for c in items.c if c.name != "id"],
    ).join(import_journal, import_journal.c.ref == items.c.id)
    copy = copy.where(import_journal.c.token == token, import_journal.c.kind == "rekey")
    conn.execute(items.insert().from_select([c.name for c in items.c], copy))
    for table in (turns, events, comments):
        conn.execute(
            table.update()
            .where(table.c.item_id.in_(pending))
            .values(
                item_id=sa.select(import_journal.c.before)
                .where(
                    import_journal.c.token == token,
                    import_journal.c.kind == "rekey",
                    import_journal.c.ref == table.c.item_id,
                )
                .scalar_subquery()
            )
        )
    conn.execute(items.delete().where(items.c.id.in_(pending)))


def undo_import(conn: sa.Connection, token: str) -> None:
    """Remove what the import ``token`` wrote, restore what it changed, and release its lock."""
    rows = conn.execute(
        sa.select(import_journal.c.kind, import_journal.c.ref, import_journal.c.before)
        .where(import_journal.c.token == token)
        .order_by(import_journal.c.id)
    ).all()
    refs: dict[str, list[str]] = {}
    for row in rows:
        if row.kind == "items":  # a group of items in one row: their ids in ``before``
            refs.setdefault("item", []).extend((row.before or "").split())
        else:
            refs.setdefault(row.kind, []).append(row.ref)
    for part in _parts(refs.get("item", [])):
        conn.execute(events.delete().where(events.c.item_id.in_(part)))
        conn.execute(items.delete().where(items.c.id.in_(part)))
    for part in _parts([int(r) for r in refs.get("chunking", [])]):
        conn.execute(chunkings.delete().where(chunkings.c.id.in_(part)))
    for part in _parts(refs.get("document", [])):
        conn.execute(documents.delete().where(documents.c.id.in_(part)))
    for row in rows:
        if row.kind == "notes":
            conn.execute(
                documents.update().where(documents.c.id == row.ref).values(notes=row.before or "")
            )
    for part in _parts([int(r) for r in refs.get("project", [])]):
        conn.execute(projects.delete().where(projects.c.id.in_(part)))
    if refs.get("document") or refs.get("chunking"):
        # what search indexes hold changed (see projects.bump_corpus_version)
        conn.execute(
            projects.update()
            .where(projects.c.import_token == token)
            .values(corpus_version=projects.c.corpus_version + 1)
        )
    release(conn, token)


def _parts(values: Sequence[Any]) -> Iterable[list[Any]]:
    for start in range(0, len(values), IN_LIMIT):
        yield list(values[start : start + IN_LIMIT])


def recover_interrupted_imports(engine: sa.Engine) -> int:
    """Undo and clear every stale import lock of a database; returns how many there were."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(*_LOCK_COLUMNS).where(projects.c.import_token.is_not(None))
        ).all()
    stale = {lock.token for lock in map(_lock_of, rows) if lock is not None and lock.is_stale()}
    for token in stale:
        with engine.begin() as conn:
            undo_import(conn, token)
    if stale or not rows:
        forget_journal(engine)  # rows a finished import had no time to delete
    return len(stale)
