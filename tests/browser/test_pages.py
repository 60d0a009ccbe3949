"""The minimal pages in the real Chromium: browse a project, search, open a document."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from assay.ingest import ingest_bytes
from assay.models import Project
from assay.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser


def test_browse_search_and_read(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    ingest_bytes(ws, project, "ferries.md", b"# Ferries\n\nThe night ferry leaves at 22:40.\n")
    payload = "<img src=x onerror=window.hacked=1>"
    ingest_bytes(
        ws, project, f"{payload}.txt", f"<script>window.hacked=2</script>{payload} buses".encode()
    )
    page.goto(live_server.url + "/")
    page.get_by_role("link", name="test").click()
    expect(page.get_by_role("heading", name="test")).to_be_visible()
    page.get_by_role("navigation").get_by_role("link", name="Documents").click()
    expect(page.get_by_role("link", name=f"{payload}.txt", exact=True)).to_be_visible()

    page.get_by_label("Search the documents").fill("night ferry")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("article.hit").first.locator("mark")).to_have_text(
        ["Ferries", "night", "ferry"]
    )
    page.locator("article.hit a").first.click()
    expect(page.locator("pre.doctext")).to_contain_text("The night ferry leaves at 22:40.")

    page.goto(live_server.url + "/projects/test/documents?search=buses")
    page.locator("article.hit a").first.click()
    expect(page.locator("pre.doctext")).to_contain_text("<script>window.hacked=2</script>")
    assert page.evaluate("window.hacked") is None
