"""An item's history page (restore an earlier version) and the dataset versions pages
(freeze two versions, diff them) in the real Chromium, in English and German at two sizes."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item, editable_copy, get_item, save_item, set_status
from assay.records import Evidence, Item, Project, Turn
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

TEXT = "The night ferry leaves at 22:40 from pier 3. Bikes ride free on every ferry."
PAYLOAD = "<img src=x onerror=window.__xss=1>"


def _accepted(ws: Workspace, project: Project, doc_id: str, query: str) -> Item:
    passage = Evidence(doc_id=doc_id, start=0, end=44, text=TEXT[:44])
    turn = Turn(query=query, answer="At 22:40.", evidence=[passage])
    item = create_item(ws, project, Item(turns=[turn]))
    return set_status(ws, project, item.id, "accepted", item.version)


def _fits(page: Page) -> None:
    """Nothing sticks out sideways (no horizontal scrolling of the page)."""
    width = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert width <= 0


def test_restore_an_earlier_version_from_the_history_page(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    doc = ingest_bytes(ws, project, "ferry.txt", TEXT.encode())
    item = _accepted(ws, project, doc.id, "When does the night ferry leave?")
    edited = editable_copy(item)
    edited.turns[0].answer = PAYLOAD
    edited.turns[0].evidence = []
    save_item(ws, project, item.id, edited, item.version)

    page.goto(f"{live_server.url}/projects/test/items/{item.id}")
    page.get_by_role("link", name="History").click()
    expect(page.get_by_role("heading", name="History")).to_be_visible()
    saved = page.locator(".history-entry").first
    expect(saved.locator(".history-action")).to_have_text("Saved")
    expect(saved.locator("tr", has_text="Answer").locator("ins")).to_have_text(PAYLOAD)
    expect(saved.locator("tr", has_text="Evidence")).to_contain_text("removed")
    assert page.evaluate("window.__xss") is None

    page.once("dialog", lambda dialog: dialog.accept())
    created = page.locator(".history-entry").last
    created.get_by_role("button", name="Restore this version").click()
    expect(page.locator(".history-entry").first.locator(".history-action")).to_have_text("Restored")
    restored = get_item(ws, project, item.id)
    assert (restored.turns[0].answer, restored.status) == ("At 22:40.", "accepted")
    assert [e.text for e in restored.turns[0].evidence] == [TEXT[:44]]

    # a stale page: the item changed elsewhere since it was opened
    newer = editable_copy(restored)
    newer.notes = "changed elsewhere"
    save_item(ws, project, item.id, newer, restored.version)
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(".history-entry").last.get_by_role("button", name="Restore this version").click()
    expect(page.locator("#history-error")).to_contain_text("changed since this page was opened")
    assert get_item(ws, project, item.id).notes == "changed elsewhere"


def test_freeze_two_versions_and_diff_them(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    doc = ingest_bytes(ws, project, "ferry.txt", TEXT.encode())
    first = _accepted(ws, project, doc.id, "When does the night ferry leave?")
    _accepted(ws, project, doc.id, "Where does the night ferry leave from?")

    page.goto(f"{live_server.url}/projects/test")
    page.get_by_role("link", name="Versions").click()
    expect(page.locator("#no-versions")).to_be_visible()
    page.get_by_label("Name", exact=True).fill("v1")
    page.get_by_role("button", name="Freeze version").click()
    expect(page.locator("#version-list").get_by_role("link", name="v1")).to_be_visible()
    page.get_by_label("Name", exact=True).fill("v1")
    page.get_by_role("button", name="Freeze version").click()
    expect(page.locator("#version-error")).to_contain_text("already has a dataset version")

    edited = editable_copy(first)
    edited.turns[0].answer = "22:40 from pier 3"
    save_item(ws, project, first.id, edited, first.version)
    _accepted(ws, project, doc.id, "Do bikes ride free?")
    page.get_by_label("Name", exact=True).fill("v2")
    page.get_by_role("button", name="Freeze version").click()
    expect(page.locator("#version-list").get_by_role("link", name="v2")).to_be_visible()

    page.get_by_label("From").select_option("v1")
    page.get_by_label("To").select_option("v2")
    page.get_by_role("button", name="Show differences").click()
    expect(page.get_by_role("heading", name="From v1 to v2")).to_be_visible()
    expect(page.locator("#diff-added")).to_contain_text("Do bikes ride free?")
    changed = page.locator("#diff-changed")
    expect(changed).to_contain_text("When does the night ferry leave?")
    expect(changed.locator("tr", has_text="Answer").locator("ins")).to_have_text(
        "22:40 from pier 3"
    )

    page.get_by_role("link", name="Dataset versions").click()
    page.get_by_role("link", name="v1").click()
    expect(page.locator("#version-items")).to_contain_text("Where does the night ferry leave")


@pytest.mark.parametrize("size", [(1280, 720), (1440, 900)])
def test_history_and_versions_fit_in_english_and_german(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer, size: tuple[int, int]
) -> None:
    doc = ingest_bytes(ws, project, "ferry.txt", TEXT.encode())
    item = _accepted(ws, project, doc.id, "When does the night ferry leave? " * 6)
    edited = editable_copy(item)
    edited.turns[0].answer = "A long answer, " * 40
    save_item(ws, project, item.id, edited, item.version)
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{live_server.url}/projects/test/versions")
    page.get_by_label("Name", exact=True).fill("a-version-with-a-rather-long-name-2026-11")
    page.get_by_role("button", name="Freeze version").click()
    expect(page.locator("#version-list tbody tr")).to_have_count(1)
    for language, history, freeze in (("en", "History", "Freeze version"),
                                      ("de", "Verlauf", "Version einfrieren")):  # fmt: skip
        page.goto(f"{live_server.url}/language/{language}?next=/projects/test/versions")
        expect(page.get_by_role("button", name=freeze)).to_be_visible()
        _fits(page)
        page.goto(f"{live_server.url}/projects/test/items/{item.id}/history")
        expect(page.get_by_role("heading", name=history)).to_be_visible()
        _fits(page)
