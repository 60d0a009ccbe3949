"""Independent model calls side by side: a bounded window of threads, results in order.

Synthesis drafts, relevance suggestions, rewrites and pool questions each ask a model (or a
service) once per unit, and the units do not depend on each other. :func:`in_order` runs
``work`` over the units on up to ``window`` threads and hands the results back in the order
of the units, as each next one is ready, so the caller stores and reports them exactly as a
one-at-a-time loop would: the same results, the same order, at the endpoint's speed. At
most ``window`` units are started ahead of the one the caller waits for (memory stays
bounded for long lists); the endpoint's gate (:mod:`assay.llm.gate`) bounds what is
actually in flight. An exception of ``work`` is raised where its unit's result would be.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

Unit = TypeVar("Unit")
Result = TypeVar("Result")


def in_order(
    work: Callable[[Unit], Result], units: Iterable[Unit], window: int
) -> Iterator[Result]:
    """``work(unit)`` for every unit, at most ``window`` at once, yielded in unit order."""
    if window <= 1:
        for unit in units:
            yield work(unit)
        return
    pending: deque[Future[Result]] = deque()
    source = iter(units)
    with ThreadPoolExecutor(max_workers=window, thread_name_prefix="assay-fanout") as pool:
        try:
            for unit in source:
                pending.append(pool.submit(work, unit))
                if len(pending) >= window:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:  # the caller stopped early: start nothing more
                future.cancel()
