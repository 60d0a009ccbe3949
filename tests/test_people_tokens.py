"""Personal API tokens: shown once, hashed at rest, scoped, expiring, revocable."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from assay.errors import InvalidInput, NotAuthenticated, NotFound
from assay.people.access import Actor, decide
from assay.people.accounts import create_account, set_disabled
from assay.people.tokens import (
    create_token,
    list_tokens,
    revoke_token,
    revoke_tokens,
    verify_token,
)
from assay.store.db import utcnow
from assay.store.schema import api_tokens
from assay.store.workspace import Workspace

PASSWORD = "correct horse battery"


def test_a_token_is_shown_once_and_stored_hashed(any_ws: Workspace) -> None:
    alice = create_account(any_ws, "alice", PASSWORD)
    secret, token = create_token(any_ws, alice.id, "ci", "write", days=30)
    assert secret.startswith("assay_") and len(secret) > 40
    assert token.prefix == secret[:10] and token.scope == "write"
    assert token.expires_at - token.created_at == timedelta(days=30)
    with any_ws.engine.connect() as conn:
        stored = [tuple(row) for row in conn.execute(sa.select(api_tokens))]
    assert secret not in repr(stored)
    verified = verify_token(any_ws, secret)
    assert (verified.id, verified.username, verified.last_used_at is not None) == (
        token.id,
        "alice",
        True,
    )
    assert [t.name for t in list_tokens(any_ws, alice.id)] == ["ci"]


def test_unknown_revoked_and_expired_tokens_are_refused(any_ws: Workspace) -> None:
    alice = create_account(any_ws, "alice", PASSWORD)
    revoked, token = create_token(any_ws, alice.id, "old laptop")
    expired, old = create_token(any_ws, alice.id, "last year")
    assert revoke_token(any_ws, token.id).revoked_at is not None
    assert revoke_token(any_ws, token.id).state(utcnow()) == "revoked"  # again: no change
    with any_ws.engine.begin() as conn:
        conn.execute(
            api_tokens.update()
            .where(api_tokens.c.id == old.id)
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    with pytest.raises(NotAuthenticated, match="'old laptop' is revoked"):
        verify_token(any_ws, revoked)
    with pytest.raises(NotAuthenticated, match="'last year' is expired"):
        verify_token(any_ws, expired)
    with pytest.raises(NotAuthenticated, match="unknown API token"):
        verify_token(any_ws, "assay_" + "x" * 43)
    with pytest.raises(NotAuthenticated, match="not an Assay API token"):
        verify_token(any_ws, "Bearer something")
    with pytest.raises(NotFound, match="no API token with id 999"):
        revoke_token(any_ws, 999)


def test_a_disabled_accounts_tokens_stop_working(any_ws: Workspace) -> None:
    alice = create_account(any_ws, "alice", PASSWORD)
    secret, _ = create_token(any_ws, alice.id, "ci")
    set_disabled(any_ws, "alice")
    with pytest.raises(NotAuthenticated, match="'alice' of this token is disabled"):
        verify_token(any_ws, secret)


def test_a_read_token_may_not_write(any_ws: Workspace) -> None:
    alice = create_account(any_ws, "alice", PASSWORD)
    secret, _ = create_token(any_ws, alice.id, "dashboard", "read")
    token = verify_token(any_ws, secret)
    actor = Actor(alice.id, "alice", scope=token.scope)
    assert decide(actor, "item.read", "lead")
    assert decide(actor, "export", "lead")
    refused = decide(actor, "item.create", "lead")
    assert not refused and refused.reason == "this is a read-only API token"
    admin = Actor(alice.id, "alice", is_admin=True, scope="read")
    assert not decide(admin, "project.delete", None)


@pytest.mark.parametrize(
    ("name", "scope", "days", "message"),
    [
        ("", "read", 30, "needs a name"),
        ("ci", "admin", 30, "unknown token scope 'admin'; choose one of: read, write"),
        ("ci", "read", 0, "1 to 730 days"),
        ("ci", "read", 731, "1 to 730 days"),
    ],
)
def test_bad_tokens_are_refused(ws: Workspace, name: str, scope: str, days: int, message: str):
    alice = create_account(ws, "alice", PASSWORD)
    with pytest.raises(InvalidInput, match=message):
        create_token(ws, alice.id, name, scope, days)
    assert list_tokens(ws) == []


def test_revoking_all_of_an_accounts_tokens(any_ws: Workspace) -> None:
    alice = create_account(any_ws, "alice", PASSWORD)
    bob = create_account(any_ws, "bob", PASSWORD)
    first, _ = create_token(any_ws, alice.id, "one")
    create_token(any_ws, alice.id, "two")
    kept, _ = create_token(any_ws, bob.id, "bob's")
    assert revoke_tokens(any_ws, alice.id) == 2
    assert revoke_tokens(any_ws, alice.id) == 0
    with pytest.raises(NotAuthenticated, match="is revoked"):
        verify_token(any_ws, first)
    assert verify_token(any_ws, kept).username == "bob"
