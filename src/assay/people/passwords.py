"""Password hashing with Argon2 (argon2-cffi, the ``server`` extra) and the password rules.

argon2-cffi is imported when a password is hashed or checked, so the rest of Assay (and
personal mode, which has no passwords) works without it.

Equal work for every sign-in: a check against no stored hash (an unknown user name, an
account that cannot sign in, a locked one) verifies the password against a throwaway hash
made once per process with the same Argon2 parameters, so every path runs the hasher's
``verify`` exactly once and takes as long as a real check.
"""

from __future__ import annotations

import functools
import secrets
from typing import Any

from assay.errors import BackendUnavailable, InvalidInput, install_extra

MIN_LENGTH = 10
MAX_LENGTH = 1024
"""Longer passwords are refused: hashing megabytes on request would be a cheap attack."""

UNUSABLE = "!"
"""Stands for "no password" where a hash is needed for equal timing (unknown user)."""


def _hasher() -> Any:
    try:
        from argon2 import PasswordHasher
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise BackendUnavailable(
            f"passwords need argon2-cffi from the server extra: {install_extra('server')}"
        ) from exc
    return PasswordHasher()


def check_password(password: str, username: str) -> str:
    """The password when it may be used; else an error that says why."""
    if len(password) < MIN_LENGTH:
        raise InvalidInput(f"the password is shorter than {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise InvalidInput(f"the password is longer than {MAX_LENGTH} characters")
    if password.strip().casefold() == username.casefold():
        raise InvalidInput("the password must not be the user name")
    return password


def hash_password(password: str) -> str:
    return str(_hasher().hash(password))


def verify_password(stored: str | None, password: str, hasher: Any = None) -> bool:
    """Whether ``password`` matches ``stored``. With no stored hash (an account that cannot
    sign in, or an unknown user) the password is verified against :func:`dummy_hash`, so the
    answer costs one ``verify`` as for a real account and does not tell which user names
    exist. ``hasher``: an argon2 ``PasswordHasher`` (default: Assay's)."""
    from argon2.exceptions import InvalidHashError, VerificationError

    hasher = hasher if hasher is not None else _hasher()
    usable = bool(stored) and stored != UNUSABLE and len(password) <= MAX_LENGTH
    try:
        matches = bool(
            hasher.verify(stored if usable else dummy_hash(hasher), password[:MAX_LENGTH])
        )
    except (VerificationError, InvalidHashError):
        return False
    return matches and usable


def dummy_hash(hasher: Any) -> str:
    """A hash of a random secret nobody knows, with ``hasher``'s Argon2 parameters."""
    return _dummy_for(
        hasher.time_cost,
        hasher.memory_cost,
        hasher.parallelism,
        hasher.hash_len,
        hasher.salt_len,
        hasher.type,
    )


@functools.cache
def _dummy_for(
    time_cost: int, memory_cost: int, parallelism: int, hash_len: int, salt_len: int, kind: Any
) -> str:
    """Made once per process and parameter set (about one hash's time, at the first use)."""
    from argon2 import PasswordHasher

    made = PasswordHasher(time_cost, memory_cost, parallelism, hash_len, salt_len, type=kind)
    return str(made.hash(secrets.token_urlsafe(32)))


def needs_rehash(stored: str) -> bool:
    """True when ``stored`` was made with weaker settings than argon2-cffi's current ones."""
    return bool(_hasher().check_needs_rehash(stored))
