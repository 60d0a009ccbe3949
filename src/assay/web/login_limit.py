"""Budgets for failed sign-ins, kept in memory per app (``app.state``; each server process
counts its own): a brake on password guessing that does not tell which names exist.

- **Per address** (the one :mod:`assay.web.proxies` believes): after ``ATTEMPTS`` failures in
  ``WINDOW`` seconds it waits (429). Only failures count, so a team signing in at once behind
  one address is not slowed.
- **Per name**: after ``ASSAY_LOGIN_MAX_FAILURES`` failures in a row a name that has no
  account is refused for ``ASSAY_LOGIN_LOCK_MINUTES`` with the words of a locked account
  (:func:`assay.people.login.authenticate` asks :meth:`LoginLimiter.locked_until`). Accounts
  are locked in the database (every process agrees, ``assay users reset-password`` lifts it);
  so an unknown name answers as an account does, and the lockout reveals nothing.
- **Per process**: after ``PROCESS_FAILURES`` failures in ``WINDOW`` seconds from all
  addresses together every sign-in waits (429): guessing spread over many addresses.
"""

from __future__ import annotations

import time
from collections import deque
from datetime import datetime, timedelta
from typing import Any

from assay.store.db import utcnow

ATTEMPTS = 10
WINDOW = 60.0
"""After ``ATTEMPTS`` failed sign-ins from one address in ``WINDOW`` seconds, it waits."""

PROCESS_FAILURES = 100
"""Failed sign-ins from all addresses in ``WINDOW`` seconds after which every sign-in waits."""

MAX_ADDRESSES = 10_000
"""Addresses (and names) remembered at most; the oldest are forgotten first (bounded memory)."""


class LoginLimiter:
    def __init__(
        self,
        attempts: int = ATTEMPTS,
        window: float = WINDOW,
        *,
        name_failures: int = 5,
        lock_minutes: int = 15,
        process_failures: int = PROCESS_FAILURES,
    ) -> None:
        self.attempts = attempts
        self.window = window
        self.name_failures = name_failures
        self.lock = timedelta(minutes=lock_minutes)
        self.process_failures = process_failures
        self._seen: dict[str, deque[float]] = {}
        self._process: deque[float] = deque()
        self._names: dict[str, tuple[int, datetime | None]] = {}

    def refusal(self, address: str, now: float | None = None) -> str | None:
        """Why nobody at ``address`` may try now: ``"address"`` or ``"server"``; else None."""
        now = time.monotonic() if now is None else now
        if len(self._recent(address, now)) >= self.attempts:
            return "address"
        while self._process and now - self._process[0] >= self.window:
            self._process.popleft()
        if len(self._process) >= self.process_failures:
            return "server"
        return None

    def allow(self, address: str, now: float | None = None) -> bool:
        """Whether ``address`` may try to sign in now."""
        return self.refusal(address, now) is None

    def locked_until(self, name: str, now: datetime | None = None) -> datetime | None:
        """Until when sign-ins as ``name`` are refused (after too many failures), or None."""
        _, until = self._names.get(_key(name), (0, None))
        return until if until is not None and until > (now or utcnow()) else None

    def failed(self, address: str, name: str = "", now: float | None = None) -> None:
        """Count one failed sign-in from ``address`` as ``name``."""
        now = time.monotonic() if now is None else now
        self._recent(address, now).append(now)
        self._process.append(now)
        if name:
            key = _key(name)
            count, until = self._names.pop(key, (0, None))
            count += 1
            if count >= self.name_failures:
                count, until = 0, utcnow() + self.lock
            self._names[key] = (count, until)
            _bound(self._names)

    def succeeded(self, name: str) -> None:
        """A sign-in as ``name`` worked: its failures in a row start again."""
        self._names.pop(_key(name), None)

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self._seen.pop(address, None) or deque()
        while times and now - times[0] >= self.window:
            times.popleft()
        self._seen[address] = times  # re-inserted: the dict's order is least recently used
        _bound(self._seen)
        return times


def _key(name: str) -> str:
    return name.strip().casefold()[:200]


def _bound(remembered: dict[str, Any]) -> None:
    while len(remembered) > MAX_ADDRESSES:
        remembered.pop(next(iter(remembered)))
