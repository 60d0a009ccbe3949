"""Passages outside the corpus (an external system's) in real Chromium: the conversation page
shows them as such, with the id they came with and no relevance toggles, and the experiment
task page marks them, in English and German at 1280x720 (screenshots to
UNANCHORED_SCREENSHOTS, else the test's folder)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from assay.corpus.ingest import ingest_bytes
from assay.experiments import create_experiment, run_experiment
from assay.gold.items import create_item
from assay.records import Context, Item, Project, Turn
from assay.store.workspace import Workspace
from tests.conftest import LiveServer
from tests.fakes.rag_service import FakeRag

pytestmark = pytest.mark.browser

FERRY = "The night ferry leaves at 22:40 from pier 3."
OUTSIDE = "Ferries leave from pier 4, says a blog post outside the corpus."
LABEL = {"en": "outside the corpus", "de": "außerhalb des Korpus"}


def seed(ws: Workspace, project: Project) -> str:
    doc = ingest_bytes(ws, project, "ferry.md", FERRY.encode())
    placed = Context(chunk_id=None, doc_id=doc.id, start=0, end=len(FERRY), text=FERRY, rank=2)
    outside = Context(
        chunk_id=None, doc_id=None, start=None, end=None, text=OUTSIDE, rank=1,
        document_id="blog-7", outside_corpus=True,
    )  # fmt: skip
    turn = Turn(query="Where does the night ferry leave?", retrieved=[outside, placed])
    item = create_item(ws, project, Item(kind="conversation", turns=[turn]), status="accepted")

    def answer(body: dict[str, Any]) -> Any:
        return {"answer": "Pier 4.", "contexts": [{"doc_id": "blog-7", "text": OUTSIDE}, FERRY]}

    with FakeRag(answer) as service:
        created = create_experiment(
            ws, project, "ext", mode="rag",
            pipelines=[{"name": "mine", "kind": "external", "endpoint": service.url,
                        "retries": 0}],
            metrics=["retrieval_recall"],
        )  # fmt: skip
        assert run_experiment(ws, project, created.id).status == "done"
    return item.id


@pytest.mark.parametrize("language", ["en", "de"])
def test_both_pages_show_passages_outside_the_corpus(
    browser: Browser,
    ws: Workspace,
    project: Project,
    live_server: LiveServer,
    tmp_path: Path,
    language: str,
) -> None:
    item_id = seed(ws, project)
    out = Path(os.environ.get("UNANCHORED_SCREENSHOTS") or tmp_path)
    suffix = "" if language == "en" else "-de"
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale=language)
    page = context.new_page()
    page.goto(f"{live_server.url}/projects/test/conversations/{item_id}")
    cards = page.locator(".passage")
    expect(cards).to_have_count(2)
    first = cards.nth(0)
    expect(first.locator(".docname")).to_have_text("blog-7")
    expect(first.locator(".badge")).to_have_text(LABEL[language])
    expect(first.locator(".passage-text")).to_have_text(OUTSIDE)
    expect(first.locator("button.toggle")).to_have_count(0)
    expect(cards.nth(1).locator("button.toggle")).to_have_count(3)
    # only the passage in the corpus waits for a rating
    hint = {"en": "1 passage(s) not rated yet", "de": "1 Passage(n) noch nicht bewertet"}
    expect(page.locator("body")).to_contain_text(hint[language])
    page.evaluate("document.querySelector('.passage').scrollIntoView({block: 'center'})")
    page.screenshot(path=str(out / f"conversation-outside{suffix}.png"))

    page.goto(f"{live_server.url}/projects/test/experiments/ext/tasks/{item_id}::1")
    hits = page.locator(".exp-retrieved li")
    expect(hits).to_have_count(2)
    expect(hits.nth(0)).to_contain_text(LABEL[language])
    expect(hits.nth(0)).not_to_contain_text("None")
    expect(hits.nth(0).locator(".snippet")).to_have_text(OUTSIDE)
    expect(hits.nth(1)).not_to_contain_text(LABEL[language])
    hits.nth(0).scroll_into_view_if_needed()
    page.screenshot(path=str(out / f"experiment-outside{suffix}.png"))
    context.close()
