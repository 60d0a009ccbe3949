"""Who may do what: the role table, members, personal and team mode, serving beyond loopback."""

from __future__ import annotations

import pytest

from assay.errors import Conflict, Forbidden, InvalidInput
from assay.people.access import Actor, check, decide, may, permitted_actions
from assay.people.accounts import create_account, get_account, local_account, set_disabled
from assay.people.members import list_members, remove_member, role_of, set_role
from assay.people.mode import (
    check_serve_host,
    ensure_first_owner,
    is_loopback,
    set_team_mode,
    team_mode,
)
from assay.people.roles import ACTIONS, ADMIN_ACTIONS, ROLES
from assay.store.projects import create_project, update_project_settings
from assay.store.workspace import Workspace

PASSWORD = "correct horse battery"

# Written out by hand, independently of roles.ACTIONS: Y may, O only on their own or assigned
# records, - may not. Columns: owner, lead, reviewer, annotator, viewer.
EXPECTED = {
    "project.read": "YYYYY",
    "item.read": "YYYOY",
    "experiment.read": "YYYYY",
    "item.create": "YY-Y-",
    "item.edit": "YYYO-",
    "item.edit_query": "YY-O-",
    "item.delete": "YY-O-",
    "item.review": "YYY--",
    "item.assign": "YY---",
    "queue.work": "YYYY-",
    "comment.write": "YYYY-",
    "judgment.write": "YYYY-",
    "document.write": "YY---",
    "import": "YY---",
    "export": "YY---",
    "experiment.run": "YY---",
    "version.create": "YY---",
    "project.settings": "YY---",
    "project.members": "Y----",
    "project.delete": "Y----",
}


def test_the_table_covers_every_action() -> None:
    assert set(EXPECTED) == set(ACTIONS)
    assert list(ROLES) == ["owner", "lead", "reviewer", "annotator", "viewer"]


@pytest.mark.parametrize("action", sorted(EXPECTED))
@pytest.mark.parametrize("role", list(ROLES))
def test_role_decisions(action: str, role: str) -> None:
    actor = Actor(7, "alice")
    expected = EXPECTED[action][list(ROLES).index(role)]
    others = decide(actor, action, role)
    own = decide(actor, action, role, own=True)
    assert (bool(others), bool(own)) == {
        "Y": (True, True),
        "O": (False, True),
        "-": (False, False),
    }[expected], others.reason
    assert not decide(actor, action, None), "a non-member may do nothing"
    assert decide(Actor(1, "root", is_admin=True), action, None), "admins may do everything"
    assert decide(Actor(1, "local", personal=True), action, None)


def test_annotators_see_others_items_when_the_project_says_so() -> None:
    actor = Actor(7, "ann")
    assert not decide(actor, "item.read", "annotator", settings={})
    assert decide(actor, "item.read", "annotator", settings={"annotators_see_all": True})
    assert not decide(actor, "item.edit", "annotator", settings={"annotators_see_all": True})


def test_workspace_actions_are_for_admins() -> None:
    assert not decide(Actor(7, "alice"), "workspace.users", "owner")
    assert decide(Actor(7, "alice", is_admin=True), "project.create", None)
    with pytest.raises(InvalidInput, match=r"unknown action 'item\.burn'; known actions: "):
        decide(Actor(7, "alice"), "item.burn", "owner")


def test_access_reads_the_role_from_the_database(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p", "en")
    alice = create_account(any_ws, "alice", PASSWORD)
    actor = Actor.of(alice)
    with pytest.raises(
        Forbidden, match=r"alice may not open the project in project 'p': .*not a member"
    ):
        check(any_ws, actor, "project.read", project)
    set_role(any_ws, project.id, alice.id, "reviewer")
    check(any_ws, actor, "item.review", project)
    with pytest.raises(
        Forbidden, match=r"the role reviewer does not allow it \(roles that may: owner, lead\)"
    ):
        check(any_ws, actor, "item.edit_query", project)
    set_role(any_ws, project.id, alice.id, "annotator")
    assert not may(any_ws, actor, "item.read", project)
    project = update_project_settings(any_ws, project, {"annotators_see_all": True})
    assert may(any_ws, actor, "item.read", project)
    assert may(any_ws, Actor.of(local_account(any_ws)), "project.delete", project)


def test_permitted_actions_are_what_a_page_may_offer(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p", "en")
    anna = create_account(any_ws, "anna", PASSWORD)
    admin = create_account(any_ws, "root", PASSWORD, admin=True)
    set_role(any_ws, project.id, anna.id, "annotator")
    annotator = permitted_actions(any_ws, Actor.of(anna), project)
    assert annotator == {
        "project.read",
        "experiment.read",
        "item.create",
        "comment.write",
        "judgment.write",
        "queue.work",
    }
    assert "item.read" in permitted_actions(  # every item, once the project says so
        any_ws,
        Actor.of(anna),
        update_project_settings(any_ws, project, {"annotators_see_all": True}),
    )
    assert permitted_actions(any_ws, Actor.of(anna), None) == set()  # no workspace actions
    everything = {*ACTIONS, *ADMIN_ACTIONS}
    assert permitted_actions(any_ws, Actor.of(admin), None) == everything
    assert permitted_actions(any_ws, Actor.of(local_account(any_ws)), project) == everything
    reading = Actor.of(admin, scope="read")  # a read-only token offers no writes
    reads = {"project.read", "item.read", "experiment.read", "export"}
    assert permitted_actions(any_ws, reading, project) == reads


def test_first_owner_once_then_team_mode(any_ws: Workspace) -> None:
    password = ensure_first_owner(any_ws)
    assert password is not None and len(password) >= 20
    assert team_mode(any_ws) and get_account(any_ws, "admin").is_admin
    assert ensure_first_owner(any_ws) is None  # an admin can sign in: nothing new
    set_team_mode(any_ws, False)
    assert ensure_first_owner(any_ws) is None and team_mode(any_ws)


def test_members(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p", "en")
    alice = create_account(any_ws, "alice", PASSWORD)
    bob = create_account(any_ws, "bob", PASSWORD)
    set_role(any_ws, project.id, bob.id, "viewer")
    set_role(any_ws, project.id, alice.id, "owner")
    assert [(m.username, m.role) for m in list_members(any_ws, project.id)] == [
        ("alice", "owner"),
        ("bob", "viewer"),
    ]
    with pytest.raises(Conflict, match="only owner"):
        set_role(any_ws, project.id, alice.id, "lead")
    with pytest.raises(Conflict, match="only owner"):
        remove_member(any_ws, project.id, alice.id)
    with pytest.raises(InvalidInput, match="unknown role 'boss'; choose one of: owner, lead"):
        set_role(any_ws, project.id, bob.id, "boss")
    set_role(any_ws, project.id, bob.id, "owner")
    set_role(any_ws, project.id, alice.id, "lead")
    remove_member(any_ws, project.id, alice.id)
    assert role_of(any_ws, project.id, alice.id) is None
    assert role_of(any_ws, project.id, bob.id) == "owner"


def test_team_mode_needs_an_admin_and_stays_while_others_can_sign_in(any_ws: Workspace) -> None:
    assert not team_mode(any_ws)
    with pytest.raises(Conflict, match="users add NAME --owner"):
        set_team_mode(any_ws, True)
    create_account(any_ws, "alice", PASSWORD, admin=True)
    set_team_mode(any_ws, True)
    assert team_mode(any_ws)
    create_account(any_ws, "bob", PASSWORD)
    with pytest.raises(Conflict, match=r"while other accounts exist \(alice, bob\)"):
        set_team_mode(any_ws, False)
    assert team_mode(any_ws)
    set_disabled(any_ws, "bob")
    set_team_mode(any_ws, False)
    assert not team_mode(any_ws)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("example.org", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_serving_beyond_loopback_needs_team_mode(any_ws: Workspace) -> None:
    check_serve_host(any_ws, "127.0.0.1")
    with pytest.raises(Forbidden, match=r"refusing to serve on 0\.0\.0\.0: .*`assay team on`"):
        check_serve_host(any_ws, "0.0.0.0")
    create_account(any_ws, "alice", PASSWORD, admin=True)
    set_team_mode(any_ws, True)
    check_serve_host(any_ws, "0.0.0.0")
