"""``assay users``, ``assay tokens``, ``assay team`` and ``assay serve``'s host rule, as typed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.people.login import authenticate
from assay.people.sessions import create_session, touch_session
from assay.people.tokens import verify_token
from assay.store.settings import Settings
from assay.store.workspace import Workspace

PASSWORD = "correct horse battery"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture
def cli(home: Path):  # type: ignore[no-untyped-def]
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
        return runner.invoke(make_app(), ["--home", str(home), *args], input=input)

    assert invoke("init").exit_code == 0
    return invoke


def ok(result):  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.output
    return result.output


def failed(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 1, result.output
    return " ".join(result.output.split())


def workspace(home: Path) -> Workspace:
    return Workspace.open(Settings(home=home), create=False)


def test_first_owner_then_team_mode(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    message = failed(cli("team", "on"))
    assert "needs a workspace admin" in message and "assay users add NAME --owner" in message
    out = ok(cli("users", "add", "Alice", "--owner", "--password-stdin", input=PASSWORD + "\n"))
    assert "Added workspace admin 'alice'" in out and "assay team on" in out
    assert "Team mode is on" in ok(cli("team", "on"))
    assert "1 account(s) can sign in" in ok(cli("team", "status"))
    with workspace(home) as ws:
        assert authenticate(ws, "alice", PASSWORD).is_admin


def test_the_password_prompt_asks_twice(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("users", "add", "bob", input=f"{PASSWORD}\n{PASSWORD}\n")
    assert "Added account 'bob'" in ok(result)
    assert PASSWORD not in result.output  # not echoed
    assert "shorter than 10" in failed(cli("users", "add", "carl", input="short\nshort\n"))
    assert "'bob' already exists" in failed(cli("users", "add", "BOB", input=""))
    with workspace(home) as ws:
        assert authenticate(ws, "bob", PASSWORD).username == "bob"


def test_roles_disable_and_reset(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    ok(cli("projects", "create", "p1"))
    ok(cli("users", "add", "alice", "--owner", "--password-stdin", input=PASSWORD + "\n"))
    ok(cli("users", "add", "bob", "--password-stdin", input=PASSWORD + "\n"))
    assert "'bob' is annotator of 'p1'" in ok(cli("users", "set-role", "bob", "annotator"))
    assert "unknown role 'boss'" in failed(cli("users", "set-role", "bob", "boss", "-p", "p1"))
    listed = json.loads(ok(cli("users", "list", "-p", "p1", "--json")))
    assert listed == [
        {
            "username": "bob",
            "display_name": "bob",
            "admin": False,
            "state": "active",
            "origin": "created",
            "role": "annotator",
        }
    ]
    assert "last workspace admin" in failed(cli("users", "disable", "alice"))
    with workspace(home) as ws:
        bob = authenticate(ws, "bob", PASSWORD)
        secret, _ = create_session(ws, bob.id)
    ok(cli("users", "reset-password", "bob", "--password-stdin", input="a new password!\n"))
    with workspace(home) as ws:
        assert touch_session(ws, secret) is None
        secret, _ = create_session(ws, bob.id)
    assert "Disabled 'bob'" in ok(cli("users", "disable", "bob"))
    with workspace(home) as ws:
        assert touch_session(ws, secret) is None
    states = {u["username"]: u["state"] for u in json.loads(ok(cli("users", "list", "--json")))}
    assert states == {"alice": "active", "bob": "disabled", "local": "local owner (no sign-in)"}
    ok(cli("users", "enable", "bob"))
    assert "'bob' is a workspace admin" in ok(cli("users", "set-role", "bob", "admin"))
    assert "no account named 'eve'" in failed(cli("users", "reset-password", "eve"))


def test_tokens(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    ok(cli("users", "add", "bob", "--password-stdin", input=PASSWORD + "\n"))
    out = ok(cli("tokens", "create", "--user", "bob", "--name", "ci", "--scope", "write"))
    secret = out.strip().splitlines()[-1]
    assert secret.startswith("assay_") and "not shown again" in out
    with workspace(home) as ws:
        assert verify_token(ws, secret).scope == "write"
    [listed] = json.loads(ok(cli("tokens", "list", "--json")))
    assert (listed["user"], listed["state"], listed["scope"]) == ("bob", "active", "write")
    assert secret not in ok(cli("tokens", "list"))
    assert "Revoked token 1 'ci' of 'bob'" in ok(cli("tokens", "revoke", "1"))
    assert json.loads(ok(cli("tokens", "list", "--json")))[0]["state"] == "revoked"
    assert "1 to 730 days" in failed(cli("tokens", "create", "-u", "bob", "-n", "x", "--days", "0"))
    assert "no API token with id 7" in failed(cli("tokens", "revoke", "7"))


def test_serve_refuses_beyond_loopback_without_team_mode(cli) -> None:  # type: ignore[no-untyped-def]
    for host in ("0.0.0.0", "::"):
        message = failed(cli("serve", "--host", host, "--port", "0"))
        assert f"refusing to serve on {host}: personal mode serves this machine only" in message
        assert "assay users add NAME --owner" in message and "assay team on" in message
    message = failed(cli("demo", "--host", "0.0.0.0", "--port", "0"))
    assert "refusing to serve on 0.0.0.0" in message
    ok(cli("users", "add", "alice", "--owner", "--password-stdin", input=PASSWORD + "\n"))
    message = failed(cli("serve", "--host", "0.0.0.0", "--port", "0"))
    assert "turn team mode on with `assay team on`" in message and "--owner" not in message


def serve_team_until_serving(home: Path) -> list[str]:
    """What ``assay serve --team`` prints up to the line saying where it serves."""
    command = [sys.executable, "-m", "assay", "--home", str(home), "serve", "--team"]
    with subprocess.Popen(
        [*command, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as server:
        assert server.stdout is not None and server.stderr is not None
        try:
            lines: list[str] = []
            while not lines or not lines[-1].startswith("Assay is serving on"):
                line = server.stdout.readline()
                assert line, server.stderr.read()  # the server ended before serving
                lines.append(line.rstrip("\n"))
            return lines
        finally:
            server.terminate()
            server.wait(timeout=30)


def test_serve_team_creates_the_first_owner_once(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    first = serve_team_until_serving(home)
    assert "Created the first workspace admin 'admin'" in first[0]
    password = first[2].strip()
    assert len(password) == 24 and first[1] == "" and first[3] == ""
    assert "assay users reset-password admin" in first[4]
    second = serve_team_until_serving(home)
    assert len(second) == 1 and second[0].startswith("Assay is serving on")  # no password again
    assert "Team mode is on; 1 account(s) can sign in" in ok(cli("team", "status"))
    with workspace(home) as ws:
        assert authenticate(ws, "admin", password).is_admin


def test_serve_team_keeps_the_admins_there_are(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    ok(cli("users", "add", "alice", "--owner", "--password-stdin", input=PASSWORD + "\n"))
    assert len(serve_team_until_serving(home)) == 1  # no password: alice can sign in
    assert "Team mode is on; 1 account(s) can sign in" in ok(cli("team", "status"))


def test_serve_team_refuses_when_the_name_admin_is_taken(cli) -> None:  # type: ignore[no-untyped-def]
    ok(cli("users", "add", "admin", "--password-stdin", input=PASSWORD + "\n"))  # not an admin
    message = failed(cli("serve", "--team", "--port", "0"))
    assert "no workspace admin can sign in, and the account 'admin' exists" in message
    assert "assay users add NAME --owner" in message
    assert "Team mode is off" in ok(cli("team", "status"))


def test_team_mode_stays_while_others_can_sign_in(cli) -> None:  # type: ignore[no-untyped-def]
    ok(cli("users", "add", "alice", "--owner", "--password-stdin", input=PASSWORD + "\n"))
    ok(cli("users", "add", "bob", "--password-stdin", input=PASSWORD + "\n"))
    ok(cli("team", "on"))
    assert "while other accounts exist (alice, bob)" in failed(cli("team", "off"))
    ok(cli("users", "disable", "bob"))
    assert "Team mode is off" in ok(cli("team", "off"))


def test_revoke_every_token_of_an_account(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    ok(cli("users", "add", "bob", "--password-stdin", input=PASSWORD + "\n"))
    ok(cli("users", "add", "carol", "--password-stdin", input=PASSWORD + "\n"))
    for name in ("a", "b"):
        ok(cli("tokens", "create", "-u", "bob", "-n", name))
    ok(cli("tokens", "create", "-u", "carol", "-n", "c"))
    ok(cli("tokens", "revoke", "1"))
    assert "Revoked 1 token(s) of 'bob'" in ok(cli("tokens", "revoke", "--all-of", "bob"))
    states = {t["name"]: t["state"] for t in json.loads(ok(cli("tokens", "list", "--json")))}
    assert states == {"a": "revoked", "b": "revoked", "c": "active"}
    assert "one of the two" in failed(cli("tokens", "revoke"))
    assert "one of the two" in failed(cli("tokens", "revoke", "2", "--all-of", "bob"))
    message = failed(cli("tokens", "create", "-u", "local", "-n", "x"))
    assert "not for the local owner" in message
