"""Shards: one experiment run split into ranges of tasks that any worker may take.

A run plans its shards (``experiment_shards``, migration 0026): ranges of task ordinals,
each ``todo``. A worker claims one by a compare-and-set update (``doing``, its name, a
heartbeat), runs the units of its tasks that have no good result, and writes their results
in batches; every batch first renews the heartbeat *of a shard it still holds* in the same
transaction, so a worker that lost its shard writes nothing. A shard whose heartbeat is
older than the lease (three job heartbeats), or whose process on this host is gone, is
claimed by the next worker that looks: it resumes with only the missing units, and no
task is scored twice.

Each shard row also keeps what its worker spent in the current run and how many units it
has in flight, so the live progress of a run over several workers is their sum.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from assay.experiments.budget import Spend
from assay.store.db import as_utc, utcnow
from assay.store.import_lock import holder_gone, holder_id
from assay.store.schema import experiment_shards

SHARD_TASKS = 200
"""Tasks per shard: small enough that two workers share a run of a few thousand tasks
evenly, large enough that claiming costs nothing next to the units."""
SPENT = ("units", "requests", "cached_requests", "input_tokens", "output_tokens", "cost_usd")


@dataclass(frozen=True, slots=True)
class Shard:
    number: int
    first_task: int
    end_task: int


@dataclass(frozen=True, slots=True)
class RunState:
    """The current run of an experiment as its shards tell it."""

    shards: int
    done_shards: int
    in_flight: int
    workers: int
    spent: Spend
    started_at: datetime | None


def worker_token(run: str) -> str:
    """The name a run of this process claims shards under: ``host:pid#run``."""
    return f"{holder_id()}#{run}"


def _process(worker: str | None) -> str:
    return (worker or "").partition("#")[0]


def plan_shards(
    conn: sa.Connection, experiment_id: int, task_count: int, size: int = SHARD_TASKS
) -> int:
    """Replace the experiment's shards with a fresh plan (a new run); returns how many."""
    mine = experiment_shards.c.experiment_id == experiment_id
    conn.execute(experiment_shards.delete().where(mine))
    now = utcnow()
    rows = [
        {
            "experiment_id": experiment_id,
            "shard": number,
            "first_task": first,
            "end_task": min(first + size, task_count),
            "status": "todo",
            "worker": None,
            "heartbeat_at": None,
            "in_flight": 0,
            **dict.fromkeys(SPENT, 0),
            "created_at": now,
            "updated_at": now,
        }
        for number, first in enumerate(range(0, max(task_count, 1), size))
    ]
    conn.execute(experiment_shards.insert(), rows)
    return len(rows)


def has_open_shards(conn: sa.Connection, experiment_id: int) -> bool:
    found = conn.scalar(
        sa.select(experiment_shards.c.shard)
        .where(experiment_shards.c.experiment_id == experiment_id)
        .where(experiment_shards.c.status != "done")
        .limit(1)
    )
    return found is not None


def _stale(row: Any, cutoff: datetime) -> bool:
    return (
        row.heartbeat_at is None
        or as_utc(row.heartbeat_at) < cutoff
        or holder_gone(_process(row.worker))
    )


def claim_shard(engine: sa.Engine, experiment_id: int, token: str, lease_s: float) -> Shard | None:
    """Take a shard nobody works on (``todo``, or ``doing`` with a stale heartbeat); None
    when there is none. Two workers racing for one shard: one update wins, the other
    tries the next."""
    cutoff = utcnow() - timedelta(seconds=lease_s)
    for _ in range(20):
        with engine.begin() as conn:
            rows = conn.execute(
                sa.select(experiment_shards)
                .where(experiment_shards.c.experiment_id == experiment_id)
                .where(experiment_shards.c.status != "done")
                .order_by(experiment_shards.c.shard)
            ).all()
            free = [r for r in rows if r.status == "todo" or _stale(r, cutoff)]
            if not free:
                return None
            row = free[0]
            now = utcnow()
            worker = (
                experiment_shards.c.worker.is_(None)
                if row.worker is None
                else experiment_shards.c.worker == row.worker
            )
            taken = conn.execute(
                experiment_shards.update()
                .where(
                    experiment_shards.c.experiment_id == experiment_id,
                    experiment_shards.c.shard == row.shard,
                    experiment_shards.c.status == row.status,
                    worker,
                )
                .values(status="doing", worker=token, heartbeat_at=now, in_flight=0, updated_at=now)
            ).rowcount
            if taken == 1:
                return Shard(row.shard, row.first_task, row.end_task)
    return None


def hold_shards(
    conn: sa.Connection,
    experiment_id: int,
    token: str,
    changes: dict[int, tuple[Spend, int, bool]],
) -> set[int]:
    """Renew the heartbeat of the shards this run holds, adding what each spent, setting
    its units in flight and, when finished, marking it done; returns the shards still
    held (a shard taken over by another worker is not among them)."""
    held: set[int] = set()
    now = utcnow()
    for number, (spent, in_flight, finished) in changes.items():
        column = experiment_shards.c
        values: dict[str, Any] = {name: column[name] + getattr(spent, name) for name in SPENT}
        values.update(heartbeat_at=now, in_flight=in_flight, updated_at=now)
        if finished:
            values.update(status="done", in_flight=0)
        count = conn.execute(
            experiment_shards.update()
            .where(
                column.experiment_id == experiment_id,
                column.shard == number,
                column.worker == token,
                column.status == "doing",
            )
            .values(**values)
        ).rowcount
        if count == 1:
            held.add(number)
    return held


def release_shards(conn: sa.Connection, experiment_id: int, token: str) -> None:
    """Give back the unfinished shards of a run that stops (cancel, budget, Ctrl-C): the
    next run of the experiment takes them."""
    conn.execute(
        experiment_shards.update()
        .where(
            experiment_shards.c.experiment_id == experiment_id,
            experiment_shards.c.worker == token,
            experiment_shards.c.status == "doing",
        )
        .values(status="todo", worker=None, in_flight=0, updated_at=utcnow())
    )


def run_state(conn: sa.Connection, experiment_id: int, lease_s: float) -> RunState:
    """Sums over the shards of the current run (in flight: shards with a fresh heartbeat)."""
    rows = conn.execute(
        sa.select(experiment_shards).where(experiment_shards.c.experiment_id == experiment_id)
    ).all()
    cutoff = utcnow() - timedelta(seconds=lease_s)
    spent = Spend()
    for row in rows:
        spent = spent.plus(Spend(*(row._mapping[name] for name in SPENT)))
    live = [r for r in rows if r.status == "doing" and not _stale(r, cutoff)]
    started = min((as_utc(r.created_at) for r in rows), default=None)
    return RunState(
        shards=len(rows),
        done_shards=sum(1 for r in rows if r.status == "done"),
        in_flight=sum(r.in_flight for r in live),
        workers=len({_process(r.worker) for r in live}),
        spent=spent,
        started_at=started,
    )
