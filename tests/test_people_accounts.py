"""Accounts, sign-in with lockout, and server-side sessions, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from assay.errors import Conflict, InvalidInput, NotAuthenticated
from assay.people.accounts import (
    create_account,
    get_account,
    list_accounts,
    local_account,
    set_admin,
    set_disabled,
    set_password,
)
from assay.people.login import AccountLocked, authenticate
from assay.people.sessions import (
    create_session,
    end_expired_sessions,
    end_session,
    hash_secret,
    touch_session,
)
from assay.store.db import utcnow
from assay.store.schema import accounts, sessions
from assay.store.workspace import Workspace

PASSWORD = "correct horse battery"


def test_a_new_workspace_has_only_the_local_owner(any_ws: Workspace) -> None:
    [local] = list_accounts(any_ws)
    assert (local.username, local.origin, local.is_admin) == ("local", "local", True)
    assert not local.can_sign_in
    assert local_account(any_ws) == local


def test_the_password_is_stored_as_argon2_only(any_ws: Workspace) -> None:
    alice = create_account(any_ws, "Alice", PASSWORD, display_name="Alice A.")
    assert (alice.username, alice.display_name, alice.can_sign_in) == ("alice", "Alice A.", True)
    with any_ws.engine.connect() as conn:
        stored = conn.execute(sa.select(accounts.c.password_hash).where(accounts.c.id == alice.id))
        hashed = stored.scalar()
    assert hashed.startswith("$argon2id$") and PASSWORD not in hashed


@pytest.mark.usefixtures("production_passwords")
def test_passwords_are_hashed_at_production_strength(ws: Workspace) -> None:
    """The suite hashes with argon2-cffi's cheapest settings (tests/conftest.py); Assay's own
    are RFC 9106's low-memory choice, and a hash made with weaker ones is replaced at the next
    sign-in."""
    from argon2 import PasswordHasher

    production = "$argon2id$v=19$m=65536,t=3,p=4$"
    alice = create_account(ws, "alice", PASSWORD)

    def stored() -> str:
        with ws.engine.connect() as conn:
            where = accounts.c.id == alice.id
            return str(conn.execute(sa.select(accounts.c.password_hash).where(where)).scalar())

    assert stored().startswith(production)
    weak = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash(PASSWORD)
    with ws.engine.begin() as conn:
        conn.execute(accounts.update().where(accounts.c.id == alice.id).values(password_hash=weak))
    assert authenticate(ws, "alice", PASSWORD).username == "alice"
    assert stored().startswith(production)
    with pytest.raises(NotAuthenticated):
        authenticate(ws, "alice", PASSWORD + "!")


@pytest.mark.parametrize(
    ("name", "password", "message"),
    [
        ("bob", "short", "shorter than 10"),
        ("bob", "x" * 1025, "longer than 1024"),
        ("bobbybobby", "BobbyBobby", "must not be the user name"),
        ("local", PASSWORD, "reserved"),
        ("no spaces", PASSWORD, "not valid"),
        ("", PASSWORD, "not valid"),
    ],
)
def test_bad_accounts_are_refused(ws: Workspace, name: str, password: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        create_account(ws, name, password)
    assert [a.username for a in list_accounts(ws)] == ["local"]


def test_a_user_name_is_taken_once_whatever_its_case(any_ws: Workspace) -> None:
    create_account(any_ws, "alice", PASSWORD)
    with pytest.raises(Conflict, match="'alice' already exists"):
        create_account(any_ws, "ALICE", PASSWORD)


def test_sign_in(any_ws: Workspace) -> None:
    create_account(any_ws, "alice", PASSWORD)
    assert authenticate(any_ws, "Alice", PASSWORD).username == "alice"
    with pytest.raises(NotAuthenticated, match="wrong user name or password"):
        authenticate(any_ws, "alice", PASSWORD + "!")
    with pytest.raises(NotAuthenticated, match="wrong user name or password"):
        authenticate(any_ws, "mallory", PASSWORD)
    with pytest.raises(NotAuthenticated, match="wrong user name or password"):
        authenticate(any_ws, "local", "")  # the local owner never signs in
    assert get_account(any_ws, "alice").failed_logins == 1


def test_wrong_passwords_lock_the_account_even_for_the_right_one(any_ws: Workspace) -> None:
    create_account(any_ws, "alice", PASSWORD)
    for _ in range(any_ws.settings.login_max_failures):
        with pytest.raises(NotAuthenticated) as caught:
            authenticate(any_ws, "alice", "wrong password")
        assert not isinstance(caught.value, AccountLocked)
    with pytest.raises(AccountLocked, match=r"locked until \d\d:\d\d UTC"):
        authenticate(any_ws, "alice", PASSWORD)
    set_password(any_ws, "alice", PASSWORD + "2")  # an admin's reset lifts the lock
    assert authenticate(any_ws, "alice", PASSWORD + "2").failed_logins == 0


def test_a_lock_ends_by_itself(any_ws: Workspace) -> None:
    create_account(any_ws, "alice", PASSWORD)
    with any_ws.engine.begin() as conn:
        conn.execute(accounts.update().values(locked_until=utcnow() - timedelta(seconds=1)))
    assert authenticate(any_ws, "alice", PASSWORD).username == "alice"


def test_disabling_ends_every_session_and_sign_in(any_ws: Workspace) -> None:
    alice = create_account(any_ws, "alice", PASSWORD)
    first, _ = create_session(any_ws, alice.id)
    second, _ = create_session(any_ws, alice.id)
    assert first != second
    assert touch_session(any_ws, first) is not None
    set_disabled(any_ws, "alice")
    assert touch_session(any_ws, first) is None
    assert touch_session(any_ws, second) is None
    with any_ws.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(sessions)).scalar() == 0
    with pytest.raises(NotAuthenticated, match="disabled"):
        authenticate(any_ws, "alice", PASSWORD)
    set_disabled(any_ws, "alice", False)
    assert authenticate(any_ws, "alice", PASSWORD).username == "alice"


def test_a_new_password_ends_every_session(any_ws: Workspace) -> None:
    alice = create_account(any_ws, "alice", PASSWORD)
    secret, _ = create_session(any_ws, alice.id)
    set_password(any_ws, "alice", "another good password")
    assert touch_session(any_ws, secret) is None
    with pytest.raises(NotAuthenticated):
        authenticate(any_ws, "alice", PASSWORD)


def test_sessions_end_when_idle_too_old_or_signed_out(any_ws: Workspace) -> None:
    alice = create_account(any_ws, "alice", PASSWORD)
    idle, _ = create_session(any_ws, alice.id)
    old, _ = create_session(any_ws, alice.id)
    out, _ = create_session(any_ws, alice.id)
    fresh, session = create_session(any_ws, alice.id)
    assert session.expires_at - session.created_at == timedelta(hours=168)
    now = utcnow()
    with any_ws.engine.begin() as conn:
        conn.execute(
            sessions.update()
            .where(sessions.c.id_hash == hash_secret(idle))
            .values(last_seen_at=now - timedelta(minutes=any_ws.settings.session_idle_minutes))
        )
        conn.execute(
            sessions.update()
            .where(sessions.c.id_hash == hash_secret(old))
            .values(expires_at=now - timedelta(seconds=1))
        )
    end_session(any_ws, out)
    assert [touch_session(any_ws, s) is not None for s in (idle, old, out, fresh)] == [
        False,
        False,
        False,
        True,
    ]
    assert touch_session(any_ws, "") is None
    assert touch_session(any_ws, "made-up") is None


def test_a_used_session_stays_alive(any_ws: Workspace) -> None:
    alice = create_account(any_ws, "alice", PASSWORD)
    secret, _ = create_session(any_ws, alice.id)
    with any_ws.engine.begin() as conn:
        conn.execute(
            sessions.update()
            .where(sessions.c.id_hash == hash_secret(secret))
            .values(last_seen_at=utcnow() - timedelta(minutes=10))
        )
    touched = touch_session(any_ws, secret)
    assert touched is not None and utcnow() - touched.last_seen_at < timedelta(seconds=5)


def test_the_last_admin_who_can_sign_in_stays(any_ws: Workspace) -> None:
    create_account(any_ws, "alice", PASSWORD, admin=True)
    with pytest.raises(Conflict, match="last workspace admin"):
        set_disabled(any_ws, "alice")
    with pytest.raises(Conflict, match="last workspace admin"):
        set_admin(any_ws, "alice", False)
    create_account(any_ws, "bob", PASSWORD)
    set_admin(any_ws, "bob", True)
    set_disabled(any_ws, "alice")
    assert get_account(any_ws, "alice").disabled
    with pytest.raises(InvalidInput, match="local owner"):
        set_disabled(any_ws, "local")


def test_expired_sessions_are_swept(any_ws: Workspace) -> None:
    alice = create_account(any_ws, "alice", PASSWORD)
    old, _ = create_session(any_ws, alice.id)
    idle, _ = create_session(any_ws, alice.id)
    live, _ = create_session(any_ws, alice.id)
    now = utcnow()
    with any_ws.engine.begin() as conn:
        conn.execute(
            sessions.update()
            .where(sessions.c.id_hash == hash_secret(old))
            .values(expires_at=now - timedelta(seconds=1))
        )
        conn.execute(
            sessions.update()
            .where(sessions.c.id_hash == hash_secret(idle))
            .values(last_seen_at=now - timedelta(days=1))
        )
    assert end_expired_sessions(any_ws) == 2
    assert touch_session(any_ws, live) is not None
