"""The Endpoints page in the real Chromium (team mode): an admin registers an endpoint, sees a
refusal in plain words, and removes one; a lead sees the list without the form."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from assay.llm.endpoints import list_endpoints
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Project
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"


@pytest.fixture
def team(ws: Workspace, project: Project) -> Workspace:
    create_account(ws, "root", PASSWORD, admin=True)
    lea = create_account(ws, "lea", PASSWORD)
    set_role(ws, project.id, lea.id, "lead")
    set_team_mode(ws, True)
    return ws


def sign_in(page: Page, url: str, name: str) -> None:
    page.goto(url + "/login?next=/endpoints")
    page.get_by_label("User name").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Outgoing endpoints")).to_be_visible()


def test_an_admin_registers_and_removes_endpoints(
    page: Page, team: Workspace, live_server: LiveServer
) -> None:
    sign_in(page, live_server.url, "root")
    form = page.locator("#endpoint-form")
    form.get_by_label("Name").fill("intranet")
    form.get_by_label("URL").fill("http://10.1.2.3:8000/v1")
    form.get_by_role("button", name="Register").click()
    expect(page.locator("#endpoints-error")).to_contain_text("10.1.2.3 is a private address")
    form.get_by_label("Allow a private address").check()
    form.get_by_role("button", name="Register").click()
    expect(page.locator("#endpoint-list")).to_contain_text("http://10.1.2.3:8000/v1")
    assert [e.name for e in list_endpoints(team)] == ["intranet"]

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Remove").click()
    expect(page.locator("#no-endpoints")).to_be_visible()
    assert list_endpoints(team) == []


def test_a_lead_reads_the_list_without_the_form(
    page: Page, team: Workspace, live_server: LiveServer
) -> None:
    sign_in(page, live_server.url, "lea")
    expect(page.locator("#endpoints-admin-only")).to_be_visible()
    expect(page.locator("#endpoint-form")).to_have_count(0)
