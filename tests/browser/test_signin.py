"""Signing in and out in team mode, in the real Chromium."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from assay.people.accounts import create_account, set_disabled
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Project
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"


@pytest.fixture
def team(ws: Workspace, project: Project) -> Workspace:
    create_account(ws, "root", PASSWORD, admin=True)
    bob = create_account(ws, "bob", PASSWORD, display_name="Bob")
    set_role(ws, project.id, bob.id, "viewer")
    set_team_mode(ws, True)
    return ws


def test_sign_in_out_and_thrown_out_when_disabled(
    page: Page, team: Workspace, live_server: LiveServer
) -> None:
    page.goto(live_server.url + "/projects/test/documents")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert "/login?next=%2Fprojects%2Ftest%2Fdocuments" in page.url
    page.get_by_label("User name").fill("bob")
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("Wrong user name or password.")
    expect(page.get_by_label("Password")).to_have_value("")

    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("Signed in as bob")).to_be_visible()
    assert page.url.endswith("/projects/test/documents")
    expect(page.get_by_label("Your name")).to_have_count(0)  # the account is the author

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.goto(live_server.url + "/projects/test")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()

    page.get_by_label("User name").fill("bob")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("Signed in as bob")).to_be_visible()
    set_disabled(team, "bob")
    page.reload()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()


def test_sign_in_page_in_german(page: Page, team: Workspace, live_server: LiveServer) -> None:
    page.goto(live_server.url + "/projects/test")
    page.get_by_role("button", name="Deutsch").click()
    expect(page.get_by_role("heading", name="Anmelden")).to_be_visible()
    page.get_by_label("Benutzername").fill("bob")
    page.get_by_label("Passwort").fill("falsch falsch falsch")
    page.get_by_role("button", name="Anmelden").click()
    expect(page.get_by_role("alert")).to_have_text("Benutzername oder Passwort ist falsch.")
    page.get_by_label("Passwort").fill(PASSWORD)
    page.get_by_role("button", name="Anmelden").click()
    expect(page.get_by_text("Angemeldet als bob")).to_be_visible()
    assert page.url.endswith("/projects/test")


def test_owners_manage_members_on_the_project_page(
    page: Page, team: Workspace, live_server: LiveServer
) -> None:
    create_account(team, "carol", PASSWORD)
    page.goto(live_server.url + "/projects/test")
    page.get_by_label("User name").fill("root")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    members = page.locator("#members")
    expect(members.get_by_role("heading", name="Members")).to_be_visible()
    expect(members.get_by_role("row")).to_have_count(2)  # header and bob
    expect(members.get_by_role("cell", name="viewer")).to_be_visible()
    members.get_by_label("User name").fill("carol")
    members.get_by_label("Role").select_option("reviewer")
    members.get_by_role("button", name="Add or change").click()
    expect(members.get_by_role("cell", name="reviewer")).to_be_visible()
    members.get_by_label("User name").fill("nobody")
    members.get_by_role("button", name="Add or change").click()
    expect(page.locator("#members-error")).to_contain_text("no account named 'nobody'")
    page.once("dialog", lambda dialog: dialog.accept())
    members.get_by_role("button", name="Remove carol from the project").click()
    expect(members.get_by_role("cell", name="reviewer")).to_have_count(0)

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.goto(live_server.url + "/projects/test")
    page.get_by_label("User name").fill("bob")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(members.get_by_role("cell", name="viewer")).to_be_visible()  # a viewer sees the list
    expect(members.get_by_role("button")).to_have_count(0)  # but cannot change it


def test_an_owner_lets_annotators_see_every_item(
    page: Page, team: Workspace, project: Project, live_server: LiveServer
) -> None:
    """The members panel's switch stores the project setting; a viewer reads it, unswitchable."""
    page.goto(live_server.url + "/login")
    page.get_by_label("User name").fill("root")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("Signed in as root")).to_be_visible()
    page.goto(live_server.url + "/projects/test")
    switch = page.get_by_label("Annotators see every item of the project")
    expect(switch).not_to_be_checked()
    with page.expect_response(lambda r: r.url.endswith("/api/projects/test/settings")) as saved:
        switch.check()
    assert saved.value.ok
    assert get_project(team, "test").settings["annotators_see_all"] is True
    page.reload()
    expect(page.get_by_label("Annotators see every item of the project")).to_be_checked()
    page.get_by_role("button", name="Sign out").click()

    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.get_by_label("User name").fill("bob")  # a viewer: told, not offered the switch
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("Signed in as bob")).to_be_visible()
    page.goto(live_server.url + "/projects/test")
    expect(page.get_by_text("Annotators see every item of the project.")).to_be_visible()
    expect(page.get_by_role("checkbox")).to_have_count(0)
