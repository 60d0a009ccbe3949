"""The pages in the real Chromium: browse a project, search, open a document; every main page
under the Content Security Policy."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from assay.corpus.documents import list_documents
from assay.corpus.ingest import ingest_bytes
from assay.demo import open_demo
from assay.experiments.store import create_experiment
from assay.gold.item_lists import list_items
from assay.records import Project
from assay.store.workspace import Workspace
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
    expect(page.locator("#doc-body")).to_contain_text("The night ferry leaves at 22:40.")

    page.goto(live_server.url + "/projects/test/documents?search=buses")
    page.locator("article.hit a").first.click()
    expect(page.locator("pre.doctext")).to_contain_text("<script>window.hacked=2</script>")
    assert page.evaluate("window.hacked") is None


# Recorded before any page script runs: every violation of the Content Security Policy.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(e.violatedDirective + " " + (e.blockedURI || "inline"));
});
"""


@pytest.mark.slow
def test_main_pages_run_under_the_content_security_policy(page: Page, ws: Workspace) -> None:
    """Every main page, used a little, under the strict policy: no violation (inline script,
    eval, inline style), no Alpine expression the CSP build cannot evaluate, no script error."""
    project, _ = open_demo(ws, with_items=True)
    item = list_items(ws, project, limit=1)[1][0]
    document = list_documents(ws, project, limit=1)[0]
    experiment = create_experiment(ws, project, "csp", pipelines=["keyword"], statuses="accepted")
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    page.on(
        "console",
        lambda message: (
            problems.append(f"console: {message.text}")
            if re.search(r"Content Security Policy|Alpine|CSP|Refused to", message.text)
            else None
        ),
    )
    page.add_init_script(RECORD_VIOLATIONS)
    base = "/projects/demo"
    with LiveServer(ws) as server:

        def visit(path: str) -> None:
            response = page.goto(server.url + path)
            assert response is not None and response.status < 500, path
            assert "script-src 'self'" in response.headers["content-security-policy"]
            page.wait_for_load_state("networkidle")
            problems.extend(f"{path}: {v}" for v in page.evaluate("window.__cspViolations"))

        for path in (
            "/",
            base,
            f"{base}/documents",
            f"{base}/documents/{document.id}",
            f"{base}/items",
            f"{base}/items/new",
            f"{base}/items/{item.id}",
            f"{base}/conversations",
            f"{base}/conversations/new",
            f"{base}/experiments",
            f"{base}/experiments/{experiment.id}",
            f"{base}/compare-experiments?a={experiment.id}&b={experiment.id}",
            f"{base}/transfer",
            "/guide",
            "/endpoints",
            f"{base}/guide",
            "/api/docs",
            "/no/such/page",
        ):
            visit(path)

        visit(base)  # the query-type editor (Alpine)
        page.locator("section.taxonomy summary").click()
        page.get_by_role("button", name="Add a query type").click()
        page.locator("section.taxonomy fieldset").first.get_by_role("button").nth(1).click()
        visit(f"{base}/experiments")  # the new-experiment form (Alpine)
        page.get_by_label("Where pipeline 1 gets its answers").select_option("file")
        page.get_by_label("Where pipeline 1 gets its answers").select_option("search")
        page.get_by_label("Mode", exact=True).select_option("generation")  # the metric list
        page.locator("#metric-picker").get_by_role("checkbox", name="bleu").check()
        visit("/")  # the new-project form (Alpine, static/projects.js)
        page.get_by_label("Name", exact=True).fill("csp check")
        page.get_by_role("button", name="Create").click()
        expect(page.get_by_role("heading", name="csp check")).to_be_visible()
        problems.extend(page.evaluate("window.__cspViolations"))
    assert problems == []
