"""An annotator's day with conversations, in the real Chromium: a conversation in the items
list is marked as one and opens the workbench; answerability takes one value; j/k walk the
passages across turns and pass over folded ones; the conversation's own generator is chosen
while chatting and a regenerated answer, once taken, can be undone; one click exports this
conversation as RAGAPHENE JSON after the checklist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from assay.corpus.ingest import ingest_bytes
from assay.formats import get_format
from assay.gold.items import create_item, get_item
from assay.gold.project_config import update_settings
from assay.records import Item, Project, Turn
from assay.store.workspace import Workspace
from tests.conftest import LiveServer
from tests.fakes.openai_server import FakeOpenAI, Stream

pytestmark = pytest.mark.browser

DOCS = {
    "ferry.md": "The night ferry leaves at 22:40 from pier 3 every day. Tickets cost 4.50 euros.",
    "tram.md": "Tram line 5 runs every 12 minutes between the station and the harbour.",
    "bus.md": "The harbour bus stops at pier 3 and at the station; it runs until midnight.",
}


@pytest.fixture
def corpus(ws: Workspace, project: Project) -> Project:
    for name, text in DOCS.items():
        ingest_bytes(ws, project, name, text.encode())
    return project


def ask(page: Page, question: str, count: int) -> None:
    page.locator("#composer-q").fill(question)
    page.locator("#composer-q").press("Control+Enter")
    expect(page.locator("#turns .turn")).to_have_count(count)
    expect(page.locator("#stream-state")).to_have_text("Answer stored.")


def test_a_conversation_in_the_items_list_opens_the_workbench(
    page: Page, ws: Workspace, corpus: Project
) -> None:
    turns = [Turn(query="When does the night ferry leave?"), Turn(query="And the tram?")]
    conv = create_item(ws, corpus, Item(kind="conversation", turns=turns))
    create_item(ws, corpus, Item(turns=[Turn(query="How much is a ferry ticket?")]))
    with LiveServer(ws) as server:
        page.goto(server.url + "/projects/test")
        stats = page.get_by_role("list", name="Counts")
        expect(stats).to_contain_text("1 single-turn items")
        expect(stats).to_contain_text("1 conversations")

        page.goto(server.url + "/projects/test/items")
        row = page.locator("table.items tr", has_text="When does the night ferry leave?")
        expect(row.locator(".kind-conversation")).to_have_text("Conversation · 2 turn(s)")
        single = page.locator("table.items tr", has_text="How much is a ferry ticket?")
        expect(single.locator(".kind-conversation")).to_have_count(0)
        row.get_by_role("link").click()
        expect(page).to_have_url(server.url + f"/projects/test/conversations/{conv.id}")
        expect(page.locator("#turns .turn")).to_have_count(2)
        expect(page.locator("#t1-question")).to_have_value("And the tram?")

        # the single-turn editor's address of a conversation leads to the workbench too
        page.goto(server.url + f"/projects/test/items/{conv.id}")
        expect(page).to_have_url(server.url + f"/projects/test/conversations/{conv.id}")
        page.goto(server.url + "/projects/test/items?kind=conversation")
        expect(page.locator("table.items tbody tr")).to_have_count(1)


def test_answerability_holds_one_value(page: Page, ws: Workspace, corpus: Project) -> None:
    with LiveServer(ws) as server:
        page.goto(server.url + "/projects/test/conversations/new")
        ask(page, "When does the night ferry leave?", 1)
        first = page.locator('.turn[data-turn="0"]')
        answerable = first.locator('input[data-enrichment="answerability"][value="ANSWERABLE"]')
        partial = first.locator('input[data-enrichment="answerability"][value="PARTIAL"]')
        expect(answerable).to_have_attribute("type", "radio")
        answerable.check()
        partial.check()
        expect(answerable).not_to_be_checked()
        # a multi-choice enrichment keeps several
        first.locator('input[data-enrichment="Question Type"][value="Factoid"]').check()
        first.locator('input[data-enrichment="Question Type"][value="How-To"]').check()
        expect(page.locator("#save-state")).to_have_text("All changes saved")
        item_id = page.url.split("/")[-1]
        stored = get_item(ws, corpus, item_id)
        assert stored.turns[0].enrichments["answerability"] == ["PARTIAL"]
        assert stored.turns[0].enrichments["Question Type"] == ["Factoid", "How-To"]

        # "not set" clears it
        first.get_by_label("not set").check()
        expect(page.locator("#save-state")).to_have_text("All changes saved")
        assert "answerability" not in get_item(ws, corpus, item_id).turns[0].enrichments

        # the JSON API refuses two values with the reason, and stores nothing
        body = page.evaluate(
            """async ([url, version]) => {
                const data = await (await fetch(url)).json();
                const input = data.input;
                input.turns[0].enrichments = { answerability: ["ANSWERABLE", "PARTIAL"] };
                const token = document.querySelector('meta[name="csrf-token"]').content;
                const r = await fetch(url, { method: "PUT", headers: {
                    "Content-Type": "application/json", "X-CSRF-Token": token },
                    body: JSON.stringify({ version: data.item.version, item: input }) });
                return [r.status, await r.json()];
            }""",
            [f"{server.url}/api/projects/test/conversations/{item_id}", 0],
        )
        assert body[0] == 422
        assert "'answerability' takes one value" in body[1]["detail"]


def test_j_and_k_walk_the_passages_across_turns(page: Page, ws: Workspace, corpus: Project) -> None:
    with LiveServer(ws) as server:
        page.goto(server.url + "/projects/test/conversations/new")
        ask(page, "When does the night ferry leave the harbour pier?", 1)
        ask(page, "How often does the tram run to the harbour?", 2)
        first = page.locator('.turn[data-turn="0"] .passage')
        second = page.locator('.turn[data-turn="1"] .passage')
        expect(second.first).to_be_visible()
        n = first.count()
        assert n >= 2
        # no passage list or passage text scrolls inside the page
        for selector in (".passages", ".passage-text"):
            expect(page.locator(selector).first).to_have_css("overflow-y", "visible")
        first.nth(0).focus()
        page.keyboard.press("j")
        expect(first.nth(1)).to_be_focused()
        page.keyboard.press("k")
        expect(first.nth(0)).to_be_focused()
        first.nth(n - 1).focus()
        page.keyboard.press("j")  # on into the next turn
        expect(second.nth(0)).to_be_focused()
        expect(page.locator("#search-turn")).to_have_text("(turn 2)")
        page.keyboard.press("k")
        expect(first.nth(n - 1)).to_be_focused()

        # a folded turn is passed over; the turn list unfolds and jumps to it
        page.locator('.turn[data-turn="0"] .turn-toggle').click()
        expect(page.locator('.turn[data-turn="0"] .turn-body')).to_be_hidden()
        expect(page.locator('.turn[data-turn="0"] .turn-summary')).to_have_text(
            "When does the night ferry leave the harbour pier?"
        )
        second.nth(0).focus()
        page.keyboard.press("k")
        expect(second.nth(0)).to_be_focused()
        nav = page.get_by_role("navigation", name="Turns of this conversation")
        nav.get_by_role("link", name="When does the night ferry leave the harbour pier?").click()
        expect(page.locator('.turn[data-turn="0"] .turn-body')).to_be_visible()
        expect(page.locator('.turn[data-turn="0"] .turn-toggle')).to_be_focused()


def test_the_generator_is_chosen_while_chatting_and_a_taken_draft_can_be_undone(
    page: Page, ws: Workspace, corpus: Project
) -> None:
    with FakeOpenAI([Stream(pieces=("Pier 3, ", "at 22:40."))]) as fake, LiveServer(ws) as server:
        update_settings(
            ws,
            corpus,
            {"generator": {"kind": "openai", "base_url": fake.url, "model": "m", "retries": 0}},
        )
        page.goto(server.url + "/projects/test/conversations/new")
        expect(page.locator("#gen-label")).to_have_text("model: m")
        # this conversation answers without the LLM
        page.locator("#gen-label").click()
        expect(page.locator("#set-gen-kind")).to_be_focused()
        page.locator("#set-gen-kind").select_option("offline")
        expect(page.locator("#gen-label")).to_have_text("extractive, no LLM")
        ask(page, "When does the night ferry leave?", 1)
        assert fake.count == 0
        first = page.locator('.turn[data-turn="0"]')
        answer = page.locator("#t0-answer")
        mine = "The night ferry leaves at 22:40 from pier 3."
        answer.fill(mine)
        first.locator(".passage").first.get_by_role("button", name="relevant", exact=True).click()

        # back to the project's LLM, with another model of its endpoint
        page.locator("#set-gen-kind").select_option("openai")
        page.locator("#set-gen-model").fill("m2")
        page.locator("#set-gen-model").press("Tab")
        expect(page.locator("#gen-label")).to_have_text("model: m2")
        expect(page.locator("#save-state")).to_have_text("All changes saved")
        first.get_by_role("button", name="Regenerate").click()
        draft = page.locator("#t0-draft")
        expect(draft).to_have_text("Pier 3, at 22:40.")
        assert fake.requests[-1]["model"] == "m2"
        first.get_by_role("button", name="Use this answer").click()
        expect(answer).to_have_value("Pier 3, at 22:40.")
        first.get_by_role("button", name="Undo").click()
        expect(answer).to_have_value(mine)
        expect(page.locator("#save-state")).to_have_text("All changes saved")
        page.reload()
        expect(page.locator("#t0-answer")).to_have_value(mine)
        expect(page.locator("#gen-label")).to_have_text("model: m2")
        stored = get_item(ws, corpus, page.url.split("/")[-1])
        assert stored.extra["generator"] == {"kind": "openai", "model": "m2"}
        assert stored.turns[0].answer == mine


def test_one_click_exports_this_conversation_as_ragaphene_json(
    page: Page, ws: Workspace, corpus: Project, tmp_path: Path
) -> None:
    with LiveServer(ws) as server:
        page.goto(server.url + "/projects/test/conversations/new")
        ask(page, "When does the night ferry leave?", 1)
        ask(page, "What does a ticket cost?", 2)
        first = page.locator('.turn[data-turn="0"]')
        first.locator(".passage").first.get_by_role("button", name="relevant", exact=True).click()
        findings = page.locator("#findings")
        expect(findings).to_contain_text("turn 1")  # the checks show before the download
        page.locator("#export-button").click()  # not yet: the checklist is not ticked
        expect(page.locator("[data-check]").first).to_be_focused()
        for box in page.locator("[data-check]").all():
            box.check()
        expect(page.locator("#export-help")).to_have_text("Ready to export.")
        with page.expect_download() as info:
            page.locator("#export-button").click()
        download = info.value
        assert download.suggested_filename.endswith(".ragaphene.json")
        path = tmp_path / download.suggested_filename
        download.save_as(path)

    data = json.loads(path.read_text())
    assert isinstance(data, dict)  # one conversation, not a list
    assert data["schema_version"] == 2
    speakers = [m["speaker"] for m in data["messages"]]
    assert speakers == ["user", "agent", "user", "agent"]
    assert data["messages"][0]["text"] == "When does the night ferry leave?"
    votes = [c.get("feedback", {}).get("relevant") for c in data["messages"][1]["contexts"]]
    assert any(v and next(iter(v.values()))["value"] == "yes" for v in votes)
    bundle = get_format("ragaphene").read(path)
    assert [len(item.turns) for item in bundle.items] == [2]
