"""A team at work, in the real Chromium: the first owner creates a project on the page and
adds an annotator and a reviewer on the members panel; the annotator sees only what the role
allows and writes an item; the reviewer corrects its answer but cannot change its question;
a user disabled on the command line is thrown out on their next request."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect
from typer.testing import CliRunner

from assay.cli import make_app
from assay.gold.item_lists import list_items
from assay.gold.items import get_item
from assay.people.accounts import create_account
from assay.people.mode import ensure_first_owner
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
QUESTION = "When does the night ferry leave?"
FERRY = b"# Night ferry\n\nThe night ferry leaves at 22:40 from pier 3. Bikes ride free.\n"


def sign_in(page: Page, url: str, username: str, password: str) -> None:
    page.goto(url)
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(f"Signed in as {username}")).to_be_visible()
    page.wait_for_load_state()  # the page's scripts are running


def editor_ready(page: Page) -> None:
    """Wait until the editor's script runs (it marks the save state), so typing is seen."""
    expect(page.locator("#save-state")).to_have_class(re.compile(r"\b(idle|saved)\b"))


def test_owner_annotator_reviewer_and_a_disabled_user(
    browser: Browser, ws: Workspace, live_server: LiveServer
) -> None:
    admin_password = ensure_first_owner(ws)  # what `assay serve --team` does on first start
    assert admin_password is not None
    create_account(ws, "anna", PASSWORD, display_name="Anna")
    create_account(ws, "rita", PASSWORD, display_name="Rita")
    create_project(ws, "archive", "en")  # a project anna and rita are not members of
    url = live_server.url

    # the owner creates the project on the projects page and adds the two on the members panel
    owner = browser.new_page()
    sign_in(owner, url + "/", "admin", admin_password)
    owner.get_by_label("Name").fill("ferries")
    owner.get_by_role("button", name="Create").click()
    expect(owner.get_by_role("heading", name="ferries", exact=True)).to_be_visible()
    owner.wait_for_load_state()
    members = owner.locator("#members")
    expect(members.get_by_text("No members yet")).to_be_visible()
    for username, role in (("anna", "annotator"), ("rita", "reviewer")):
        members.get_by_label("User name").fill(username)
        members.get_by_label("Role").select_option(role)
        members.get_by_role("button", name="Add or change").click()
        row = members.get_by_role("row", name=f"{username.title()} {username} {role}")
        expect(row).to_be_visible()
    owner.get_by_role("navigation").get_by_role("link", name="Documents").click()
    expect(owner.get_by_role("heading", name="Upload documents")).to_be_visible()
    owner.wait_for_load_state()
    owner.locator("#file-picker").set_input_files(
        files=[{"name": "night-ferry.md", "mimeType": "text/markdown", "buffer": FERRY}]
    )
    expect(owner.get_by_role("link", name="night-ferry.md", exact=True)).to_be_visible()
    owner.get_by_role("link", name="ferries", exact=True).click()
    owner.get_by_role("link", name="Write a new item").click()
    editor_ready(owner)
    owner.get_by_label("Question", exact=True).fill("Do bikes ride free?")
    owner.get_by_label("Reference answer").fill("Yes, on every ferry.")
    expect(owner.locator("#save-state")).to_have_text("Saved")

    # the annotator sees only the project she belongs to, and no owner's controls
    annotator = browser.new_page()
    sign_in(annotator, url + "/", "anna", PASSWORD)
    expect(annotator.get_by_role("link", name="ferries")).to_be_visible()
    expect(annotator.get_by_role("link", name="archive")).to_have_count(0)
    expect(annotator.get_by_role("heading", name="New project")).to_have_count(0)
    expect(
        annotator.get_by_text("English · 1 documents · 0 items")
    ).to_be_visible()  # not the owner's
    annotator.get_by_role("link", name="ferries").click()
    expect(annotator.get_by_role("heading", name="ferries", exact=True)).to_be_visible()
    expect(annotator.get_by_role("link", name="Write a new item")).to_be_visible()
    expect(annotator.get_by_role("link", name="0 single-turn items")).to_be_visible()
    expect(annotator.locator("#members").get_by_role("button")).to_have_count(0)
    expect(annotator.get_by_role("link", name="Upload documents")).to_have_count(0)
    expect(annotator.get_by_text("Edit the query types")).to_have_count(0)
    expect(annotator.get_by_role("link", name="Import & export")).to_have_count(0)
    annotator.get_by_role("navigation").get_by_role("link", name="Documents").click()
    expect(annotator.get_by_role("heading", name="Documents (1)")).to_be_visible()
    expect(annotator.get_by_role("heading", name="Upload documents")).to_have_count(0)
    expect(annotator.get_by_role("button", name="Delete night-ferry.md")).to_have_count(0)
    annotator.get_by_role("navigation").get_by_role("link", name="Items").click()
    expect(annotator.get_by_role("heading", name="Items (0)")).to_be_visible()  # not the owner's
    annotator.get_by_role("link", name="New item").click()
    editor_ready(annotator)
    annotator.get_by_label("Question", exact=True).fill(QUESTION)
    annotator.get_by_label("Reference answer").fill("At 22:40.")
    expect(annotator.locator("#save-state")).to_have_text("Saved")
    project = get_project(ws, "ferries")
    _, items = list_items(ws, project)
    mine = [item for item in items if item.query == QUESTION]
    assert len(items) == 2 and len(mine) == 1
    annotator.get_by_role("navigation").get_by_role("link", name="Conversations").click()
    annotator.get_by_role("link", name="New conversation").click()
    expect(annotator.locator("#composer-q")).to_be_focused()  # its script runs
    annotator.locator("#composer-q").fill("Do bikes ride free on the night ferry?")
    annotator.locator("#composer-q").press("Control+Enter")
    expect(annotator.locator("#stream-state")).to_have_text("Answer stored.")

    # the reviewer opens it: the question is read-only with a note why, the answer saves
    reviewer = browser.new_page()
    sign_in(reviewer, url + "/projects/ferries/items", "rita", PASSWORD)
    expect(reviewer.get_by_role("link", name="Do bikes ride free?")).to_be_visible()  # all items
    expect(reviewer.get_by_role("link", name="New item")).to_have_count(0)
    reviewer.get_by_role("link", name=QUESTION).click()
    editor_ready(reviewer)
    question = reviewer.get_by_label("Question", exact=True)
    expect(question).to_have_value(QUESTION)
    expect(question).not_to_be_editable()
    expect(question).to_have_accessible_description(
        "Read-only for you: only the item's author, a lead or an owner changes its question."
    )
    reviewer.get_by_label("Reference answer").fill("At 22:40 from pier 3.")
    expect(reviewer.locator("#save-state")).to_have_text("Saved")
    stored = get_item(ws, project, mine[0].id)
    assert (stored.turns[0].query, stored.turns[0].answer) == (QUESTION, "At 22:40 from pier 3.")
    # a save that changes the question anyway (an old draft, a script) is refused, and says so
    refusal = reviewer.evaluate(
        """async ([base, id, version]) => {
            const url = base + "/items/" + id;
            const payload = await window.assay.api("GET", url);
            payload.input.turns[0].query = "Changed by the reviewer";
            try {
                await window.assay.api("PUT", url, { version: version, item: payload.input });
                return "saved";
            } catch (err) {
                return err.status + " " + err.message;
            }
        }""",
        ["/api/projects/ferries", stored.id, stored.version],
    )
    assert refusal.startswith("403 rita may not change an item's question in project 'ferries'")
    assert get_item(ws, project, stored.id).turns[0].query == QUESTION
    # so is the question of the annotator's conversation, and asking further questions
    reviewer.get_by_role("navigation").get_by_role("link", name="Conversations").click()
    expect(reviewer.get_by_role("link", name="New conversation")).to_have_count(0)
    reviewer.get_by_role("link", name="Do bikes ride free on the night ferry?").click()
    asked = reviewer.locator("#t0-question")
    expect(asked).to_have_value("Do bikes ride free on the night ferry?")
    expect(asked).not_to_be_editable()
    expect(asked).to_have_accessible_description(
        "Read-only for you: only the conversation's author, a lead or an owner changes its "
        "questions."
    )
    expect(reviewer.locator("#composer-q")).to_be_disabled()
    expect(reviewer.get_by_role("button", name="Send")).to_be_disabled()
    expect(reviewer.get_by_role("link", name="Export (RAGAPHENE JSON)")).to_have_count(0)
    expect(reviewer.locator("#set-template-save")).to_be_disabled()  # a project setting

    # an admin disables the annotator on the command line: her next request signs her out
    home = str(ws.settings.home)
    result = CliRunner().invoke(make_app(), ["--home", home, "users", "disable", "anna"])
    assert result.exit_code == 0, result.output
    annotator.get_by_role("navigation").get_by_role("link", name="Items").click()
    expect(annotator.get_by_role("heading", name="Sign in")).to_be_visible()
    annotator.get_by_label("User name").fill("anna")
    annotator.get_by_label("Password").fill(PASSWORD)
    annotator.get_by_role("button", name="Sign in").click()
    expect(annotator.get_by_role("alert")).to_have_text(
        "This account is disabled. Ask a workspace admin."
    )
