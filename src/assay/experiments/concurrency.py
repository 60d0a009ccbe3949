"""How many units (a task through a pipeline) an experiment runs at once, and running them.

A unit mostly waits on models: the generator, the judges, a rewrite, an external RAG
service. Each endpoint says how many requests it takes at once (``max_in_flight`` of its
generator settings; the LLM clients hold every request to it). A unit calls its endpoints
one after another, so the experiment runs as many units at once as its distinct endpoints
take together: then each endpoint is kept full. The embedded local model answers one
request at a time and is not made for several threads, so an experiment that uses it runs
one unit at a time. An experiment may set its own ``concurrency``.

:class:`UnitPool` runs units on threads but takes them from their iterator only as it
finishes them (a window of twice its threads), so a run of 100,000 tasks holds a few
hundred in memory, not all of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Generic, TypeVar

from assay.errors import InvalidInput
from assay.experiments.pipelines import PipelineSpec
from assay.llm import GeneratorSettings

U = TypeVar("U")
R = TypeVar("R")

EXTERNAL_IN_FLIGHT = 16
"""Requests at once to an external RAG service (the HTTP contract has no setting for it)."""
NO_MODEL_UNITS = 1
"""Units at once when no model is called: retrieval only is CPU-bound work under one
interpreter lock, threads would not make it faster."""
MAX_UNITS = 512


def check_concurrency(value: Any) -> int | None:
    """An experiment's own ``concurrency`` (None: from its endpoints), checked."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_UNITS:
        raise InvalidInput(
            f"concurrency must be a whole number from 1 to {MAX_UNITS}, got {value!r}"
        )
    return value


def _generators(spec: PipelineSpec, mode: str) -> Iterator[GeneratorSettings]:
    if spec.kind != "search":
        return
    if mode != "retrieval" and spec.generator:
        yield spec.generator_settings()
    if mode != "generation" and spec.rewrite != "none":
        yield GeneratorSettings.from_mapping(spec.rewrite_generator or spec.generator)
    inner = spec.reranker.get("generator") if spec.reranker else None
    if mode != "generation" and isinstance(inner, dict) and inner:
        yield GeneratorSettings.from_mapping(inner)


def unit_concurrency(
    specs: Sequence[PipelineSpec],
    mode: str,
    judges: Iterable[GeneratorSettings] = (),
    own: int | None = None,
) -> int:
    """Units to run at once: ``own`` when set, else the sum of the ``max_in_flight`` of
    the distinct endpoints the experiment calls (1 with the embedded local model)."""
    if own is not None:
        return own
    endpoints: dict[str, int] = {}
    settings = [g for spec in specs for g in _generators(spec, mode)] + list(judges)
    for generator in settings:
        if generator.kind == "local":
            return 1
        if generator.kind == "openai":
            key = generator.base_url.rstrip("/")
            endpoints[key] = max(endpoints.get(key, 0), generator.max_in_flight)
    for spec in specs:
        if spec.kind == "external":
            endpoints.setdefault(spec.endpoint, EXTERNAL_IN_FLIGHT)
    if not endpoints:
        return NO_MODEL_UNITS
    return max(1, min(MAX_UNITS, sum(endpoints.values())))


class UnitPool(Generic[U, R]):
    """``threads`` workers over an iterator of units; results come back as they finish.

    ``may_start(in_flight)`` is asked before each unit is taken (a stop, a budget); once it
    says no, no unit starts until one in flight finishes (it is asked again then), and
    when none is in flight the run ends. With one thread the
    units run in the calling thread, one by one, as a plain loop would."""

    def __init__(self, threads: int, *, tick_s: float = 1.0) -> None:
        self.threads = max(1, threads)
        self.window = 2 * self.threads
        self.tick_s = tick_s
        self.in_flight = 0

    def run(
        self,
        units: Iterable[U],
        work: Callable[[U], R],
        may_start: Callable[[int], bool] = lambda _n: True,
    ) -> Iterator[tuple[U, R] | None]:
        """Yield ``(unit, result)`` as units finish, and ``None`` every ``tick_s`` seconds
        while none does (so the caller can write what it has and beat its heartbeat)."""
        source = iter(units)
        if self.threads == 1:
            for unit in source:
                if not may_start(0):
                    return
                self.in_flight = 1
                result = work(unit)
                self.in_flight = 0
                yield unit, result
            return
        yield from self._threaded(source, work, may_start)

    def _threaded(
        self, source: Iterator[U], work: Callable[[U], R], may_start: Callable[[int], bool]
    ) -> Iterator[tuple[U, R] | None]:
        pending: dict[Future[R], U] = {}
        exhausted = False
        pool = ThreadPoolExecutor(self.threads, thread_name_prefix="assay-unit")
        try:
            while True:
                while not exhausted and len(pending) < self.window:
                    if not may_start(len(pending)):
                        break  # asked again once a unit finishes; ends when none is left
                    unit = next(source, None)
                    if unit is None:
                        exhausted = True
                        break
                    pending[pool.submit(work, unit)] = unit
                    self.in_flight = min(len(pending), self.threads)
                if not pending:
                    return
                began = time.monotonic()
                done, _ = wait(list(pending), timeout=self.tick_s, return_when=FIRST_COMPLETED)
                for future in done:
                    unit = pending.pop(future)
                    self.in_flight = min(len(pending), self.threads)
                    yield unit, future.result()
                if not done or time.monotonic() - began >= self.tick_s:
                    yield None
        finally:
            pool.shutdown(wait=not pending, cancel_futures=True)
            self.in_flight = 0
