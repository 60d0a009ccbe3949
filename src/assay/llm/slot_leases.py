"""Endpoint slots leased in the database, so a limit holds over several worker processes.

A request to an endpoint holds one row of ``endpoint_slots``: the endpoint, a slot number
below the endpoint's limit (the primary key makes each number one holder's), its own token
and an expiry. Taking a slot reads the endpoint's live leases, then writes a free number in
one statement that inserts it or takes over its expired row (an upsert whose update only
applies to an expired lease); a number another process took first returns nothing and the
next is tried. Both statements run outside a transaction (autocommit), so a lease costs
three round trips to the database in all, giving back included (the gate,
:mod:`assay.llm.gate`, keeps a lease for the next request of its process for a few seconds,
and polls while every slot is taken). Giving back deletes the row by its token. A killed
process cannot give back: its leases expire after ``hold_s`` and the slots are free again.
Expiry is by wall clock, so the machines of a team keep their clocks in step (NTP).

Used when the workspace is on PostgreSQL (several worker machines); on SQLite one process
runs the jobs and the in-process gate is enough.
"""

from __future__ import annotations

import hashlib
import os
import random
import socket
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from assay.store.db import utcnow
from assay.store.llm_schema import endpoint_slots


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
    ) -> None:
        self.engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}"

    def try_take(self, key: str, limit: int, hold_s: float) -> Lease | None:
        """A slot of ``key`` below ``limit`` for ``hold_s`` seconds, or None when every
        slot is live."""
        endpoint = stored_endpoint(key)
        now = utcnow()
        with self.engine.connect() as conn:
            live = set(
                conn.scalars(
                    sa.select(endpoint_slots.c.slot).where(
                        endpoint_slots.c.endpoint == endpoint, endpoint_slots.c.expires_at >= now
                    )
                )
            )
            free = [n for n in range(limit) if n not in live]
            random.shuffle(free)
            token = str(uuid.uuid4())
            for slot in free[:3]:  # a few tries before reading again
                if conn.scalar(self._claim(endpoint, slot, token, now, hold_s)) is not None:
                    return Lease(endpoint, slot, token)
        return None

    def _claim(
        self, endpoint: str, slot: int, token: str, now: datetime, hold_s: float
    ) -> sa.Executable:
        """Insert the lease, or take over the slot's row when its lease has expired; returns
        the slot, or no row when a live lease holds it (another process was quicker)."""
        insert = postgresql.insert if self.engine.dialect.name == "postgresql" else sqlite.insert
        values = {
            "endpoint": endpoint,
            "slot": slot,
            "token": token,
            "holder": self.holder[:300],
            "expires_at": now + timedelta(seconds=hold_s),
        }
        statement = insert(endpoint_slots).values(**values)
        return statement.on_conflict_do_update(
            index_elements=[endpoint_slots.c.endpoint, endpoint_slots.c.slot],
            set_={k: statement.excluded[k] for k in ("token", "holder", "expires_at")},
            where=endpoint_slots.c.expires_at < now,
        ).returning(endpoint_slots.c.slot)

    def give_back(self, lease: Lease) -> None:
        with self.engine.connect() as conn:
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
