"""Review in the real Chromium, team mode, signed in as a reviewer: Start review opens the
first submitted item; she corrects its answer (the question stays read-only), sees her change
as a diff and accepts with edits; the next item opens by itself and she rejects it, first
without a reason (refused on the page), then with one; the item shows the verdict."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from assay.gold.items import create_item, get_item, set_status
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Item, Turn
from assay.review.reviews import item_reviews
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"


def sign_in(page: Page, url: str, username: str) -> None:
    page.goto(url)
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(f"Signed in as {username}")).to_be_visible()
    page.wait_for_load_state()


def test_a_reviewer_accepts_with_edits_and_rejects_with_a_reason(
    browser: Browser, ws: Workspace, live_server: LiveServer
) -> None:
    create_account(ws, "root", PASSWORD, admin=True)
    ann = create_account(ws, "ann", PASSWORD, display_name="Ann").id
    rita = create_account(ws, "rita", PASSWORD, display_name="Rita").id
    project = create_project(ws, "ferries", "en")
    set_role(ws, project.id, ann, "annotator")
    set_role(ws, project.id, rita, "reviewer")
    ids = []
    for query, answer in (("When does the night ferry leave?", "At 22:40."),
                          ("Do bikes ride free?", "Yes.")):  # fmt: skip
        made = create_item(ws, project, Item(turns=[Turn(query=query, answer=answer)]), author=ann)
        ids.append(set_status(ws, project, made.id, "submitted", made.version, actor=ann).id)
    set_team_mode(ws, True)

    page = browser.new_page(viewport={"width": 1280, "height": 720})
    sign_in(page, live_server.url + "/projects/ferries/review", "rita")
    expect(page.get_by_text("0 of 2 reviewed")).to_be_visible()
    page.get_by_role("button", name="Start review").click()

    # the first item: the question is read-only, the answer is hers to correct
    expect(page).to_have_url(re.compile(f"/items/{ids[0]}$"))
    expect(page.locator("#review-bar")).to_be_visible()
    expect(page.get_by_label("Question", exact=True)).not_to_be_editable()
    expect(page.get_by_role("button", name="Accept with edits")).to_be_disabled()
    page.get_by_label("Reference answer").fill("At 22:40 from pier 3.")
    expect(page.locator("#save-state")).to_have_text("Saved")
    edited = page.get_by_role("button", name="Accept with edits")
    expect(edited).to_be_enabled()
    expect(page.get_by_role("button", name="Accept", exact=True)).to_be_disabled()
    edited.click()
    dialog = page.get_by_role("dialog", name="Accept with these edits?")
    expect(dialog).to_be_visible()
    row = dialog.get_by_role("row", name=re.compile("^Answer"))
    expect(row).to_contain_text("At 22:40.")
    expect(row).to_contain_text("At 22:40 from pier 3.")
    dialog.get_by_role("button", name="Accept with edits").click()

    # the next item opens by itself; a reject needs a reason
    expect(page).to_have_url(re.compile(f"/items/{ids[1]}$"))
    expect(page.get_by_text("1 of 2 reviewed")).to_be_visible()
    page.keyboard.press("Shift+X")
    reject = page.get_by_role("dialog", name="Reject this item")
    expect(reject).to_be_visible()
    reject.get_by_role("button", name="Reject").click()
    expect(reject.get_by_role("alert")).to_have_text(
        "Give a reason: the author needs to know what to change."
    )
    reject.get_by_label("Reason (required)").fill("Say which ferries: only the night ferry?")
    reject.get_by_role("button", name="Reject").click()
    expect(page.locator("#item-status")).to_have_text("rejected")
    history = page.locator("#review-history")
    expect(history).to_contain_text("Rejected")
    expect(history).to_contain_text("Say which ferries: only the night ferry?")
    expect(page.locator("#review-bar")).to_be_hidden()

    first, second = (get_item(ws, project, i) for i in ids)
    assert (first.status, first.turns[0].answer) == ("accepted", "At 22:40 from pier 3.")
    assert second.status == "rejected"
    [accepted] = item_reviews(ws, project, ids[0])
    assert (accepted.verdict, accepted.reviewer) == ("accept_edited", "Rita")
    assert accepted.changes == [
        {"field": "turns[0].answer", "before": "At 22:40.", "after": "At 22:40 from pier 3."}
    ]
    [rejected] = item_reviews(ws, project, ids[1])
    assert rejected.reason == "Say which ferries: only the night ferry?"


def test_a_reviewer_edits_an_agent_turn_and_the_submitted_text_is_kept(
    browser: Browser, ws: Workspace, live_server: LiveServer
) -> None:
    create_account(ws, "root", PASSWORD, admin=True)
    ann = create_account(ws, "ann", PASSWORD).id
    rita = create_account(ws, "rita", PASSWORD).id
    project = create_project(ws, "ferries", "en")
    set_role(ws, project.id, ann, "annotator")
    set_role(ws, project.id, rita, "reviewer")
    turns = [Turn(query="When does the night ferry leave?", answer="At 22:40."),
             Turn(query="From where?", answer="Pier 3.")]  # fmt: skip
    made = create_item(ws, project, Item(kind="conversation", turns=turns), author=ann)
    item = set_status(ws, project, made.id, "submitted", made.version, actor=ann)
    set_team_mode(ws, True)

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    sign_in(page, live_server.url + f"/projects/ferries/conversations/{item.id}", "rita")
    expect(page.locator("#review-bar")).to_be_visible()
    expect(page.locator("#t0-question")).not_to_be_editable()
    page.locator("#t0-answer").fill("At 22:40, from pier 3.")
    expect(page.locator("#save-state")).to_have_text("All changes saved")
    diff = page.locator('.turn[data-turn="0"] .diff')
    expect(diff.locator("del")).to_have_text("22:40.")  # against the submitted answer
    page.get_by_role("button", name="Accept with edits").click()
    dialog = page.get_by_role("dialog", name="Accept with these edits?")
    expect(dialog.get_by_role("row", name=re.compile("^Turn 1 · Answer"))).to_be_visible()
    dialog.get_by_role("button", name="Accept with edits").click()
    expect(page.locator("#conv-status")).to_have_text("accepted")

    stored = get_item(ws, project, item.id)
    assert [(t.answer, t.original_answer) for t in stored.turns] == [
        ("At 22:40, from pier 3.", "At 22:40."),
        ("Pier 3.", ""),
    ]
    [review] = item_reviews(ws, project, item.id)
    assert review.verdict == "accept_edited"
    assert [c["field"] for c in review.changes] == ["turns[0].answer"]
