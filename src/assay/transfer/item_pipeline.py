"""A second process that prepares an import's items while the import's own process writes.

Preparing an item (reading its record, checking it, locating its passages, building and
converting its rows: :mod:`assay.transfer.prepared`) takes about two thirds of a bulk
import; writing the rows the rest. With two cores the two run at once: the import starts a
fresh Python process (:data:`BOOT`; nothing of the import's process crosses over, no database
connection, no thread) that opens the file again (:class:`assay.formats.ItemSource`) and says
when it is ready; the import prepares items itself until then, and the process skips those
and sends the rest, prepared, a group at a time through a pipe, from a thread that keeps up
to :data:`AHEAD` groups waiting; it waits when they are full, so memory stays bounded however
large the file. Whenever the import has nothing to write it says so, and the next group goes
to it unprepared (it prepares that one itself): each side prepares as much as its speed
allows (:data:`SHARE`). The process reads the database with a connection of its own, writes
nothing, and asks the import for the accounts of author names it meets (only the import
writes). A problem is raised in the import as it would have been there (a bad record names
its row and field). The process ends with the import, and by itself when the import's
process dies (its pipes close).
"""

from __future__ import annotations

import fcntl
import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from dataclasses import replace as with_fields
from itertools import islice
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any

from assay.errors import AssayError
from assay.formats import Issue, ItemSource
from assay.records import Item, Project
from assay.store.db import create_engine
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.transfer.import_actors import ImportAuthors, author_names
from assay.transfer.prepared import (
    ITEM_GROUP,
    DocumentLookup,
    ItemPreparer,
    PlacedDocuments,
    PreparedGroup,
    RowFormats,
)

log = logging.getLogger(__name__)

START_BYTES = 512 * 1024
"""Files with fewer bytes of items are prepared in the import's process alone (a few hundred
items with passages: done before a second process would be ready)."""
AHEAD = 32
"""Prepared groups the second process keeps ready while the import is busy (a commit that
copies SQLite's log into the database takes a third of a second): with the pipe, what bounds
the memory in between (about 20 MB)."""
SHARE = True
"""Whether the import prepares a group itself whenever it waits for one (see
:meth:`ItemPipeline.run`); tests turn it off to see the second process prepare everything."""
PIPE_BYTES = 1 << 20
"""The pipe the prepared items come through holds this much (Linux; the default is 64 KiB):
a group of items, several hundred KB, then goes in one write instead of a dozen, each of
which made the sending thread wait for the interpreter lock the preparing thread holds (an
import of 100,000 items waited 4.4 s that way, 1 s with this)."""
WAIT_S = 0.05
"""How often the import looks up from waiting for items (it lets waiting writers in)."""
STOP_S = 5.0

Message = tuple[str, Any]
"""From the second process: ``("ready", None)``, ``("names", {name})`` (an answer is
awaited), ``("items", PreparedGroup)``, ``("records", [Item])`` (a group the import asked to
prepare itself), ``("end", [Issue])`` or ``("error", exception)``. From the import, after the
setup: ``("names", {name: account})`` (the answer) or ``("idle", None)`` (the import waits:
send the next group unprepared)."""


@dataclass(frozen=True)
class Setup:
    """What the second process needs to prepare items as the import would."""

    url: str
    settings: Settings
    project: Project
    lenient: bool
    status: str | None
    """Every item's status, when the import gives one."""
    authors: ImportAuthors
    placed: PlacedDocuments
    replaced: int | None
    skip: int
    """Items the import took before the hand-over."""
    shared: bool = True
    """Whether the import says when it is idle (:data:`SHARE`)."""


BOOT = """
import sys
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
incoming = Connection(int(sys.argv[1]), writable=False)
outgoing = Connection(int(sys.argv[2]), readable=False)
sys.path[:] = incoming.recv()
from assay.transfer.item_pipeline import serve
serve(incoming, outgoing)
"""
"""The second process's program: a fresh interpreter, so nothing of the import's process
crosses over (no open connection, no thread, not its main module, which ``multiprocessing``'s
spawn would run again), with the import's ``sys.path``."""


class ItemPipeline:
    """The import's side of the second process (see the module)."""

    def __init__(self, source: ItemSource) -> None:
        to_child, from_child = os.pipe(), os.pipe()
        _widen(from_child[1])
        theirs = (to_child[0], from_child[1])
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", BOOT, *map(str, theirs)],
                pass_fds=theirs,
                stdin=subprocess.DEVNULL,
            )
        except BaseException:
            for fd in (*to_child, *from_child):
                os.close(fd)
            raise
        for fd in theirs:
            os.close(fd)
        self.incoming = Connection(from_child[0], writable=False)
        self.outgoing = Connection(to_child[1], readable=False)
        self.state = "starting"
        self.unprepared = 0
        """Groups the process sent unprepared, because the import was idle."""
        try:
            self.outgoing.send(sys.path)
            self.outgoing.send(source)
        except BaseException:
            self.close()
            raise

    @classmethod
    def start(cls, source: ItemSource | None) -> ItemPipeline | None:
        """A pipeline for a file large enough to be worth a second process; None for a small
        one, or when no process can be started here (the import prepares items itself)."""
        if source is None or source.size < START_BYTES:
            return None
        try:
            return cls(source)
        except Exception:
            log.warning("items are prepared in this process: no second one", exc_info=True)
            return None

    def ready(self) -> bool:
        """Whether the process is ready to take over (never waits). One that failed to start
        never is: the import goes on by itself."""
        if self.state == "starting" and self.incoming.poll(0):
            try:
                kind, value = self.incoming.recv()
            except EOFError:
                kind, value = "error", f"it stopped (exit code {self.process.poll()})"
            self.state = "ready" if kind == "ready" else "failed"
            if kind != "ready":
                log.warning("items are prepared in this process: %s", value)
        return self.state == "ready"

    def run(self, setup: Setup, idle: Callable[[], None]) -> Iterator[Message]:
        """Hand over, then the process's messages until its ``end``; its error is raised
        here. ``idle`` is called whenever no message came for :data:`WAIT_S`. With
        ``setup.shared``, whenever nothing waits to be read the process is told the import
        is idle (once until it answers with a group of records): the first group after the
        hand-over always comes unprepared, while the process prepares the second."""
        self.outgoing.send(setup)
        if setup.shared:
            self.outgoing.send(("idle", None))  # nothing can wait to be read yet
        self.state = "running"
        asked = True
        while True:
            if setup.shared and not asked and not self.incoming.poll(0):
                self.outgoing.send(("idle", None))
                asked = True
            while not self.incoming.poll(WAIT_S):
                idle()
            try:
                kind, value = self.incoming.recv()
            except EOFError:
                self.state = "failed"
                code = self.process.wait()
                raise RuntimeError(
                    f"the process preparing the items stopped (exit code {code})"
                ) from None
            if kind == "error":
                self.state = "failed"
                raise value
            if kind == "items":
                value = PreparedGroup._make(value)
            elif kind == "records":
                asked = False
                self.unprepared += 1
            yield kind, value
            if kind == "end":
                self.state = "ended"
                return

    def reply(self, value: Any) -> None:
        """The answer to a ``names`` message."""
        self.outgoing.send(("names", value))

    def close(self) -> None:
        """Stop the process (at once unless it has ended or waits for its setup)."""
        if self.state == "ready":
            with suppress(OSError):  # it waits for its setup: it ends by itself
                self.outgoing.send(None)
        if self.state not in ("ready", "ended"):
            self.process.terminate()
        try:
            self.process.wait(STOP_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.incoming.close()
        self.outgoing.close()


@contextmanager
def second_process(source: ItemSource | None) -> Iterator[ItemPipeline | None]:
    """:meth:`ItemPipeline.start` for one import, stopped when the import ends."""
    pipeline = ItemPipeline.start(source)
    try:
        yield pipeline
    finally:
        if pipeline is not None:
            pipeline.close()


# ---------------------------------------------------------------- the second process


def serve(incoming: Connection, outgoing: Connection) -> None:
    """The second process (:data:`BOOT`): ready once its modules are loaded and the file is
    open, then prepare from where the import stopped. It ends when the import closes its end
    of either pipe."""
    sender = _Sender(outgoing)
    try:
        source: ItemSource = incoming.recv()
        issues: list[Issue] = []
        stream = source.items(issues)
        sender.send(("ready", None))
        setup = incoming.recv()
        if setup is not None:
            _prepare(setup, stream, issues, incoming, sender)
    except (EOFError, BrokenPipeError):
        return  # the import has ended
    except BaseException as exc:  # raised in the import (a bad record names row and field)
        if not isinstance(exc, AssayError):
            log.exception("preparing the items failed")
        with suppress(OSError):
            sender.send(("error", _portable(exc)))
    finally:
        sender.close()


class _Sender:
    """Sends the second process's messages in order from a thread of its own, up to
    :data:`AHEAD` of them waiting: preparing goes on while the import does not read (it
    commits). A pipe holds 64 KiB, a group of prepared items several hundred."""

    def __init__(self, outgoing: Connection) -> None:
        self.outgoing = outgoing
        self.waiting: queue.Queue[memoryview | None] = queue.Queue(AHEAD)
        self.failed: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="assay-import-send", daemon=True)
        self.thread.start()

    def send(self, message: Message) -> None:
        if self.failed is not None:
            raise self.failed
        self.waiting.put(ForkingPickler.dumps(message))

    def close(self) -> None:
        """Send what waits (unless the import has gone), then stop the thread."""
        self.waiting.put(None)
        self.thread.join()

    def _run(self) -> None:
        while (blob := self.waiting.get()) is not None:
            if self.failed is None:  # after a failure only empty the queue (never blocks)
                try:
                    self.outgoing.send_bytes(blob)
                except BaseException as exc:
                    self.failed = exc


def _prepare(
    setup: Setup,
    stream: Iterator[Item],
    issues: list[Issue],
    incoming: Connection,
    outgoing: _Sender,
) -> None:
    engine = create_engine(setup.url, threads=1)
    try:
        with engine.connect() as conn:
            ws = Workspace.of(setup.settings, engine)
            named = setup.authors.named
            preparer = ItemPreparer(
                lambda: conn, setup.project, lenient=setup.lenient, authors=setup.authors,
                docs=DocumentLookup(setup.placed, ws, setup.project, lambda: conn),
                replaced=setup.replaced, formats=RowFormats(engine.dialect),
            )  # fmt: skip
            for _ in islice(stream, setup.skip):
                pass  # taken by the import; read again for the repeated ids they hold
            known = len(issues)
            status = setup.status
            records = (with_fields(i, status=status) for i in stream) if status else stream
            asks = _Asks(incoming, setup.shared)
            while group := list(islice(records, ITEM_GROUP)):
                if asks.idle():  # the import waits: it prepares this group itself
                    outgoing.send(("records", group))
                    continue
                names = {n for n in author_names([], group) if n.strip()} - named.keys()
                if names:
                    outgoing.send(("names", names))
                    named.update(asks.answer())
                taken = preparer.taken_ids(group)
                prepared = [preparer.prepare(record, taken) for record in group]
                conn.rollback()  # hold no snapshot while waiting (SQLite's log can be copied)
                outgoing.send(("items", tuple(PreparedGroup.of(prepared))))
            outgoing.send(("end", issues[known:]))
    finally:
        engine.dispose()


class _Asks:
    """What the import tells the second process while it prepares: that it is idle (the
    first such message comes with the setup), and the answers about author names."""

    def __init__(self, incoming: Connection, shared: bool) -> None:
        self.incoming = incoming
        self.waiting = False
        if shared:
            self.note(incoming.recv())  # the first, right after the setup

    def idle(self) -> bool:
        """Whether the import has said it is idle since the last group sent unprepared."""
        while not self.waiting and self.incoming.poll(0):
            self.note(self.incoming.recv())
        waiting, self.waiting = self.waiting, False
        return waiting

    def answer(self) -> Any:
        """The answer to the question just asked (an idle import is noted meanwhile)."""
        while True:
            message = self.incoming.recv()
            if message[0] != "idle":
                return message[1]
            self.note(message)

    def note(self, message: tuple[str, Any]) -> None:
        if message[0] != "idle":
            raise RuntimeError(f"unexpected message from the import: {message[0]!r}")
        self.waiting = True


def _widen(fd: int) -> None:
    """Give the pipe of ``fd`` :data:`PIPE_BYTES` where the system allows it."""
    with suppress(OSError):
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives the trip to the import's process, else its message in one."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"preparing the items failed: {type(exc).__name__}: {exc}")
    return exc
