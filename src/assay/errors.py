"""Errors that carry a message meant for the person who caused them.

Every layer (CLI, web, Python API) shows ``str(error)`` as is, so messages name what is
wrong and where: the file, the record, the field. A message people meet in the web pages may
also carry a catalog ``key`` and its ``params``: the pages then show the catalog's text in the
reader's language (``web/i18n/*/errors.json``), while the CLI and logs keep the English text.
A test checks that the English catalog text is the raising f-string, placeholder for
placeholder.
"""

from __future__ import annotations


class AssayError(Exception):
    """Base class: anything Assay raises on purpose."""

    def __init__(self, message: str = "", *, key: str | None = None, **params: object) -> None:
        super().__init__(message)
        self.key = key
        self.params = params


class Words(str):
    """Words inside an error's parameters that a page shows in its reader's language: ``keys``
    name catalog texts, shown joined by ", " (``str()`` is the English text). A role or an
    action named in a refusal is one: the catalog key, never the internal name, reaches the
    reader."""

    keys: tuple[str, ...]

    def __new__(cls, text: str, *keys: str) -> Words:
        words = super().__new__(cls, text)
        words.keys = keys
        return words


class NotFound(AssayError):
    """A project, document, chunking or other record does not exist."""


class Conflict(AssayError):
    """The write would clash with what is stored (duplicate name, stale version, reference)."""


class ImportRunning(Conflict):
    """The project is locked by a running import; the message says since when."""


class Forbidden(AssayError):
    """The actor is known but may not do this; the message says which role may."""


class NotAuthenticated(AssayError):
    """Nobody is signed in, or the sign-in, session or token is wrong, expired or revoked."""


class InvalidInput(AssayError):
    """Input the user gave is wrong; the message says what and where."""


class BackendUnavailable(AssayError):
    """An optional component is not installed or not reachable; the message says how to fix it."""


class DatabaseBusy(BackendUnavailable):
    """A write waited too long for the database (SQLite allows one writer at a time)."""


def install_extra(extra: str) -> str:
    """The command that adds an optional extra. Assay is not on PyPI: it is installed from its
    folder (a clone) or from the wheel `make wheel` builds, so the hint names both."""
    return (
        f"pip install -e '.[{extra}]' in the Assay folder "
        f"(or the wheel: pip install 'dist/assay-*.whl[{extra}]')"
    )
