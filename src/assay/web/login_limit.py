"""Sign-in attempts per client address: a brake on password guessing across accounts.

The account lockout (:mod:`assay.people.login`) stops guessing one account's password; this
stops one address trying many accounts. Kept in memory per app (``app.state``): each
server process counts its own attempts.
"""

from __future__ import annotations

import time
from collections import deque

ATTEMPTS = 10
WINDOW = 60.0
"""At most ``ATTEMPTS`` sign-ins per client address in ``WINDOW`` seconds."""

MAX_ADDRESSES = 10_000
"""Addresses remembered at most; the oldest are forgotten first (bounded memory)."""


class LoginLimiter:
    def __init__(self, attempts: int = ATTEMPTS, window: float = WINDOW) -> None:
        self.attempts = attempts
        self.window = window
        self._seen: dict[str, deque[float]] = {}

    def allow(self, address: str, now: float | None = None) -> bool:
        """Count one attempt from ``address``; False when it is one too many."""
        now = time.monotonic() if now is None else now
        times = self._seen.pop(address, None) or deque()
        while times and now - times[0] >= self.window:
            times.popleft()
        allowed = len(times) < self.attempts
        if allowed:
            times.append(now)
        self._seen[address] = times  # re-inserted: the dict's order is least recently used
        while len(self._seen) > MAX_ADDRESSES:
            self._seen.pop(next(iter(self._seen)))
        return allowed
