"""Endpoint slots leased in the database, so a limit holds over several worker processes.

A request to an endpoint holds one row of ``endpoint_slots``: the endpoint, a slot number
below the endpoint's limit (the primary key makes each number one holder's), its own token
and an expiry. Taking a slot is one short transaction: drop the endpoint's expired leases,
read the live ones, insert a free number; a number another process took first fails on
the key and the next is tried. Full means waiting (polling, backing off up to a fifth of a
second). Giving back deletes the row by its token. A killed process cannot give back: its
leases expire after ``hold_s`` and the slots are free again. Expiry is by wall clock, so
the machines of a team keep their clocks in step (NTP).

Used when the workspace is on PostgreSQL (several worker machines); on SQLite one process
runs the jobs and the in-process gate is enough.
"""

from __future__ import annotations

import hashlib
import os
import random
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import sqlalchemy as sa

from assay.store.db import utcnow
from assay.store.llm_schema import endpoint_slots

MAX_POLL_S = 0.2


@dataclass(frozen=True, slots=True)
class Lease:
    endpoint: str
    slot: int
    token: str


def stored_endpoint(key: str) -> str:
    """The endpoint as the table holds it: as given, or hashed when longer than the column."""
    if len(key) <= 500:
        return key
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


class SlotLeases:
    """Takes and gives back slot leases in ``engine``'s database (see the module)."""

    def __init__(
        self,
        engine: sa.Engine,
        *,
        holder: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.engine = engine
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}"
        self._sleep = sleep

    def take(self, key: str, limit: int, hold_s: float) -> Lease:
        """A slot of ``key`` below ``limit``; waits until one is free."""
        endpoint = stored_endpoint(key)
        wait = 0.005
        while True:
            lease = self._try(endpoint, limit, hold_s)
            if lease is not None:
                return lease
            self._sleep(wait * (0.5 + random.random()))
            wait = min(MAX_POLL_S, wait * 2)

    def _try(self, endpoint: str, limit: int, hold_s: float) -> Lease | None:
        now = utcnow()
        with self.engine.begin() as conn:
            conn.execute(
                endpoint_slots.delete().where(
                    endpoint_slots.c.endpoint == endpoint, endpoint_slots.c.expires_at < now
                )
            )
            taken = set(
                conn.scalars(
                    sa.select(endpoint_slots.c.slot).where(endpoint_slots.c.endpoint == endpoint)
                )
            )
        free = [n for n in range(limit) if n not in taken]
        if len(taken) >= limit or not free:
            return None
        random.shuffle(free)
        token = str(uuid.uuid4())
        for slot in free[:3]:  # a few tries before reading again
            try:
                with self.engine.begin() as conn:
                    conn.execute(
                        endpoint_slots.insert().values(
                            endpoint=endpoint,
                            slot=slot,
                            token=token,
                            holder=self.holder[:300],
                            expires_at=now + timedelta(seconds=hold_s),
                        )
                    )
            except sa.exc.IntegrityError:
                continue  # another process took this number a moment ago
            return Lease(endpoint, slot, token)
        return None

    def give_back(self, lease: Lease) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                endpoint_slots.delete().where(
                    endpoint_slots.c.endpoint == lease.endpoint,
                    endpoint_slots.c.slot == lease.slot,
                    endpoint_slots.c.token == lease.token,
                )
            )

    def held(self, key: str) -> int:
        """Live leases of ``key`` now, over every process."""
        with self.engine.connect() as conn:
            return int(
                conn.scalar(
                    sa.select(sa.func.count()).where(
                        endpoint_slots.c.endpoint == stored_endpoint(key),
                        endpoint_slots.c.expires_at >= utcnow(),
                    )
                )
                or 0
            )
