"""Who did it: every item, evidence, document, experiment and event stores the id of the
account that made it (issue 12, "every action carries its actor").

Writers that receive names instead (an import keeping its file's authors, ``ASSAY_AUTHOR``,
the personal-mode name box) turn them into accounts here: a name equal to a user name is that
account, else a name equal to a display name, else a new account of origin ``imported`` with
that display name and no password (it never signs in). Readers show an account as
:data:`AUTHOR_NAME`: its display name, or its user name when that is empty.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from assay.people.accounts import LOCAL, USERNAME, insert_account
from assay.store.db import reading, transaction
from assay.store.schema import accounts
from assay.store.workspace import Workspace

FEW_NAMES = 50
"""Up to this many names are looked up by index; more (an import's) in one read of all."""
AUTHOR_NAME: sa.ColumnElement[str] = sa.case(
    (accounts.c.display_name == "", accounts.c.username), else_=accounts.c.display_name
)
"""The name an account is shown and exported under (join ``accounts`` to use it)."""


def account_ids(conn: sa.Connection, names: Iterable[str]) -> dict[str, int]:
    """Account ids for author ``names``, all looked up in one read of the accounts (an import
    of 100k items asks once, not per item); names nobody has become ``imported`` accounts.
    Empty names are left out (the caller's acting account stands for them)."""
    wanted = {name for name in names if name and name.strip()}
    if not wanted:
        return {}
    if len(wanted) <= FEW_NAMES:  # a save: the accounts of these names
        shown = sorted({name[:200] for name in wanted})
        rows = conn.execute(_named_read(), {"names": sorted(wanted), "shown": shown}).all()
        found = _matched(rows, wanted)
        if len(found) == len(wanted):
            return found
    rows = conn.execute(_names_read()).all()  # a new name needs every user name (a clash)
    by_username, by_display = _by_name(rows)
    found = {}
    for name in sorted(wanted):
        known = by_username.get(name, by_display.get(name[:200]))  # display names: 200 chars
        if known is None:
            username = derived_username(name, by_username)
            known = by_username[username] = _insert_or_read(conn, username, name[:200])
            by_display.setdefault(name[:200], known)
        found[name] = known
    return found


def _insert_or_read(conn: sa.Connection, username: str, display_name: str) -> int:
    """A new ``imported`` account, or the one another request created with the same user name
    after this one read the names (two first saves of a new author at once on PostgreSQL:
    the second insert waits for the first to commit, then clashes on the unique name)."""
    try:
        with conn.begin_nested():
            return insert_account(conn, username, display_name, origin="imported")
    except sa.exc.IntegrityError:
        found = conn.scalar(sa.select(accounts.c.id).where(accounts.c.username == username))
        if found is None:
            raise
        return int(found)


@functools.cache
def _names_read() -> sa.Select[Any]:
    return sa.select(accounts.c.id, accounts.c.username, accounts.c.display_name).order_by(
        accounts.c.id
    )


@functools.cache
def _named_read() -> sa.Select[Any]:
    """The accounts whose user name is among ``names`` or display name among ``shown``:
    built once per process (every save asks)."""
    names = sa.bindparam("names", expanding=True, type_=sa.String)
    shown = sa.bindparam("shown", expanding=True, type_=sa.String)
    return _names_read().where(
        sa.or_(accounts.c.username.in_(names), accounts.c.display_name.in_(shown))
    )


def _by_name(rows: Iterable[Any]) -> tuple[dict[str, int], dict[str, int]]:
    """Account ids by user name and by display name (the first account, by id, of a display
    name that several accounts share)."""
    by_username: dict[str, int] = {}
    by_display: dict[str, int] = {}
    for row in rows:
        by_username[row.username] = row.id
        by_display.setdefault(row.display_name, row.id)
    return by_username, by_display


def _matched(rows: Sequence[Any], wanted: set[str]) -> dict[str, int]:
    """The names of ``wanted`` that ``rows`` (accounts, by id) hold, as :func:`account_ids`
    matches them."""
    by_username, by_display = _by_name(rows)
    found = {}
    for name in wanted:
        known = by_username.get(name, by_display.get(name[:200]))
        if known is not None:
            found[name] = known
    return found


def derived_username(name: str, taken: Mapping[str, Any] | set[str]) -> str:
    """A valid user name (``accounts.USERNAME``) for an author name, not in ``taken``:
    accents dropped, other characters as ``-``, at most 64 characters, ``-2``, ``-3``... on
    a clash; ``author`` when nothing is left (a name in another script)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    base = re.sub(r"[^a-z0-9._@-]+", "-", ascii_name.lower()).strip("-._@")[:56]
    base = base.rstrip("-._@") or "author"
    candidate, number = base, 2
    while candidate in taken or candidate == LOCAL:
        candidate, number = f"{base}-{number}", number + 1
    assert USERNAME.match(candidate), candidate
    return candidate


def acting_account(ws: Workspace, *, conn: sa.Connection | None = None) -> int:
    """The account the CLI and the Python API act as: the one ``ASSAY_AUTHOR`` names (found
    or made as in :func:`account_ids`), else the local owner."""
    name = ws.settings.author.strip()
    if name:
        return account_for(ws, name, conn=conn)
    with reading(ws.engine, conn) as reader:
        local = sa.select(accounts.c.id).where(accounts.c.username == LOCAL)
        return int(reader.execute(local).scalar_one())


def account_for(ws: Workspace, name: str, *, conn: sa.Connection | None = None) -> int:
    """The account id for one author name, found or made as in :func:`account_ids` (the
    empty name: :func:`acting_account`)."""
    if not name.strip():
        return acting_account(ws, conn=conn)
    with transaction(ws.engine, conn) as writer:
        return account_ids(writer, [name])[name]


def account_name(ws: Workspace, account_id: int, *, conn: sa.Connection | None = None) -> str:
    """The name :data:`AUTHOR_NAME` shows for one account."""
    with reading(ws.engine, conn) as reader:
        name = reader.scalar(sa.select(AUTHOR_NAME).where(accounts.c.id == account_id))
    return str(name or "")
