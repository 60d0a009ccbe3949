"""One process's part of an experiment run: claim shards, run their units, write in batches.

:class:`ShardWork` claims shards (:mod:`assay.experiments.shards`) one after another as its
:class:`~assay.experiments.concurrency.UnitPool` asks for units, reads their tasks a page
at a time (never all tasks of a large run), and skips units that already have a good
result. Finished units are written in batches (every :data:`BATCH` results or every second,
whichever comes first); each batch renews the heartbeat of the shards it holds, adds what
they spent, reads the stop flag and the spend of every worker of the run, which the budget
is checked against.

What threads share: the pipeline runners and the scorer (their generators and HTTP
clients are thread-safe; embedders are stateless between calls; the database is reached
through the engine's pool, a connection per use). Only the thread that iterates the pool
writes to the database.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.experiments.budget import Budget, Spend
from assay.experiments.concurrency import UnitPool
from assay.experiments.costs import Prices, prices_from_settings
from assay.experiments.pipelines import PipelineSpec
from assay.experiments.result_writes import Scored, write_results
from assay.experiments.scoring import Outcome
from assay.experiments.shards import (
    Shard,
    claim_shard,
    hold_shards,
    release_shards,
    run_state,
    worker_token,
)
from assay.experiments.tasks import Task, task_from_json
from assay.store.schema import experiment_results, experiment_tasks, experiments
from assay.store.workspace import Workspace

BATCH = 64
"""Results per write at most; a slower run writes what it has every :data:`FLUSH_S`."""
FLUSH_S = 1.0
TASK_PAGE = 64
"""Tasks read from the database at a time."""

Progress = Callable[[int, int], None]


class Answers(Protocol):
    """A pipeline as the run uses it (:class:`~assay.experiments.pipelines.PipelineRunner`
    or a pipeline that cannot run)."""

    spec: PipelineSpec

    def answer(self, task: Task) -> Outcome: ...


Score = Callable[[Task, str, Outcome], Scored]


@dataclass(frozen=True, slots=True)
class Unit:
    shard: int
    task: Task
    pipeline: Answers


@contextmanager
def running_here(ws: Workspace, experiment_id: int) -> Iterator[bool]:
    """Whether this is the first run of the experiment in this process (kept on the
    workspace, which every job of a worker shares): a second helper job taken by the same
    worker adds nothing, the first run's threads are already what the endpoints take."""
    lock, ids = ws.shared("experiment-runs", lambda: (threading.Lock(), set()))
    with lock:
        first = experiment_id not in ids
        ids.add(experiment_id)
    try:
        yield first
    finally:
        if first:
            with lock:
                ids.discard(experiment_id)


def lease_seconds(ws: Workspace) -> float:
    """A shard's heartbeat older than this is taken over (three job heartbeats)."""
    return 3 * ws.settings.job_heartbeat_seconds


class ShardWork:
    """This process's run of one experiment (``threads`` units at once)."""

    def __init__(
        self,
        ws: Workspace,
        experiment_id: int,
        pipelines: Sequence[Answers],
        score: Score,
        *,
        threads: int,
        budget: Budget,
        total: int,
        progress: Progress | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        self.ws = ws
        self.experiment_id = experiment_id
        self.pipelines = pipelines
        self.score = score
        self.pool: UnitPool[Unit, Scored] = UnitPool(threads, tick_s=FLUSH_S)
        self.budget = budget
        self.total = total
        self.progress = progress
        self.should_stop = should_stop
        self.token = worker_token(uuid.uuid4().hex[:8])
        self.lease_s = lease_seconds(ws)
        try:
            self.prices: Prices = prices_from_settings()
        except InvalidInput:  # shown with the cost totals; the run goes on without prices
            self.prices = {}
        self.stop_reason = ""
        self.run_spent = Spend()
        """Every worker's spend, as of the last write, plus what this one has not written."""
        self._batch: list[tuple[Unit, Scored]] = []
        self._unwritten: dict[int, Spend] = {}
        self._taken: dict[int, int] = {}
        self._exhausted: set[int] = set()
        self._lost: set[int] = set()
        self._finished: set[int] = set()
        self._active: dict[int, int] = {}
        self._lock = threading.Lock()
        self._written_at = time.monotonic()
        self._base = 0
        """Units with a stored result (done or failed) as of the last write."""
        self._reported = -1

    # -- the units ---------------------------------------------------------------------

    def _tasks(self, shard: Shard) -> Iterator[tuple[Task, set[str]]]:
        """The shard's tasks, a page at a time, with the pipelines that have a good result."""
        for first in range(shard.first_task, shard.end_task, TASK_PAGE):
            end = min(first + TASK_PAGE, shard.end_task)
            with self.ws.engine.connect() as conn:
                rows = conn.execute(
                    sa.select(experiment_tasks.c.task_id, experiment_tasks.c.data)
                    .where(experiment_tasks.c.experiment_id == self.experiment_id)
                    .where(experiment_tasks.c.ordinal >= first, experiment_tasks.c.ordinal < end)
                    .order_by(experiment_tasks.c.ordinal)
                ).all()
                good: dict[str, set[str]] = {}
                if rows:
                    for pipeline, task_id in conn.execute(
                        sa.select(experiment_results.c.pipeline, experiment_results.c.task_id)
                        .where(experiment_results.c.experiment_id == self.experiment_id)
                        .where(experiment_results.c.error.is_(None))
                        .where(experiment_results.c.task_id.in_([r.task_id for r in rows]))
                    ):
                        good.setdefault(task_id, set()).add(pipeline)
            for row in rows:
                yield task_from_json(row.data), good.get(row.task_id, set())

    def units(self) -> Iterator[Unit]:
        """The missing units of every shard this run can claim, shard after shard."""
        while not self.stop_reason:
            shard = claim_shard(self.ws.engine, self.experiment_id, self.token, self.lease_s)
            if shard is None:
                return
            number = shard.number
            self._taken[number] = 0
            for task, good in self._tasks(shard):
                if self._stop_asked():
                    return
                for pipeline in self.pipelines:
                    if self.stop_reason or number in self._lost:
                        break
                    if pipeline.spec.name not in good:
                        self._taken[number] += 1
                        yield Unit(number, task, pipeline)
            self._exhausted.add(number)

    def _work(self, unit: Unit) -> Scored:
        with self._lock:
            self._active[unit.shard] = self._active.get(unit.shard, 0) + 1
        try:
            return self.score(unit.task, unit.pipeline.spec.name, unit.pipeline.answer(unit.task))
        finally:
            with self._lock:
                self._active[unit.shard] -= 1

    def _may_start(self, in_flight: int) -> bool:
        """Asked before each unit: a stop, then the budget."""
        if self.stop_reason:
            return False
        if self.budget.allows(self.run_spent, in_flight):
            return True
        if in_flight == 0:
            self.stop_reason = self.budget.stop_message(self.run_spent)
        return False

    def start_from(self, stored: int) -> None:
        """Report the units already stored before any runs."""
        self._base = stored
        self._report(stored)

    def _stop_asked(self) -> bool:
        """Between tasks: the caller's stop, or the flag a cancel from any process sets."""
        if not self.stop_reason:
            with self.ws.engine.connect() as conn:
                flag = conn.scalar(
                    sa.select(experiments.c.stop_requested).where(
                        experiments.c.id == self.experiment_id
                    )
                )
            if flag or (self.should_stop is not None and self.should_stop()):
                self.stop_reason = "cancelled"
        return bool(self.stop_reason)

    # -- the run -----------------------------------------------------------------------

    def work(self) -> None:
        """Run units until no shard is left to claim (or a stop, or the budget); a shard
        this pass claimed but did not finish goes back to the others (a run that stops
        holds none it no longer works on)."""
        self._pass()
        unfinished = set(self._taken) - self._finished - self._lost
        if unfinished:
            self.release()
            for number in unfinished:
                self._taken.pop(number, None)
                self._exhausted.discard(number)

    def _pass(self) -> None:
        for item in self.pool.run(self.units(), self._work, self._may_start):
            if item is not None:
                unit, scored = item
                spent = self._unwritten.setdefault(unit.shard, Spend())
                spent.add_result(scored.stored_details, self.prices)
                self.run_spent.add_result(scored.stored_details, self.prices)
                self._batch.append((unit, scored))
                self._report(self._base + len(self._batch))
            if len(self._batch) >= BATCH or time.monotonic() - self._written_at >= FLUSH_S:
                self.write()
        self.write()

    def write(self) -> None:
        """Write the batch; renew, account and close the shards held; read the stop flag,
        the run's spend and its counts."""
        pairs, self._batch = self._batch, []
        for unit, _ in pairs:
            self._taken[unit.shard] -= 1
        with self._lock:
            active = dict(self._active)
        held_now = {n for n in self._taken if n not in self._lost and n not in self._finished}
        changes = {
            n: (
                self._unwritten.pop(n, Spend()),
                active.get(n, 0),
                n in self._exhausted and self._taken[n] == 0,
            )
            for n in held_now
        }
        with self.ws.engine.begin() as conn:
            held = hold_shards(conn, self.experiment_id, self.token, changes)
            write_results(conn, self.experiment_id, [s for u, s in pairs if u.shard in held])
            row = conn.execute(
                sa.select(
                    experiments.c.stop_requested,
                    experiments.c.done_count,
                    experiments.c.error_count,
                ).where(experiments.c.id == self.experiment_id)
            ).one()
            state = run_state(conn, self.experiment_id, self.lease_s)
        self._lost |= set(changes) - held
        self._finished |= {n for n in held if changes[n][2]}
        self._written_at = time.monotonic()
        self.run_spent = state.spent.plus(_sum(self._unwritten.values()))
        if row.stop_requested and not self.stop_reason:
            self.stop_reason = "cancelled"
        self._base = int(row.done_count) + int(row.error_count)
        self._report(self._base)

    def _report(self, done: int) -> None:
        if self.progress is not None and done != self._reported:
            self._reported = done
            self.progress(done, self.total)

    def release(self) -> None:
        """Give back the shards not finished (a stop): the next run resumes them."""
        with self.ws.engine.begin() as conn:
            release_shards(conn, self.experiment_id, self.token)


def _sum(parts: Iterable[Spend]) -> Spend:
    total = Spend()
    for part in parts:
        total = total.plus(part)
    return total
