"""Failed sign-ins per client address: a brake on password guessing across accounts.

The account lockout (:mod:`assay.people.login`) stops guessing one account's password; this
stops one address trying many accounts. Only failures count, so a team signing in at once
behind one address (an office, a proxy without X-Forwarded-For) is not slowed. Kept in
memory per app (``app.state``): each server process counts its own.
"""

from __future__ import annotations

import time
from collections import deque

ATTEMPTS = 10
WINDOW = 60.0
"""After ``ATTEMPTS`` failed sign-ins from one address in ``WINDOW`` seconds, it waits."""

MAX_ADDRESSES = 10_000
"""Addresses remembered at most; the oldest are forgotten first (bounded memory)."""


class LoginLimiter:
    def __init__(self, attempts: int = ATTEMPTS, window: float = WINDOW) -> None:
        self.attempts = attempts
        self.window = window
        self._seen: dict[str, deque[float]] = {}

    def allow(self, address: str, now: float | None = None) -> bool:
        """Whether ``address`` may try to sign in now."""
        times = self._recent(address, time.monotonic() if now is None else now)
        return len(times) < self.attempts

    def failed(self, address: str, now: float | None = None) -> None:
        """Count one failed sign-in from ``address``."""
        now = time.monotonic() if now is None else now
        self._recent(address, now).append(now)

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self._seen.pop(address, None) or deque()
        while times and now - times[0] >= self.window:
            times.popleft()
        self._seen[address] = times  # re-inserted: the dict's order is least recently used
        while len(self._seen) > MAX_ADDRESSES:
            self._seen.pop(next(iter(self._seen)))
        return times
