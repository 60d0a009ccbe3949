"""The pool view in the real Chromium: the editor's and the workbench's "hits | pool" toggle,
a badge per source that found a passage, marking a pooled passage, and the unanswerable
check's warning with its strong hit."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from assay.gold.items import create_item, get_item
from assay.gold.project_config import update_settings
from assay.records import Item, Project, Turn
from assay.store.workspace import Workspace
from tests.conftest import LiveServer
from tests.experiments_corpus import build_corpus
from tests.test_pools import PASSWORDS, doubtful_item

pytestmark = pytest.mark.browser

TWO_SOURCES = {
    "depth": 4,
    "sources": [{"name": "keyword", "kind": "keyword"}, {"name": "bm25-again", "kind": "keyword"}],
}


def test_editor_pool_view_with_badges_and_marking(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    corpus = build_corpus(ws, project)
    update_settings(ws, project, {"pool": TWO_SOURCES})
    item = corpus.items[0]
    page.goto(f"{live_server.url}/projects/test/items/{item.id}")
    expect(page.locator("#pool-toggle")).to_be_visible()
    page.locator("#pool-toggle").click()
    expect(page.locator("#hits")).to_be_hidden()
    entries = page.locator("#pool-view .pool-entry")
    expect(entries.first).to_be_visible()
    hotel = entries.filter(has_text="Hotel costs")
    expect(hotel.locator(".pool-src[data-source='keyword']")).to_have_text("keyword #1")
    expect(hotel.locator(".pool-src[data-source='bm25-again']")).to_have_text("bm25-again #1")
    expect(hotel.locator(".pool-judged")).to_have_text("judged relevant")
    expect(page.locator("#pool-view .pool-state")).to_contain_text("judged by the gold")
    # mark an unjudged pooled passage: the editor adds it as evidence
    before = page.locator("#ev-list > *").count()
    unjudged = entries.filter(has_not=page.locator(".pool-judged")).first
    unjudged.get_by_role("button", name="Distracting").click()
    expect(page.locator("#ev-list > *")).to_have_count(before + 1)
    expect(page.locator("#save-state")).to_have_text("Saved")
    saved = get_item(ws, project, item.id)
    assert [e.label for e in saved.turns[0].evidence].count("distracting") == 1
    # back to the hits
    page.get_by_role("button", name="Hits", exact=True).click()
    expect(page.locator("#hits")).to_be_visible()
    expect(page.locator("#pool-view")).to_be_hidden()


def test_unanswerable_warning_shows_the_strong_hit(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    build_corpus(ws, project)
    update_settings(ws, project, {"pool": TWO_SOURCES})
    doubtful = doubtful_item(ws, project)
    page.goto(f"{live_server.url}/projects/test/items/{doubtful.id}")
    warning = page.locator("#pool-warning")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text("Marked unanswerable")
    expect(warning.locator(".pool-strong").first).to_contain_text("at least 14 characters")
    expect(warning.locator(".pool-strong").first).to_contain_text("security.txt")
    # another type: the warning goes
    page.locator("#f-type").select_option("fact_single")
    expect(warning).to_be_hidden()
    page.locator("#f-type").select_option("unanswerable")
    expect(warning).to_be_visible()


def test_workbench_pool_view(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    corpus = build_corpus(ws, project)
    update_settings(ws, project, {"pool": TWO_SOURCES})
    conversation = corpus.items[2]
    page.goto(f"{live_server.url}/projects/test/conversations/{conversation.id}")
    expect(page.locator("#pool-toggle")).to_be_visible()
    page.locator(".turn[data-turn='0'] .turn-head").get_by_role(
        "button", name="Search more for this turn"
    ).click()  # search here
    page.locator("#pool-toggle").click()
    entries = page.locator("#pool-view .pool-entry")
    passwords = entries.filter(has_text="at least 14 characters")
    expect(passwords.locator(".pool-src")).to_have_count(2)
    expect(passwords.locator(".pool-judged")).to_have_text("judged relevant")


def test_workbench_warns_for_an_unanswerable_turn(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    build_corpus(ws, project)
    update_settings(ws, project, {"pool": TWO_SOURCES})
    conversation = create_item(
        ws,
        project,
        Item(
            kind="conversation",
            turns=[
                Turn(query="How much is a hotel night?", answer="120 euros."),
                Turn(
                    query=PASSWORDS,
                    answer="Not in the documents.",
                    enrichments={"Answerability": ["UNANSWERABLE"]},
                ),
            ],
        ),
    )
    page.goto(f"{live_server.url}/projects/test/conversations/{conversation.id}")
    warning = page.locator("#pool-warning")
    expect(warning).to_be_visible()
    expect(warning.locator(".pool-strong").first).to_contain_text("at least 14 characters")
    page.locator(".turn[data-turn='0'] .turn-head").get_by_role(
        "button", name="Search more for this turn"
    ).click()  # the answerable turn
    expect(warning).to_be_hidden()
