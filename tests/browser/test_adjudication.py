"""The agreement page and the adjudication view in the real Chromium: two annotators'
versions merged field by field and passage by passage into the gold, under the CSP."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from assay.gold.items import get_item, save_item
from assay.store.workspace import Workspace
from tests.browser.test_pages import RECORD_VIOLATIONS
from tests.conftest import LiveServer
from tests.test_review_agreement import SENTENCES
from tests.test_web_agreement import PAYLOAD, overlap

pytestmark = pytest.mark.browser


def test_the_adjudication_view_merges_two_versions(page: Page, ws: Workspace) -> None:
    # ada: fact_single, sentence 0, answer PAYLOAD; bob: summary, sentences 0 and 1, "Hotels."
    project, original, copies = overlap(ws)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    page.add_init_script(RECORD_VIOLATIONS)
    with LiveServer(ws) as server:
        page.goto(server.url + "/projects/p/agreement")
        expect(page.locator("#table-pairs")).to_contain_text("ada / bob")
        page.get_by_role("link", name="Awaiting adjudication: 1").click()
        page.get_by_role("link", name="What is refunded?").click()
        expect(page.get_by_role("heading", name="Adjudicate")).to_be_visible()

        fields = page.locator("table.adj-fields tbody tr")
        expect(fields.nth(0)).not_to_have_class(re.compile("differs"))  # the same question
        expect(fields.nth(1)).to_have_class(re.compile("differs"))  # query type
        expect(fields.nth(2)).to_have_class(re.compile("differs"))  # answer
        expect(page.locator("table.adj-fields")).to_contain_text(PAYLOAD)  # shown as text
        assert page.evaluate("window.hacked") is None

        page.get_by_label("Query type: bob").check()
        page.get_by_label("Answer: ada").check()
        passages = page.locator("table.adj-passages tbody tr")
        expect(passages).to_have_count(2)
        expect(passages.nth(0)).not_to_have_class(re.compile("differs"))  # both marked it
        expect(passages.nth(1)).to_have_class(re.compile("differs"))  # bob only
        passages.nth(1).get_by_label("bob:").check()
        passages.nth(1).get_by_label("Group in the gold").fill("3")
        page.get_by_role("button", name="Save as gold and accept").click()
        expect(page.locator("#adj-state")).to_have_text("Saved as gold and accepted.")
        expect(page.locator("#gold-status")).to_have_text("accepted")

        gold = get_item(ws, project, original)
        [turn] = gold.turns
        assert (gold.status, turn.query_type, turn.answer) == ("accepted", "summary", PAYLOAD)
        assert [e.text for e in turn.evidence] == SENTENCES[:2]
        assert turn.evidence[1].group == 3

        # someone else changes the gold meanwhile: saving again is a clear conflict
        gold.turns[0].answer = "changed meanwhile"
        changed = save_item(ws, project, original, gold, gold.version)
        page.get_by_role("button", name="Save as gold and accept").click()
        expect(page.locator("#adj-conflict")).to_contain_text("changed by someone else")
        assert get_item(ws, project, original).version == changed.version

        page.goto(server.url + "/language/de?next=/projects/p/agreement")
        expect(page.get_by_role("heading", name="Übereinstimmung")).to_be_visible()
        expect(page.locator("#table-gold")).to_contain_text("ada")
        problems.extend(page.evaluate("window.__cspViolations"))
    assert problems == []
    assert copies
