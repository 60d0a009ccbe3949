"""LLM suggestions in the real Chromium, with the fake OpenAI server as the project's
generator: in the item editor, suggestions for the search results are accepted (two) and
rejected (one) and the evidence and states are checked in the store; in the conversation
workbench a drafted standalone rewrite is edited and accepted, and a turn's passages get
labels accepted all at once. With the offline generator the page says an LLM is needed."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from assay.gold.items import create_item, get_item
from assay.gold.suggestions import list_suggestions
from assay.records import Item, Project, Turn
from assay.store.workspace import Workspace
from tests.conftest import LiveServer
from tests.fakes.openai_server import Computed, FakeOpenAI, Reply
from tests.suggestion_sample import QUESTION, add_documents, judge, rewrite, use_fake

pytestmark = pytest.mark.browser


def answer(body: dict[str, Any]) -> str:
    """Judgments or a rewrite, whichever the prompt asks for."""
    asks_rewrite = "standalone" in body["messages"][0]["content"]
    return rewrite(body) if asks_rewrite else judge(body)


FAKE = Computed(answer, model="fake-judge-1")


def card(page: Page, doc: str) -> Any:
    return page.locator("#sg-panel .sg-card", has=page.locator(".docname", has_text=doc))


def test_item_editor_suggestions_accept_two_reject_one(
    page: Page, ws: Workspace, project: Project
) -> None:
    ids = add_documents(ws, project)
    with LiveServer(ws) as server:
        page.goto(server.url + "/projects/test/items/new")
        expect(page.locator("#sg-needs")).to_be_visible()  # offline: suggestions need an LLM
        expect(page.locator("#sg-ask")).to_be_disabled()

    crashes: list[str] = []
    page.on("pageerror", lambda error: crashes.append(str(error)))
    with FakeOpenAI([Reply("Passage 1 looks relevant to me.")]) as fake, LiveServer(ws) as server:
        use_fake(ws, project, fake)
        page.goto(server.url + "/projects/test/items/new")
        expect(page.locator("#sg-needs")).to_be_hidden()
        page.get_by_label("Question", exact=True).fill(QUESTION)
        page.get_by_role("button", name="Search", exact=True).click()
        expect(page.locator("#hits .hit")).to_have_count(4)
        ask = page.get_by_role("button", name="Suggest labels for these results")
        ask.click()  # the model answers prose: a clear error, nothing stored
        note = page.locator("#sg-panel .sg-note")
        expect(note).to_contain_text("No suggestions were stored")
        expect(note).to_contain_text("not JSON")
        expect(page.locator("#sg-panel .sg-card")).to_have_count(0)
        fake.reset([FAKE])
        ask.click()
        expect(page.locator("#sg-panel .sg-card")).to_have_count(4)
        expect(page.locator("#sg-panel .sg-note")).to_contain_text("4 new suggestions")
        ferry = card(page, "ferry.md")
        expect(ferry).to_contain_text("suggests relevant")
        expect(ferry).to_contain_text("Fake reason")
        expect(ferry).to_contain_text("fake-judge-1")
        assert fake.count == 1  # since the reset

        ferry.get_by_role("button", name="Accept").click()
        expect(page.locator("#ev-list .ev")).to_have_count(1)
        card(page, "bikes.md").get_by_role("button", name="Accept").click()
        expect(page.locator("#ev-list .ev")).to_have_count(2)
        card(page, "cake.md").get_by_role("button", name="Reject").click()
        expect(page.locator("#sg-panel .sg-card")).to_have_count(1)
        expect(page.locator("#sg-panel .sg-decided")).to_have_text(
            "So far 2 accepted and 1 rejected."
        )
        expect(page.locator("#ev-list .ev.ev-relevant")).to_contain_text("22:40")
        # the editor keeps working on the version the accepts made: an edit saves cleanly
        page.locator("#f-answer").fill("At 22:40 from pier 3.")
        expect(page.locator("#save-state")).to_have_text("Saved")
        item_id = page.url.rstrip("/").split("/")[-1]
        page.reload()
        expect(page.locator("#sg-panel .sg-card")).to_have_count(1)
        expect(card(page, "winter.txt")).to_be_visible()

    assert crashes == []
    item = get_item(ws, project, item_id)
    evidence = item.turns[0].evidence
    assert [(e.doc_id, e.label, e.origin, e.anchor) for e in evidence] == [
        (ids["ferry.md"], "relevant", "llm-suggestion", "ok"),
        (ids["bikes.md"], "distracting", "llm-suggestion", "ok"),
    ]
    assert item.turns[0].answer == "At 22:40 from pier 3."
    states = {s.doc_id: s.state for s in list_suggestions(ws, project, item_id)}
    assert states == {
        ids["ferry.md"]: "accepted",
        ids["bikes.md"]: "accepted",
        ids["cake.md"]: "rejected",
        ids["winter.txt"]: "pending",
    }
    decided = [s for s in list_suggestions(ws, project, item_id) if s.state != "pending"]
    assert all(s.decided_by and s.decided_at and s.model == "fake-judge-1" for s in decided)


def test_conversation_rewrite_is_edited_and_accepted(
    page: Page, ws: Workspace, project: Project
) -> None:
    add_documents(ws, project)
    turns = [Turn(query=QUESTION, answer="At 22:40."), Turn(query="And in winter?")]
    item = create_item(ws, project, Item(kind="conversation", turns=turns))
    edited = "When does the night ferry leave from December on?"
    with FakeOpenAI([FAKE]) as fake, LiveServer(ws) as server:
        use_fake(ws, project, fake)
        page.goto(server.url + f"/projects/test/conversations/{item.id}")
        second = page.locator('.turn[data-turn="1"]')
        second.get_by_role("button", name="Draft a standalone rewrite (LLM)").click()
        suggested = second.locator(".sg-rewrite-text")
        expect(suggested).to_have_value("When does the night ferry leave in winter?")
        expect(second.locator(".sg-rewrite")).to_contain_text("fake-judge-1")
        suggested.fill(edited)
        second.get_by_role("button", name="Use this rewrite").click()
        expect(page.locator("#t1-rewrite")).to_have_value(edited)
        expect(page.locator('.turn[data-turn="1"] .sg-rewrite')).to_have_count(0)

        # labels for the first turn's passages, all accepted at once
        first = page.locator('.turn[data-turn="0"]')
        first.get_by_role("button", name="Suggest labels (LLM)").click()
        expect(first.locator(".sg-card")).to_have_count(4)
        first.get_by_role("button", name="Accept all (4)").click()
        expect(first.locator(".sg-card")).to_have_count(0)
        expect(first.locator(".sg-decided")).to_have_text("So far 4 accepted and 0 rejected.")
        expect(first.locator(".passage")).to_have_count(4)
        expect(page.locator("#save-state")).not_to_have_text("Conflict")
        page.reload()
        expect(page.locator("#t1-rewrite")).to_have_value(edited)
        assert fake.count == 2

    stored = get_item(ws, project, item.id)
    assert stored.turns[1].rewrite == edited
    labels = sorted(e.label for e in stored.turns[0].evidence)
    assert labels == ["distracting", "distracting", "irrelevant", "relevant"]
    assert {e.origin for e in stored.turns[0].evidence} == {"llm-suggestion"}
    [taken] = list_suggestions(ws, project, item.id, kind="rewrite")
    assert taken.state == "accepted" and taken.final_text == edited
