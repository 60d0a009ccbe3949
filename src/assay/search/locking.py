"""Waiting for an index folder's write lock, which another process may hold for a while."""

from __future__ import annotations

import contextlib
import fcntl
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from assay.errors import Conflict

T = TypeVar("T")


def wait_for_lock(
    take: Callable[[], T],
    busy: Callable[[Exception], bool],
    *,
    timeout: float,
    index: str,
    path: Path,
    lock: str = "lock",
) -> T:
    """Call ``take`` until it stops failing with an error ``busy`` recognises, pausing 10 ms
    and doubling up to 0.5 s; after ``timeout`` seconds raise Conflict naming the index."""
    deadline = time.monotonic() + timeout
    pause = 0.01
    while True:
        try:
            return take()
        except Exception as error:
            if not busy(error):
                raise
            if time.monotonic() >= deadline:
                raise Conflict(
                    f"The {index} index in {path} is being written by another process "
                    f"(waited {timeout:g} s for its {lock}); try again when that update has "
                    "finished."
                ) from error
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


@contextlib.contextmanager
def file_lock(
    lock_file: Path, *, timeout: float, index: str, path: Path, lock: str = "lock"
) -> Iterator[None]:
    """An exclusive ``flock`` on ``lock_file``, which excludes other processes and other
    threads of this one (each opens the file anew); waits as :func:`wait_for_lock` does."""
    with lock_file.open("a+b") as handle:
        wait_for_lock(
            lambda: fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB),
            lambda error: isinstance(error, BlockingIOError),
            timeout=timeout,
            index=index,
            path=path,
            lock=lock,
        )
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
