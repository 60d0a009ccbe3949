"""The item editor for an annotator's day, in the real Chromium: focus and search on a new
item, submit variants and list navigation, Ctrl+S, sub-spans from the document view (a
selection that strays is clipped, one across passages refused), span badges on hits, a
blank submit pointing at its field, and deleting with a confirmation."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from assay.corpus.ingest import ingest_bytes
from assay.errors import NotFound
from assay.gold.items import create_item, get_item, parse_item
from assay.records import Project
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

DOCS = {
    "night-ferry.md": "# Night ferry\n\nThe **night ferry** leaves at 22:40 from pier 3.\n",
    "winter.txt": "Winter timetable: from December the night ferry leaves at 21:15.\n",
    "bikes.md": "Bikes ride free on every ferry, the night ferry too.\n",
}


def corpus(ws: Workspace, project: Project) -> dict[str, str]:
    return {name: ingest_bytes(ws, project, name, text.encode()).id for name, text in DOCS.items()}


def complete(ws: Workspace, project: Project, doc_id: str, query: str, text: str = "") -> str:
    evidence = [{"doc_id": doc_id, "text": text or "22:40", "label": "relevant"}]
    data = {"turns": [{"query": query, "answer": text or "22:40", "evidence": evidence}]}
    return create_item(ws, project, parse_item(data, "test item")).id


def select_between(page: Page, start: tuple[str, str], end: tuple[str, str]) -> None:
    """Select from the start of text ``start[1]`` inside ``start[0]`` to the end of text
    ``end[1]`` inside ``end[0]``, as a mouse drag would."""
    page.evaluate(
        """([start, end]) => {
            const find = ([selector, needle]) => {
                const root = document.querySelector(selector);
                const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
                let text;
                while ((text = walker.nextNode())) {
                    const at = text.data.indexOf(needle);
                    if (at >= 0) return [text, at, at + needle.length];
                }
                throw new Error("text not found: " + needle);
            };
            const [a, aAt] = find(start);
            const [b, , bEnd] = find(end);
            const range = document.createRange();
            range.setStart(a, aAt);
            range.setEnd(b, bEnd);
            const selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
        }""",
        [list(start), list(end)],
    )


def editor_ready(page: Page) -> None:
    expect(page.locator("#save-state")).to_have_class(re.compile(r"\b(idle|saved)\b"))


def test_a_new_item_starts_in_the_question_and_searches_by_itself(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    corpus(ws, project)
    page.goto(live_server.url + "/projects/test/items/new")
    question = page.get_by_label("Question", exact=True)
    expect(question).to_be_focused()
    page.keyboard.type("When does the night ferry leave?")
    # no click on Search: the hits come after a pause in typing
    expect(page.locator("#hits .hit")).to_have_count(3)
    # the query's words are highlighted, its stop words are not
    marks = page.locator("#hits .hit .passage .q").all_inner_texts()
    assert {m.lower() for m in marks} >= {"night", "ferry", "leaves"}
    assert not {m.lower() for m in marks} & {"the", "when", "does"}
    # Markdown shows as formatting; the markup stays in the text (offsets keep)
    ferry = page.locator("#hits .hit", has_text="night-ferry.md")
    expect(ferry.locator(".md-b").first).to_be_visible()
    assert "".join(ferry.locator(".md-b").all_inner_texts()) == "night ferry"
    expect(ferry.locator(".md-hide").first).to_be_hidden()


def test_submit_and_next_previous_and_count(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    ids = corpus(ws, project)
    items = [complete(ws, project, ids["night-ferry.md"], f"Ferry question {n}") for n in range(3)]
    page.goto(live_server.url + "/projects/test/items?sort=created")
    page.get_by_role("link", name="Ferry question 0").click()
    editor_ready(page)
    expect(page.locator("#list-count")).to_have_text("1 of 3")
    expect(page.get_by_role("button", name="Submit and next in this list")).to_be_visible()
    page.get_by_role("button", name="Submit and next in this list").click()
    expect(page).to_have_url(re.compile(re.escape(items[1])))
    expect(page.locator("#list-count")).to_have_text("2 of 3")
    assert get_item(ws, project, items[0]).status == "submitted"
    # Previous goes back; Ctrl+Enter is "submit and next" here too
    editor_ready(page)
    page.get_by_role("link", name="‹ Previous").click()
    expect(page).to_have_url(re.compile(re.escape(items[0])))
    editor_ready(page)
    page.get_by_role("link", name="Next ›").click()
    expect(page).to_have_url(re.compile(re.escape(items[1])))
    editor_ready(page)
    page.keyboard.press("Control+Enter")
    expect(page).to_have_url(re.compile(re.escape(items[2])))
    assert get_item(ws, project, items[1]).status == "submitted"
    # at the end of the list there is no next: Ctrl+Enter submits and opens a new item
    expect(page.get_by_role("button", name="Submit and new")).to_be_visible()
    editor_ready(page)
    page.keyboard.press("Control+Enter")
    expect(page).to_have_url(re.compile(r"/items/new$"))
    assert get_item(ws, project, items[2]).status == "submitted"


def test_ctrl_s_saves_and_stays(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    ids = corpus(ws, project)
    item = complete(ws, project, ids["winter.txt"], "Winter ferry?", "21:15")
    other = complete(ws, project, ids["winter.txt"], "Another?", "21:15")
    page.goto(live_server.url + "/projects/test/items?sort=created")
    page.get_by_role("link", name="Winter ferry?").click()
    editor_ready(page)
    page.evaluate("window.__stay = 1")
    page.get_by_label("Notes").fill("checked the timetable")
    page.keyboard.press("Control+s")
    expect(page.locator("#save-state")).to_have_text("Saved")
    assert get_item(ws, project, item).notes == "checked the timetable"
    assert page.evaluate("window.__stay") == 1 and item in page.url and other not in page.url
    assert get_item(ws, project, item).status == "draft"


def test_sub_spans_from_the_document_view_are_clipped_or_refused(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    ids = corpus(ws, project)
    page.goto(live_server.url + "/projects/test/items/new")
    page.keyboard.type("night ferry winter")
    expect(page.locator("#hits .hit")).to_have_count(3)

    # a selection across two hits is refused, and nothing is marked
    page.locator("#hits .hit").first.focus()
    first, second = "#hits .hit:nth-child(1) .passage", "#hits .hit:nth-child(2) .passage"
    select_between(page, (first, ""), (second, ""))
    page.keyboard.press("r")
    expect(page.locator("#toast")).to_contain_text("several passages")
    expect(page.locator("#ev-list .ev")).to_have_count(0)

    # in the document view: a drag from the text up into the panel's heading is clipped
    page.locator("#hits .hit", has_text="winter.txt").get_by_role(
        "button", name="Open the document"
    ).click()
    expect(page.locator("#doc-panel")).to_be_visible()
    select_between(page, ("#doc-title", "winter"), ("#doc-text", "Winter timetable"))
    page.get_by_role("button", name="Mark the selection relevant").click()
    expect(page.locator("#toast")).to_contain_text("went past the passage")
    # a clean sub-span inside the text
    select_between(page, ("#doc-text", "21:15"), ("#doc-text", "21:15"))
    page.get_by_role("button", name="Mark the selection distracting").click()
    expect(page.locator("#ev-list .ev")).to_have_count(2)
    # the marked spans show in the document view
    expect(page.locator("#doc-text .ev-span.span-relevant")).to_have_text("Winter timetable")
    expect(page.locator("#doc-text .ev-span.span-distracting")).to_have_text("21:15")
    page.get_by_role("button", name="Close", exact=True).click()
    expect(page.locator("#save-state")).to_have_text("Saved")
    item_id = page.url.rstrip("/").split("/")[-1]
    stored = get_item(ws, project, item_id).turns[0].evidence
    assert {(e.doc_id, e.text, e.label) for e in stored} == {
        (ids["winter.txt"], "Winter timetable", "relevant"),
        (ids["winter.txt"], "21:15", "distracting"),
    }
    assert all(e.anchor == "ok" for e in stored)


def test_hits_show_which_spans_are_marked(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    ids = corpus(ws, project)
    evidence: list[dict[str, Any]] = [
        {"doc_id": ids["night-ferry.md"], "text": "22:40", "label": "relevant"},
        {"doc_id": ids["night-ferry.md"], "text": "pier 3", "label": "distracting"},
    ]
    data = {"turns": [{"query": "night ferry pier", "evidence": evidence}]}
    item = create_item(ws, project, parse_item(data, "test item"))
    page.goto(f"{live_server.url}/projects/test/items/{item.id}")
    hit = page.locator("#hits .hit", has_text="night-ferry.md")
    expect(hit.locator(".span-badges li")).to_have_count(2)
    expect(hit.locator(".span-badges li").nth(0)).to_have_text("relevant: 22:40")
    expect(hit.locator(".span-badges li").nth(1)).to_have_text("distracting: pier 3")
    expect(hit.locator(".passage .span-relevant")).to_have_text("22:40")
    # the evidence card: one label control, the passage with its context, the span marked
    card = page.locator("#ev-list .ev").first
    expect(card.locator("select")).to_have_count(1)
    expect(card.locator(".badge")).to_have_count(0)
    expect(card.locator(".ev-span")).to_have_text("22:40")
    expect(card.locator(".passage")).to_contain_text("leaves at 22:40 from pier 3")
    assert "leaves at" in "".join(card.locator(".ctx").all_inner_texts())


def test_a_blank_submit_points_at_the_missing_field(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    corpus(ws, project)
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if "/api/" in r.url else None)
    page.goto(live_server.url + "/projects/test/items/new")
    page.get_by_role("button", name="Submit", exact=True).click()
    question = page.get_by_label("Question", exact=True)
    expect(question).to_have_attribute("aria-invalid", "true")
    expect(question).to_be_focused()
    expect(page.locator("#save-state")).to_have_text("Not submitted: the question is empty")
    assert not [u for u in sent if "/items" in u]  # nothing to submit: no request at all
    assert not [u for u in sent if "null" in u]

    page.keyboard.type("Which pier?")
    expect(question).not_to_have_attribute("aria-invalid", "true")
    page.get_by_role("button", name="Submit", exact=True).click()
    answer = page.get_by_label("Reference answer")
    expect(answer).to_be_focused()
    expect(answer).to_have_attribute("aria-invalid", "true")

    page.keyboard.type("Pier 3.")
    page.get_by_role("button", name="Submit", exact=True).click()
    # the server's check: no relevant passage yet; the search box is where to find one
    expect(page.locator("#search-q")).to_be_focused()
    expect(page.locator("#save-state")).to_contain_text("mark at least one relevant passage")
    assert not [u for u in sent if "null" in u]


def test_delete_asks_first(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    ids = corpus(ws, project)
    item = complete(ws, project, ids["bikes.md"], "Do bikes ride free?", "ride free")
    page.goto(f"{live_server.url}/projects/test/items/{item}")
    editor_ready(page)
    asked: list[str] = []

    def answer(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss() if len(asked) == 1 else dialog.accept()

    page.on("dialog", answer)
    page.get_by_role("button", name="Discard draft").click()
    expect(page.get_by_label("Question", exact=True)).to_have_value("Do bikes ride free?")
    assert "Do bikes ride free?" in asked[0]
    assert get_item(ws, project, item).id == item  # still there
    page.get_by_role("button", name="Discard draft").click()
    expect(page).to_have_url(re.compile(r"/projects/test/items$"))
    assert len(asked) == 2
    with pytest.raises(NotFound):
        get_item(ws, project, item)


def test_the_editor_fits_1280_by_720(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    ids = corpus(ws, project)
    for n in range(3):
        ingest_bytes(ws, project, f"extra-{n}.txt", f"The night ferry note {n}.\n".encode())
    item = complete(ws, project, ids["night-ferry.md"], "When does the night ferry leave?")
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{live_server.url}/projects/test/items/{item}")
    expect(page.locator("#hits .hit")).to_have_count(6)
    # the page itself does not scroll; the answer and three hits are in view
    page.wait_for_function("() => document.documentElement.scrollHeight <= window.innerHeight + 1")
    expect(page.get_by_label("Reference answer")).to_be_in_viewport()
    for n in range(3):
        expect(page.locator("#hits .hit .hit-meta").nth(n)).to_be_in_viewport()
    expect(page.get_by_role("button", name="Submit", exact=True)).to_be_in_viewport()
    width = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert width <= 0


def test_markup_in_a_markdown_passage_stays_inert(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    text = (
        "# Ferry payloads\n\nThe ferry <img src=x onerror=window.__xss=3> sails "
        "<script>window.__xss=4</script>**daily** [see](javascript:window.__xss=5).\n"
    )
    ingest_bytes(ws, project, "payload.md", text.encode())
    page.goto(live_server.url + "/projects/test/items/new")
    page.keyboard.type("ferry payloads")
    hit = page.locator("#hits .hit", has_text="payload.md")
    expect(hit).to_have_count(1)
    passage = hit.locator(".passage")
    expect(passage).to_contain_text("The ferry")
    # markup is text kept hidden (offsets stay), never elements
    assert hit.locator("img, script, a").count() == 0
    assert "window.__xss=4" not in passage.inner_text()
    assert passage.text_content() == text.strip()
    expect(passage.locator(".md-b")).to_have_text("daily")
    assert page.evaluate("window.__xss") is None
