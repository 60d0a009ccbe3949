"""Sign-in tells nothing about which names exist, and its limits hold (issue 32): one
``verify`` on every path (counted through a real Argon2 hasher), equal answers for unknown
and known names, X-Forwarded-For believed only from proxies named in settings, and the
per-name and per-process failure budgets. SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from argon2 import PasswordHasher
from fastapi.testclient import TestClient

from assay.errors import NotAuthenticated
from assay.people import passwords
from assay.people.accounts import create_account
from assay.people.login import AccountLocked, authenticate
from assay.people.mode import set_team_mode
from assay.store.workspace import Workspace
from assay.web import create_app
from assay.web.login_limit import LoginLimiter
from tests.test_web_signin import PASSWORD

WRONG = "not the password at all"


class CountingHasher(PasswordHasher):
    """Argon2 at the tests' cheap settings, counting what it is asked to do."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=8, parallelism=1)
        self.verified = 0
        self.hashed = 0

    def verify(self, hash: str | bytes, password: str | bytes) -> bool:
        self.verified += 1
        return super().verify(hash, password)

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        self.hashed += 1
        return super().hash(password, salt=salt)


@pytest.fixture
def team(any_ws: Workspace) -> Workspace:
    create_account(any_ws, "root", PASSWORD, admin=True)
    create_account(any_ws, "bob", PASSWORD)
    set_team_mode(any_ws, True)
    return any_ws


def client_at(ws: Workspace, peer: str, **settings: Any) -> TestClient:
    if settings:
        ws = replace(ws, settings=ws.settings.model_copy(update=settings))
    client = TestClient(create_app(ws), client=(peer, 40000))
    client.get("/api/session")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def attempt(client: TestClient, name: str, password: str = WRONG, **headers: str) -> Any:
    return client.post(
        "/api/session", json={"username": name, "password": password}, headers=headers
    )


@pytest.mark.parametrize("name", ["nobody", "bob", "Not A Valid Name!", "root"])
def test_every_sign_in_path_verifies_once(team: Workspace, name: str) -> None:
    hasher = CountingHasher()
    with pytest.raises(NotAuthenticated):
        authenticate(team, name, WRONG, hasher=hasher)
    assert (hasher.verified, hasher.hashed) == (1, 0)


def test_a_locked_account_and_a_right_password_verify_once_too(team: Workspace) -> None:
    hasher = CountingHasher()
    assert authenticate(team, "bob", PASSWORD, hasher=hasher).username == "bob"
    for _ in range(team.settings.login_max_failures):
        with pytest.raises(NotAuthenticated):
            authenticate(team, "bob", WRONG, hasher=hasher)
    hasher.verified = 0
    with pytest.raises(AccountLocked):
        authenticate(team, "bob", PASSWORD, hasher=hasher)
    assert hasher.verified == 1


def test_the_web_sign_in_does_the_same_work_and_says_the_same_for_any_name(
    team: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    hasher = CountingHasher()
    monkeypatch.setattr(passwords, "_hasher", lambda: hasher)
    answers: dict[str, list[tuple[int, str, str]]] = {}
    for name in ("bob", "nobody"):
        client = client_at(team, "192.0.2.10")  # a fresh app: its own address budget
        answers[name] = []
        for _ in range(team.settings.login_max_failures + 2):
            before = hasher.verified
            body = attempt(client, name)
            assert hasher.verified == before + 1, name  # one verify, whatever the name
            said = body.json()
            detail = said["detail"].replace(said.get("until", "-"), "HH:MM")  # the minute may turn
            answers[name].append((body.status_code, said["code"], detail))
    assert answers["bob"] == answers["nobody"]
    codes = [code for _, code, _ in answers["bob"]]
    assert codes == ["wrong"] * team.settings.login_max_failures + ["locked", "locked"]


def test_forwarded_for_from_loopback_is_not_believed_by_default(team: Workspace) -> None:
    """The attack: a new X-Forwarded-For per try from the server machine."""
    client = client_at(team, "127.0.0.1")
    codes = [
        attempt(client, f"user{n}", **{"x-forwarded-for": f"198.51.100.{n}"}).status_code
        for n in range(11)
    ]
    assert codes == [401] * 10 + [429]


def test_a_named_proxy_is_believed_but_not_what_the_client_wrote(team: Workspace) -> None:
    proxy = client_at(team, "127.0.0.1", trusted_proxies="127.0.0.1")
    for n in range(10):  # ten clients behind the proxy do not share one budget
        forwarded = {"x-forwarded-for": f"203.0.113.{n}"}
        assert attempt(proxy, f"user{n}", **forwarded).status_code == 401
    proxy = client_at(team, "127.0.0.1", trusted_proxies="127.0.0.1")
    codes = [  # the client's own X-Forwarded-For, with the proxy's entry for it at the end
        attempt(
            proxy, f"user{n}", **{"x-forwarded-for": f"198.51.100.{n}, 203.0.113.99"}
        ).status_code
        for n in range(11)
    ]
    assert codes == [401] * 10 + [429]


def test_the_client_is_the_last_forwarded_address_that_is_not_a_trusted_proxy() -> None:
    from assay.store.settings import Settings
    from assay.web.proxies import ProxyHeadersMiddleware

    middleware = ProxyHeadersMiddleware(None, Settings(trusted_proxies="10.0.0.0/8"))  # type: ignore[arg-type]
    assert middleware.client_of("1.2.3.4, 203.0.113.5, 10.0.0.7") == "203.0.113.5"
    assert middleware.client_of("[2001:db8::1]") == "2001:db8::1"
    assert middleware.client_of("1.2.3.4, not-an-address") is None
    assert middleware.client_of("10.0.0.1, 10.0.0.2") is None
    assert ProxyHeadersMiddleware(None, Settings()).networks == []  # type: ignore[arg-type]


def test_the_process_budget_stops_guessing_spread_over_addresses() -> None:
    limiter = LoginLimiter(process_failures=3)
    for n in range(3):
        assert limiter.refusal(f"192.0.2.{n}", now=float(n)) is None
        limiter.failed(f"192.0.2.{n}", f"user{n}", now=float(n))
    assert limiter.refusal("192.0.2.99", now=3.0) == "server"
    assert limiter.refusal("192.0.2.99", now=61.0) is None  # a minute later


def test_a_name_budget_ends_with_a_success() -> None:
    limiter = LoginLimiter(name_failures=2)
    limiter.failed("a", "Bob")
    limiter.succeeded("bob")
    limiter.failed("a", "bob")
    assert limiter.locked_until("bob") is None
    limiter.failed("b", " BOB ")
    assert limiter.locked_until("bob") is not None


def test_a_new_password_lifts_an_accounts_lock_at_once(team: Workspace) -> None:
    """The web app's per-name budget is for names without an account: an account's lock is
    the database's, which a new password lifts."""
    from assay.people.accounts import set_password

    client = client_at(team, "192.0.2.20")
    codes = [attempt(client, "bob").json()["code"] for _ in range(6)]
    assert codes[-1] == "locked"
    set_password(team, "bob", "a brand new password")
    assert attempt(client, "bob", "a brand new password").status_code == 200
