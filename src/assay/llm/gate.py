"""Per-endpoint gates: how many requests one endpoint may have in flight at once.

A served model answers many requests at once at nearly the latency of one, up to what it
was started with (llama.cpp's ``--parallel`` slots, vLLM's batch, a hosted API's rate
limit); past that it queues or answers 429. Every request to an endpoint therefore takes a
slot of its :class:`EndpointGate` for as long as it is in flight. The gate is shared by
every job and thread of the process (one :class:`Gates` per workspace object), and on
PostgreSQL it also takes a lease in the database (:mod:`assay.llm.slot_leases`) so the
limit holds over every worker process. A lease costs round trips to the database, so a gate
keeps one its request has finished with for the next request of the process (for at most
:data:`REUSE_S` after it was taken, then it goes back and every process may take the slot
again); a lease nobody here wants within :data:`SPARE_S`, or when the endpoint's last request
of the process finishes, goes back at once.

The gate adapts (additive increase, multiplicative decrease): a 429 (or 503) halves the
slots it hands out, once per round of requests, and a ``Retry-After`` holds every new
request of the endpoint back for that long; each run of successes as long as the current
allowance gives one slot back, up to the configured limit.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.llm.slot_leases import Lease, SlotLeases

SLOW_DOWN_STATUSES = frozenset({429, 503})
"""Replies that mean "too many requests": the whole endpoint slows down, not one request."""
REUSE_S = 5.0
"""Seconds one database lease may serve requests of this process before it goes back (so
the processes sharing a full endpoint take turns), at most a quarter of its life."""
SPARE_S = 0.25
"""Seconds a finished request's lease waits for the next request here before it goes back."""
MAX_POLL_S = 0.2
"""The longest wait between two tries for a lease while every slot is taken."""


@dataclass(frozen=True, slots=True)
class Ticket:
    """One request's slot: the round it started in (a 429 halves the allowance once per
    round) and its database lease, when the workspace has leases."""

    epoch: int
    lease: Lease | None = None
    taken_at: float = 0.0


class EndpointGate:
    """The slots of one endpoint (see the module); thread-safe.

    ``limit`` is the most requests in flight; ``allowed`` the current allowance (limit
    after successes, less after 429s). ``hold_s`` bounds a database lease's life, so the
    slots of a killed process come back after it.
    """

    def __init__(
        self,
        key: str,
        limit: int,
        *,
        leases: SlotLeases | None = None,
        hold_s: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.key = key
        self.limit = limit
        self.allowed = limit
        self.in_flight = 0
        self.peak = 0
        self.slowdowns = 0
        self.hold_s = hold_s
        self._leases = leases
        self._clock = clock
        self._cond = threading.Condition()
        self._epoch = 0
        self._credit = 0
        self._paused_until = 0.0
        self.reuse_s = min(REUSE_S, hold_s / 4)
        self._spare: list[tuple[Lease, float, float]] = []  # lease, taken at, finished at
        self._sweeping = False
        self._polling = False  # a thread of this process is asking the database for a slot

    def set_limit(self, limit: int) -> None:
        """A new configured limit (settings changed); the allowance follows it down."""
        with self._cond:
            full = self.allowed >= self.limit
            self.limit = limit
            self.allowed = limit if full else min(self.allowed, limit)
            self._cond.notify_all()

    @contextmanager
    def slot(self) -> Iterator[Ticket]:
        """Hold one slot for the body of the ``with`` (waits for one to come free)."""
        ticket = self._acquire()
        try:
            yield ticket
        finally:
            self._release(ticket)

    def _acquire(self) -> Ticket:
        with self._cond:
            while True:
                wait = self._paused_until - self._clock()
                if wait > 0:
                    self._cond.wait(wait)
                elif self.in_flight >= self.allowed:
                    self._cond.wait()
                else:
                    break
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            epoch = self._epoch
        if self._leases is None:
            return Ticket(epoch)
        try:
            lease, taken_at = self._lease(self._leases)
        except BaseException:
            self._release(Ticket(epoch))
            raise
        return Ticket(epoch, lease, taken_at)

    def _lease(self, leases: SlotLeases) -> tuple[Lease, float]:
        """A spare lease of this process, else a free slot in the database. One thread of the
        process asks the database at a time, polling with backoff while every slot is taken;
        the others wait for a spare lease or for their turn."""
        with self._cond:
            while not self._spare and self._polling:
                self._cond.wait()
            if self._spare:
                lease, taken_at, _ = self._spare.pop()
                return lease, taken_at
            self._polling = True
        try:
            wait = 0.005
            while True:
                taken = leases.try_take(self.key, self.limit, self.hold_s)
                if taken is not None:
                    return taken, self._clock()
                with self._cond:
                    if not self._spare:
                        self._cond.wait(wait * (0.5 + random.random()))
                    if self._spare:
                        lease, taken_at, _ = self._spare.pop()
                        return lease, taken_at
                wait = min(MAX_POLL_S, wait * 2)
        finally:
            with self._cond:
                self._polling = False
                self._cond.notify_all()

    def _release(self, ticket: Ticket) -> None:
        back: list[Lease] = []
        with self._cond:
            self.in_flight -= 1
            now = self._clock()
            if ticket.lease is not None:
                if self.in_flight > 0 and now - ticket.taken_at < self.reuse_s:
                    self._spare.append((ticket.lease, ticket.taken_at, now))
                else:
                    back.append(ticket.lease)
            if self.in_flight == 0:  # the endpoint's last request here: every lease goes back
                back.extend(lease for lease, _, _ in self._spare)
                self._spare.clear()
            sweep = bool(self._spare) and not self._sweeping
            self._sweeping = self._sweeping or sweep
            self._cond.notify_all()
        self._give_back(back)
        if sweep:
            self._sweep_later()

    def _sweep_later(self) -> None:
        timer = threading.Timer(SPARE_S, self._sweep)
        timer.daemon = True
        timer.start()

    def _sweep(self) -> None:
        """Give back the spare leases no request here took within :data:`SPARE_S`."""
        with self._cond:
            now = self._clock()
            back = [lease for lease, _, done in self._spare if now - done >= SPARE_S]
            self._spare = [s for s in self._spare if now - s[2] < SPARE_S]
            self._sweeping = bool(self._spare)
        self._give_back(back)
        if self._sweeping:
            self._sweep_later()

    def _give_back(self, leases: list[Lease]) -> None:
        if self._leases is not None:
            for lease in leases:
                self._leases.give_back(lease)

    def succeeded(self, ticket: Ticket) -> None:
        """A request went through: after as many successes as slots allowed, one more."""
        with self._cond:
            if self.allowed >= self.limit:
                return
            self._credit += 1
            if self._credit >= self.allowed:
                self.allowed += 1
                self._credit = 0
                self._cond.notify_all()

    def slow_down(self, ticket: Ticket, retry_after: float | None) -> None:
        """The endpoint said "too many": halve the allowance (once for the requests that
        were in flight together) and hold new requests back for ``retry_after`` seconds."""
        with self._cond:
            if ticket.epoch == self._epoch:
                self._epoch += 1
                self.allowed = max(1, self.allowed // 2)
                self._credit = 0
                self.slowdowns += 1
            if retry_after is not None and retry_after > 0:
                self._paused_until = max(self._paused_until, self._clock() + retry_after)
            self._cond.notify_all()

    def state(self) -> dict[str, Any]:
        """What the gate does now, for status output and tests."""
        with self._cond:
            return {
                "endpoint": self.key,
                "limit": self.limit,
                "allowed": self.allowed,
                "in_flight": self.in_flight,
                "peak": self.peak,
                "slowdowns": self.slowdowns,
                "paused_s": round(max(0.0, self._paused_until - self._clock()), 3),
            }


def retry_after_s(value: str) -> float | None:
    """Seconds a ``Retry-After`` header asks for (a number or an HTTP date), else None."""
    value = value.strip()
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return when.timestamp() - time.time()


class Gates:
    """Every endpoint's gate of one process, made on first use (see the module)."""

    def __init__(self, leases: SlotLeases | None = None) -> None:
        self.leases = leases
        self._lock = threading.Lock()
        self._gates: dict[str, EndpointGate] = {}

    def gate(self, key: str, limit: int, *, hold_s: float = 120.0) -> EndpointGate:
        """The gate of ``key``; the latest limit given for an endpoint is the one it keeps."""
        with self._lock:
            found = self._gates.get(key)
            if found is None:
                found = EndpointGate(key, limit, leases=self.leases, hold_s=hold_s)
                self._gates[key] = found
                return found
        if found.limit != limit:
            found.set_limit(limit)
        return found

    def states(self) -> list[dict[str, Any]]:
        with self._lock:
            gates = list(self._gates.values())
        return [g.state() for g in gates]
