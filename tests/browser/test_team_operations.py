"""Team operations a lead or an admin does in the browser, in the real Chromium: an invite
link that makes an account which signs in, a frozen version downloaded from its page, topics
and runs uploaded for judging, and LLM drafts started from a page with their progress."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from assay.corpus.ingest import ingest_bytes
from assay.gold.item_lists import list_items
from assay.gold.items import create_item
from assay.people.accounts import create_account
from assay.people.mode import set_team_mode
from assay.records import Evidence, Item, Project, Turn
from assay.review.versions import create_version
from assay.store.workspace import Workspace
from tests.conftest import LiveServer
from tests.judging_sample import RUNS, TOPIC, judging_project

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
POLICY = b"Hotels are refunded up to 140 euros per night.\n\nTaxis are paid only at night.\n"


def fill(ws: Workspace, project: Project) -> None:
    doc = ingest_bytes(ws, project, "policy.txt", POLICY)
    item = Item(
        turns=[
            Turn(
                query="How much is a hotel night?",
                answer="Up to 140 euros.",
                evidence=[Evidence(doc_id=doc.id, text="refunded up to 140 euros")],
            )
        ]
    )
    create_item(ws, project, item, status="accepted")


def sign_in(page: Page, url: str, username: str, password: str = PASSWORD) -> None:
    page.goto(url + "/login")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(f"Signed in as {username}")).to_be_visible()


def test_an_invite_link_makes_an_account_that_signs_in(
    page: Page, browser: Browser, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    create_account(ws, "root", PASSWORD, admin=True)
    set_team_mode(ws, True)
    sign_in(page, live_server.url, "root")
    page.get_by_role("link", name="Accounts").click()
    expect(page.get_by_role("heading", name="Accounts", level=1)).to_be_visible()
    invite = page.locator("#invite-form")
    invite.get_by_label("User name", exact=True).fill("nia")
    invite.get_by_label("Project", exact=True).select_option("test")
    invite.get_by_label("Role in the project").select_option("annotator")
    invite.get_by_role("button", name="Make the invite link").click()
    link = page.locator("#invite-link")
    expect(link).not_to_have_value("")
    address = link.input_value()
    assert address.startswith(f"{live_server.url}/invite/")

    guest = browser.new_page()  # someone else's browser: no session
    guest.goto(address)
    expect(guest.get_by_text("You are invited as nia.")).to_be_visible()
    guest.get_by_label("Choose a password").fill("nias own password")
    guest.get_by_label("The password again").fill("nias own passwort")
    guest.get_by_role("button", name="Create my account and sign in").click()
    expect(guest.get_by_role("alert")).to_have_text("The two passwords differ.")
    guest.get_by_label("The password again").fill("nias own password")
    guest.get_by_role("button", name="Create my account and sign in").click()
    expect(guest.get_by_text("Signed in as nia")).to_be_visible()
    expect(guest.get_by_role("link", name="test")).to_be_visible()  # a member of the project
    guest.wait_for_load_state()  # the sign-out button works once the page's scripts have run
    guest.get_by_role("button", name="Sign out").click()
    expect(guest.get_by_role("heading", name="Sign in")).to_be_visible()
    sign_in(guest, live_server.url, "nia", "nias own password")
    guest.goto(address)  # the link worked once
    expect(guest.locator("#invite-problem")).to_contain_text("used already")

    page.reload()
    expect(page.locator("#invites-table")).to_contain_text("used")
    expect(page.locator("#accounts-table")).to_contain_text("nia")
    guest.close()


def test_a_version_downloads_from_its_page(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer, tmp_path: Path
) -> None:
    fill(ws, project)
    made = create_version(ws, project, "v1")
    page.goto(f"{live_server.url}/projects/test/versions/v1")
    section = page.locator("#version-export")
    section.get_by_label("Format").select_option("native")
    section.get_by_role("button", name="Export").click()
    link = page.locator("#version-export-download")
    expect(link).to_be_visible()
    expect(page.locator("#version-export-status")).to_have_text("Written: 1 items.")
    with page.expect_download() as download:
        link.click()
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert "v1" in saved.name
    with zipfile.ZipFile(saved) as archive:
        assert made.hash in archive.read("manifest.json").decode()


def test_topics_and_runs_upload_and_the_overview_shows_the_runs(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer, tmp_path: Path
) -> None:
    topics = tmp_path / "topics.jsonl"
    topics.write_text(json.dumps(TOPIC) + "\n", encoding="utf-8")
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in RUNS), encoding="utf-8")
    page.goto(f"{live_server.url}/projects/test/judging")
    page.get_by_role("link", name="Judging setup").click()
    expect(page.get_by_role("heading", name="Judging setup", level=1)).to_be_visible()
    upload = page.locator("#upload-topics")
    upload.get_by_label("File", exact=True).set_input_files(topics)
    upload.get_by_role("button", name="Upload topics").click()
    expect(upload.locator(".upload-report")).to_contain_text("1 topics added")
    upload = page.locator("#upload-runs")
    upload.get_by_label("File", exact=True).set_input_files(runs)
    upload.get_by_role("button", name="Upload runs").click()
    expect(upload.locator(".upload-report")).to_contain_text("2 reports added")

    page.locator(".crumbs").get_by_role("link", name="Judging").click()
    table = page.locator("table.judging-progress")
    expect(table).to_contain_text("alpha")
    expect(table).to_contain_text("beta")
    expect(page.locator("#judgments-download")).to_be_visible()


def test_llm_drafts_start_from_a_page_show_progress_and_appear(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    fill(ws, project)
    page.goto(f"{live_server.url}/projects/test")
    page.get_by_role("link", name="Draft items with the LLM").click()
    expect(page.get_by_role("heading", name="LLM drafts", level=1)).to_be_visible()
    page.get_by_label("Chunks to sample (one draft each)").fill("2")
    page.get_by_role("button", name="Draft items").click()
    status = page.locator("#synthesis-status")
    expect(status).to_contain_text("drafts made")
    drafts = page.locator("#synthesis-drafts a")
    expect(drafts.first).to_be_visible()
    made = list_items(ws, project, status="draft")[1]
    assert drafts.count() == len(made) > 0
    drafts.first.click()
    expect(page.locator("body")).to_contain_text("refunded")
    page.goto(f"{live_server.url}/projects/test/synthesis")
    expect(page.locator("#synthesis-jobs")).to_contain_text("done")


def test_citation_chips_open_the_cited_text(
    page: Page, ws: Workspace, live_server: LiveServer, tmp_path: Path
) -> None:
    judging_project(ws, tmp_path)
    base = f"{live_server.url}/projects/ferries/judging"
    page.goto(base + "/reports?topic=t1&run=alpha")
    chip = page.locator(".report-text button.cite", has_text="Winter timetable")
    chip.click()
    cited = page.locator(".cited-doc")
    expect(cited).to_contain_text("From December the last ferry leaves at 21:15.")
    expect(chip).to_have_attribute("aria-pressed", "true")
    page.get_by_role("button", name="Close the document").click()
    expect(cited).to_have_count(0)

    # citations mode: a chip of the judged sentence goes to that sentence's other citation
    page.goto(base + "/citations?topic=t1&run=alpha")
    page.keyboard.press("j")
    expect(page.locator("#unit-title")).to_have_text("alpha · Sentence 2 · Winter timetable")
    page.locator(".judged-sentence button.cite", has_text="Night ferry").click()
    expect(page.locator("#unit-title")).to_have_text("alpha · Sentence 2 · Night ferry")
    expect(page.locator("pre.doc-text")).to_contain_text("leaves at 22:40 from pier 3")
