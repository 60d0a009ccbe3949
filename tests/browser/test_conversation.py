"""The conversation workbench in the real Chromium, on the demo project: three turns with
retrieval, relevance, a searched passage, regeneration into a draft that is taken, an edited
answer with its diff, enrichments, and a reload that finds everything intact. Then a person's
answer survives a failing generator, and a good draft waits beside it until taken."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from assay.corpus.ingest import ingest_bytes
from assay.demo import open_demo
from assay.formats import get_format
from assay.gold.items import get_item
from assay.gold.project_config import update_settings
from assay.records import Project
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from assay.transfer import export_bundle
from tests.conftest import LiveServer
from tests.fakes.openai_server import FakeOpenAI, Status, Stream

pytestmark = pytest.mark.browser

QUESTIONS = (
    "In which year was the tram company that became Kelmtal Mobil founded?",
    "What share of Kelmtal Mobil does the City of Kelmstadt own?",
    "How many employees does it have?",
)


@pytest.fixture
def demo(ws: Workspace) -> Project:
    return open_demo(ws)[0]


@pytest.fixture
def server(demo: Project, ws: Workspace) -> Iterator[LiveServer]:
    with LiveServer(ws) as live:  # started after the demo is in the workspace
        yield live


def turn(page: Page, index: int) -> object:
    return page.locator(f'.turn[data-turn="{index}"]')


def ask(page: Page, question: str, count: int) -> None:
    page.locator("#composer-q").fill(question)
    page.locator("#composer-q").press("Control+Enter")
    expect(page.locator("#turns .turn")).to_have_count(count)
    expect(page.locator("#stream-state")).to_have_text("Answer stored.")
    expect(page.locator(f"#t{count - 1}-answer")).not_to_have_value("")


def test_three_turn_conversation_survives_a_reload(
    page: Page, ws: Workspace, demo: Project, server: LiveServer, tmp_path: Path
) -> None:
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(server.url + "/projects/demo/conversations/new")
    expect(page.locator("#gen-label")).to_have_text("extractive, no LLM")
    ask(page, QUESTIONS[0], 1)
    expect(page).to_have_url(server.url + "/projects/demo/conversations/" + page.url.split("/")[-1])
    first = page.locator('.turn[data-turn="0"]')
    passages = first.locator(".passage")
    expect(passages.first).to_be_visible()
    assert passages.count() >= 3

    # relevance: a click on the first, keys on the second and third
    passages.nth(0).get_by_role("button", name="relevant", exact=True).click()
    expect(passages.nth(0).get_by_role("button", name="relevant", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    passages.nth(1).focus()
    page.keyboard.press("i")
    passages.nth(2).focus()
    page.keyboard.press("d")
    expect(passages.nth(1)).to_have_class("passage marked-irrelevant")
    expect(passages.nth(2)).to_have_class("passage marked-distracting")

    # search more: add a passage the retriever did not bring
    first.get_by_role("button", name="Search more for this turn").click()
    page.locator("#search-q").fill("Kelmstadt tram lines 1962 municipal")
    page.locator("#search-form").get_by_role("button", name="Search").click()
    hits = page.locator("#hits .hit")
    expect(hits.first).to_be_visible()
    # the texts as stored: a passage draws Markdown with its markup hidden, a hit shows it raw
    retrieved = {t.strip() for t in first.locator(".passage .passage-text").all_text_contents()}
    fresh = next(
        i
        for i in range(hits.count())
        if (hits.nth(i).locator(".hit-text").text_content() or "").strip() not in retrieved
    )
    hits.nth(fresh).get_by_role("button", name="Add as relevant").click()
    expect(first.locator(".passage", has_text="searched")).to_have_count(1)

    # regenerate from the relevant passages: a draft beside the answer, taken; then edit the
    # answer: the diff shows
    answer = page.locator("#t0-answer")
    before = answer.input_value()
    first.get_by_role("button", name="Regenerate").click()
    draft = page.locator("#t0-draft")
    expect(draft).to_be_visible()
    expect(page.locator("#stream-state")).to_have_text(
        "New draft ready beside the answer: use it or discard it."
    )
    expect(answer).to_have_value(before)
    generated = draft.inner_text()
    assert generated
    first.get_by_role("button", name="Use this answer").click()
    expect(answer).to_have_value(generated)
    expect(draft).to_have_count(0)
    answer.fill("Checked: " + generated)
    expect(first.locator(".diff ins")).to_have_text("Checked: ")
    expect(first.locator(".answer-view mark.copied").first).to_be_visible()
    expect(first.locator(".answer-view .support").first).to_be_visible()

    # enrichments
    first.locator('input[data-enrichment="answerability"][value="ANSWERABLE"]').check()
    first.locator('input[data-enrichment="Multi-Turn"][value="Follow-up"]').check()
    expect(first.locator(".enrich-hint")).to_be_hidden()

    ask(page, QUESTIONS[1], 2)
    ask(page, QUESTIONS[2], 3)
    expect(page.locator("#save-state")).to_have_text("All changes saved")

    item_id = page.url.split("/")[-1]
    stored = get_item(ws, demo, item_id)
    assert [t.query for t in stored.turns] == list(QUESTIONS)
    t0 = stored.turns[0]
    assert t0.answer == "Checked: " + generated and t0.original_answer == generated
    assert t0.enrichments == {"answerability": ["ANSWERABLE"], "Multi-Turn": ["Follow-up"]}
    assert sorted(e.origin for e in t0.evidence) == ["retrieved"] * 3 + ["searched"]
    assert {e.label for e in t0.evidence} == {"relevant", "irrelevant", "distracting"}

    page.reload()
    expect(page.locator("#turns .turn")).to_have_count(3)
    first = page.locator('.turn[data-turn="0"]')
    expect(page.locator("#t0-answer")).to_have_value("Checked: " + generated)
    expect(first.locator(".diff ins")).to_have_text("Checked: ")
    expect(first.locator(".passage.marked-relevant")).to_have_count(2)
    expect(first.locator(".passage.marked-irrelevant")).to_have_count(1)
    expect(
        first.locator('input[data-enrichment="answerability"][value="ANSWERABLE"]')
    ).to_be_checked()
    expect(page.locator("#restore-banner")).to_be_hidden()
    expect(page.locator("#findings")).to_contain_text("turn 2")

    # RAGAPHENE JSON out of the page, into a new project through the page, and back out: equal.
    page.goto(server.url + "/projects/demo/transfer")
    page.locator("#export").get_by_label("Format").select_option("ragaphene")
    # the conversation is still a draft; exports take accepted items unless told otherwise
    page.locator("#export").get_by_label("Draft").check()
    page.get_by_role("button", name="Start the export").click()
    link = page.locator("#export-download")
    expect(link).to_be_visible()
    with page.expect_download() as info:
        link.click()
    exported = tmp_path / "conversation.json"
    info.value.save_as(exported)
    create_project(ws, "copy")
    page.goto(server.url + "/projects/copy/transfer")
    page.locator("#import-file").set_input_files(str(exported))
    page.locator("#import-format").select_option("ragaphene")
    page.get_by_role("button", name="Start the import").click()
    expect(page.locator("#import-report")).to_contain_text("Imported into “copy”")
    again = tmp_path / "again.json"
    get_format("ragaphene").write(export_bundle(ws, get_project(ws, "copy")), again)
    assert json.loads(again.read_text()) == json.loads(exported.read_text())


def test_a_failed_regenerate_keeps_the_answer_and_a_good_draft_waits_to_be_taken(
    page: Page, ws: Workspace, project: Project
) -> None:
    ingest_bytes(ws, project, "ferry.md", b"The night ferry leaves at 22:40 from pier 3 every day.")
    mine = "My own answer: 22:40, pier 3."
    with FakeOpenAI([Status(500, "the model crashed")]) as fake, LiveServer(ws) as server:
        page.goto(server.url + "/projects/test/conversations/new")
        page.locator("#composer-q").fill("When does the night ferry leave?")
        page.locator("#composer-q").press("Control+Enter")
        expect(page.locator("#stream-state")).to_have_text("Answer stored.")
        first = page.locator('.turn[data-turn="0"]')
        first.locator(".passage").first.get_by_role("button", name="relevant", exact=True).click()
        answer = page.locator("#t0-answer")
        answer.fill(mine)
        expect(page.locator("#save-state")).to_have_text("All changes saved")
        url = page.url

        settings = {"kind": "openai", "base_url": fake.url, "model": "m", "retries": 0}
        update_settings(ws, project, {"generator": settings})
        first.get_by_role("button", name="Regenerate").click()
        error = page.locator("#stream-error")
        expect(error).to_be_visible()
        expect(error).to_contain_text("the model crashed")
        expect(error).to_contain_text("Nothing was changed")
        expect(answer).to_have_value(mine)
        page.reload()
        expect(page.locator("#t0-answer")).to_have_value(mine)
        assert page.url == url

        fake.reset([Stream(pieces=("The night ferry ", "leaves at 22:40 [1]."))])
        first.get_by_role("button", name="Regenerate").click()
        draft = page.locator("#t0-draft")
        expect(draft).to_have_text("The night ferry leaves at 22:40 [1].")
        expect(first.locator(".draft-box")).to_contain_text("Generated by m")
        expect(page.locator("#t0-answer")).to_have_value(mine)
        first.get_by_role("button", name="Use this answer").click()
        expect(page.locator("#t0-answer")).to_have_value("The night ferry leaves at 22:40 [1].")
        first.get_by_role("button", name="Undo").click()  # changed my mind: mine comes back
        expect(page.locator("#t0-answer")).to_have_value(mine)
        expect(draft).to_be_visible()
        expect(page.locator("#save-state")).to_have_text("All changes saved")
        first.get_by_role("button", name="Use this answer").click()
        expect(page.locator("#t0-answer")).to_have_value("The night ferry leaves at 22:40 [1].")
        page.reload()
        expect(page.locator("#t0-answer")).to_have_value("The night ferry leaves at 22:40 [1].")
        expect(page.locator("#t0-draft")).to_have_count(0)

    item = get_item(ws, project, url.split("/")[-1])
    assert item.turns[0].answer == item.turns[0].original_answer
    assert item.turns[0].generation["model"] == "m"


def test_markdown_passages_show_formatted_with_the_text_kept(
    page: Page, demo: Project, server: LiveServer
) -> None:
    """A retrieved passage of a .md document shows headings and emphasis, its markup hidden
    but still in the text (so selections keep the document's offsets)."""
    page.goto(server.url + "/projects/demo/conversations/new")
    ask(page, "When was the tram company founded?", 1)
    markdown = page.locator(".turn .passage", has=page.locator(".docname", has_text=".md"))
    expect(markdown.first).to_be_visible()
    text = markdown.first.locator(".passage-text")
    raw, shown = text.text_content() or "", text.inner_text()
    assert "# " in raw or "**" in raw, raw
    assert "# " not in shown and "**" not in shown, shown
    expect(text.locator(".md-hide").first).to_be_hidden()
    expect(text.locator(".md-h, .md-b").first).to_be_visible()
    item_id = page.url.split("/")[-1]
    stored = page.request.get(f"{server.url}/api/projects/demo/items/{item_id}").json()
    assert raw in [c["text"] for c in stored["item"]["turns"][0]["retrieved"]]
