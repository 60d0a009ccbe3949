"""Numbers in the reader's language, from the server and from page scripts, and the API docs
page working with nothing but this server, in the real Chromium."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, Request, expect

from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item, set_status
from assay.records import Evidence, Item, Project, Turn
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

NBSP = "\u00a0"


def long_document(ws: Workspace, project: Project) -> None:
    text = ("The night ferry leaves at 22:40 from pier 3. " * 40)[:1234]
    doc = ingest_bytes(ws, project, "ferry.txt", text.encode())
    assert len(doc.text) == 1234
    turn = Turn(query="When does the night ferry leave?", answer="At 22:40.",
                evidence=[Evidence(doc_id=doc.id, start=26, end=31, text="22:40")])  # fmt: skip
    item = create_item(ws, project, Item(turns=[turn]))
    set_status(ws, project, item.id, "accepted", item.version)


def test_numbers_follow_the_page_language(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    long_document(ws, project)
    documents = live_server.url + "/projects/test/documents"
    page.goto(live_server.url + "/language/en?next=/projects/test/documents")
    page.get_by_role("link", name="ferry.txt", exact=True).click()
    document = page.url
    expect(page.locator(".doc-facts")).to_contain_text("1,234")  # its characters
    assert page.evaluate("assayFormat.pct(0.125, 1)") == "12.5%"

    page.goto(live_server.url + "/language/de?next=/projects/test/documents")
    assert page.url == documents
    page.goto(document)
    expect(page.locator(".doc-facts")).to_contain_text("1.234")
    # the numbers page scripts write: the same rules as the server's filters
    assert page.evaluate("assayFormat.num(1234.5)") == "1.234,5"
    assert page.evaluate("assayFormat.pct(0.125, 1)") == f"12,5{NBSP}%"

    # a figure a script writes into the page: the size of an export, in German
    page.goto(live_server.url + "/projects/test/transfer")
    page.get_by_role("button", name="Export starten").click()
    expect(page.locator("#export-status")).to_have_text(
        re.compile(r"Fertig: 1 Eintrag/Einträge, \d+,\d kB\.")
    )


def test_api_docs_render_with_nothing_but_this_server(page: Page, live_server: LiveServer) -> None:
    asked: list[str] = []

    def record(request: Request) -> None:
        asked.append(request.url)

    page.on("request", record)
    page.context.on("request", record)
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Refused" in m.text else None)
    page.on("pageerror", lambda error: violations.append(str(error)))

    page.goto(live_server.url + "/")  # any page: the footer links the docs
    page.get_by_role("contentinfo").get_by_role("link", name="API documentation").click()
    expect(page.get_by_role("heading", name="API documentation", level=1)).to_be_visible()
    expect(page.locator(".opblock").first).to_be_visible()
    spec = page.request.get(live_server.url + "/api/openapi.json").json()
    summaries = {op["summary"] for methods in spec["paths"].values() for op in methods.values()}
    # With a hundred operations and more Swagger UI draws only what is in view: scroll the
    # page through and collect every operation it showed on the way.
    shown: set[str] = set()
    for _ in range(200):
        shown.update(page.locator(".opblock-summary-description").all_inner_texts())
        if page.evaluate("window.scrollY + window.innerHeight >= document.body.scrollHeight"):
            break
        page.mouse.wheel(0, 500)
        page.wait_for_timeout(50)
    assert "Create a project" in shown
    assert sorted(summaries - shown) == []
    page.wait_for_load_state("networkidle")

    assert asked, "no request recorded"
    foreign = sorted({url for url in asked if not url.startswith(live_server.url + "/")})
    assert foreign == []
    assert any("/static/vendor/swagger-ui-bundle" in url for url in asked)
    assert any(url.endswith("/api/openapi.json") for url in asked)
    assert violations == []


def test_the_guide_inside_a_project_shows_its_pictures_and_keeps_the_menu(
    page: Page, project: Project, live_server: LiveServer
) -> None:
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(live_server.url + "/projects/test")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Guide").click()
    expect(page.get_by_role("heading", name="Guide for annotators")).to_be_visible()
    assert page.url == live_server.url + "/projects/test/guide"
    menu = page.get_by_role("navigation", name="Main")
    expect(menu.get_by_role("link", name="Documents")).to_have_attribute(
        "href", "/projects/test/documents"
    )
    pictures = page.locator("article.guide figure img")
    assert pictures.count() >= 6
    for index in range(pictures.count()):
        picture = pictures.nth(index)
        picture.scroll_into_view_if_needed()  # they load lazily
        page.wait_for_function(
            "(img) => img.complete && img.naturalWidth > 0", arg=picture.element_handle()
        )
    assert [url for url in asked if not url.startswith(live_server.url + "/")] == []
    page.get_by_role("button", name="Deutsch").click()
    expect(page.get_by_role("heading", name="Gespräche")).to_be_visible()
    assert "-de.jpg" in (page.locator("article.guide figure img").first.get_attribute("src") or "")
