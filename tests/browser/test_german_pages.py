"""The pages whose scripts draw most of what they show (the item editor, the review bar, the
conversation workbench, import and export, judging), read in German in the real Chromium
after their scripts ran: no English interface word (the same list as tests/test_web_german.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page

from assay import open_workspace
from assay.demo.showcase import Showcase, build_showcase
from assay.gold.taxonomy import DEFAULT_ENRICHMENTS
from assay.store.workspace import Workspace
from tests.conftest import LiveServer
from tests.test_web_german import ENGLISH, chrome_texts

pytestmark = pytest.mark.browser

VOCABULARY = {name for name in DEFAULT_ENRICHMENTS} | {
    value for values in DEFAULT_ENRICHMENTS.values() for value in values
}
"""RAGAPHENE's enrichment vocabulary: project data, kept in its own words in every language."""


@pytest.fixture
def showcase(tmp_path: Path) -> Iterator[tuple[Workspace, Showcase]]:
    ws = open_workspace(tmp_path / "ws")
    yield ws, build_showcase(ws, tmp_path)
    ws.close()


@pytest.mark.slow
def test_script_drawn_pages_show_no_english_in_german(
    page: Page, showcase: tuple[Workspace, Showcase]
) -> None:
    ws, show = showcase
    home = f"/projects/{show.project.name}"
    paths = (
        f"{home}/items/{show.item_id}",
        f"{home}/items/{show.submitted_id}",  # with the review bar
        f"{home}/items/new",
        f"{home}/conversations/{show.conversation_id}",
        f"{home}/conversations/new",
        f"{home}/transfer",
        f"{home}/experiments",
        f"/projects/{show.judging_project}/judging/citations?topic=night-ferry&run=alpha",
    )
    english: dict[str, list[str]] = {}
    with LiveServer(ws) as server:
        page.goto(server.url + "/language/de?next=/")
        for path in paths:
            page.goto(server.url + path)
            page.wait_for_load_state("networkidle")
            page.locator("html[lang=de]").wait_for()
            found = [
                text
                for text in chrome_texts(page.content())
                if text not in VOCABULARY and ENGLISH.search(text)
            ]
            if found:
                english[path] = found
    assert english == {}
