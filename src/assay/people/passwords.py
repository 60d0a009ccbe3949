"""Password hashing with Argon2 (argon2-cffi, the ``server`` extra) and the password rules.

argon2-cffi is imported when a password is hashed or checked, so the rest of Assay (and
personal mode, which has no passwords) works without it.
"""

from __future__ import annotations

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


def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches ``stored``. With no stored hash (an account that cannot
    sign in, or an unknown user) a throwaway hash is still computed, so the answer takes as
    long as for a real account and does not tell which user names exist."""
    from argon2.exceptions import InvalidHashError, VerificationError

    hasher = _hasher()
    if not stored or stored == UNUSABLE or len(password) > MAX_LENGTH:
        hasher.hash(password[:MAX_LENGTH])
        return False
    try:
        return bool(hasher.verify(stored, password))
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(stored: str) -> bool:
    """True when ``stored`` was made with weaker settings than argon2-cffi's current ones."""
    return bool(_hasher().check_needs_rehash(stored))
