"""Comments in the real Chromium: on a highlighted span of an answer, a reply, resolve and
reopen; then the answer changes so that the quote moves (the comment follows it) and vanishes
(the comment shows as outdated and stays); a comment on a passage of a conversation."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, Page, expect

from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item
from assay.records import Evidence, Item, Project, Turn
from assay.review.comments import list_comments
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

ANSWER = "The night ferry leaves at 22:40 from pier 3."
PASSAGE = "The night ferry leaves at 22:40 from pier 3 every day."


def comments_ready(page: Page) -> None:
    """Wait until the page has settled: every request answered (the passages are drawn again
    when their overlap with the answer arrives, which would drop a selection made before) and
    the comments loaded (only then do a selection's button and the shortcut start a draft;
    the panel then writes the open count into its title)."""
    page.wait_for_load_state("networkidle")
    expect(page.locator("#comments-title-count")).not_to_have_text("")


def select_range(page: Page, selector: str, needle: str) -> None:
    """Select ``needle`` in a question or answer box as a reader would, and let go of the
    mouse there (the "Comment" button follows a selection)."""
    page.locator(selector).evaluate(
        """(box, needle) => {
            const at = box.value.indexOf(needle);
            if (at < 0) throw new Error("not in the box: " + needle);
            box.focus();
            box.setSelectionRange(at, at + needle.length);
            const up = { bubbles: true, clientX: 300, clientY: 300 };
            box.dispatchEvent(new MouseEvent("mouseup", up));
        }""",
        needle,
    )


def select_text(node: Locator, needle: str, *, release: bool = False) -> None:
    """Select ``needle`` in a passage's text, which may be drawn as several runs of text (the
    answer's words marked); ``release``: and let go of the mouse there."""
    node.evaluate(
        """(node, [needle, release]) => {
            const at = node.textContent.indexOf(needle);
            if (at < 0) throw new Error("not in the passage: " + needle);
            const stop = at + needle.length;
            const range = document.createRange();
            const runs = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
            let seen = 0;
            for (let run = runs.nextNode(); run; run = runs.nextNode()) {
                const end = seen + run.length;
                if (at >= seen && at < end) range.setStart(run, at - seen);
                if (stop > seen && stop <= end) range.setEnd(run, stop - seen);
                seen = end;
            }
            getSelection().removeAllRanges();
            getSelection().addRange(range);
            const up = { bubbles: true, clientX: 200, clientY: 200 };
            if (release) node.dispatchEvent(new MouseEvent("mouseup", up));
        }""",
        [needle, release],
    )


def test_comment_on_an_answer_span_reply_resolve_and_outdated(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    item = create_item(ws, project, Item(turns=[Turn(query="When?", answer=ANSWER)]))
    page.goto(f"{live_server.url}/projects/test/items/{item.id}")
    expect(page.locator("#save-state")).to_have_text("Saved")
    comments_ready(page)

    select_range(page, "#f-answer", "22:40")
    button = page.locator("#comment-selection")
    expect(button).to_be_visible()
    button.click()
    expect(page.locator("#comment-draft-quote")).to_have_text("22:40")
    expect(page.locator("#comment-draft-where")).to_have_text("Answer · turn 1")
    page.locator("#comment-draft-body").fill("Local time or UTC?")
    page.get_by_role("button", name="Add comment").first.click()

    thread = page.locator("#comments-list .thread").first
    expect(thread.locator(".thread-quote")).to_have_text("22:40")
    expect(thread.locator(".comment-body")).to_have_text("Local time or UTC?")
    expect(page.locator("#comments-count")).to_have_text("1")

    # the quote is shown in the answer: hovering outlines the box, a click selects the span
    thread.hover()
    expect(page.locator("#f-answer")).to_have_class("comment-focus")
    thread.locator(".thread-quote").click()
    selected = page.locator("#f-answer").evaluate(
        "(box) => box.value.slice(box.selectionStart, box.selectionEnd)"
    )
    assert selected == "22:40"

    thread.get_by_role("textbox", name="Reply").fill("Local time (CET).")
    thread.get_by_role("button", name="Reply").click()
    expect(thread.locator(".comment-body")).to_have_text(
        ["Local time or UTC?", "Local time (CET)."]
    )

    thread.get_by_role("button", name="Resolve").click()
    expect(page.locator("#comments-list .thread")).to_have_count(0)
    expect(page.locator("#comments-count")).to_have_text("")
    page.get_by_label("Show resolved (1)").check()
    resolved = page.locator("#comments-list .thread.resolved")
    expect(resolved.locator(".comment-resolved")).to_contain_text("resolved by")
    resolved.get_by_role("button", name="Reopen").click()
    expect(page.locator("#comments-count")).to_have_text("1")

    # the answer grows before the quote: it moved, and the comment follows it
    page.locator("#f-answer").fill("Since May, t" + ANSWER[1:])
    expect(page.locator("#save-state")).to_have_text("Saved")
    page.reload()
    page.locator("#comments-toggle").click()
    expect(page.locator("#comments-list .thread .comment-moved")).to_be_visible()

    # the quote is gone: outdated, with what it quoted, never lost
    page.locator("#f-answer").fill("The night ferry leaves from pier 3.")
    expect(page.locator("#save-state")).to_have_text("Saved")
    page.reload()
    page.locator("#comments-toggle").click()
    outdated = page.locator("#comments-list .thread.outdated")
    expect(outdated.locator(".comment-outdated")).to_have_text("outdated")
    expect(outdated.locator(".thread-quote")).to_have_text("22:40")
    found = list_comments(ws, project, item.id)
    assert [(c.body, c.anchor) for c in found] == [
        ("Local time or UTC?", "outdated"),
        ("Local time (CET).", "ok"),
    ]


def test_comment_on_a_passage_of_a_conversation_with_the_shortcut(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    doc = ingest_bytes(ws, project, "ferry.txt", PASSAGE.encode())
    turn = Turn(query="When does it leave?", answer="At 22:40.")
    turn.evidence = [Evidence(doc_id=doc.id, text=PASSAGE, start=0, end=len(PASSAGE))]
    item = create_item(ws, project, Item(kind="conversation", turns=[turn]))
    page.goto(f"{live_server.url}/projects/test/conversations/{item.id}")
    passage = page.locator(".turn .passage-text").first
    expect(passage).to_have_text(PASSAGE)
    comments_ready(page)
    select_text(passage, "pier 3")
    page.keyboard.press("Control+Alt+m")
    expect(page.locator("#comment-draft-where")).to_have_text("Passage 1 · turn 1")
    page.locator("#comment-draft-body").fill("Which pier on Sundays?")
    page.get_by_role("button", name="Add comment").first.click()
    expect(page.locator("#comments-list .thread .thread-quote")).to_have_text("pier 3")
    [stored] = list_comments(ws, project, item.id)
    assert (stored.target, stored.turn, stored.evidence, stored.quote) == (
        "evidence",
        0,
        0,
        "pier 3",
    )
    assert PASSAGE[stored.start : stored.end] == "pier 3"  # type: ignore[index]
    # the help overlay lists the shortcut
    page.locator("#help-button").click()
    expect(page.locator("#help-overlay")).to_contain_text("comment on the selected text")


def test_comment_on_a_passage_in_the_item_editor(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    doc = ingest_bytes(ws, project, "ferry.txt", PASSAGE.encode())
    turn = Turn(query="When?", answer="At 22:40.")
    turn.evidence = [Evidence(doc_id=doc.id, text=PASSAGE, start=0, end=len(PASSAGE))]
    item = create_item(ws, project, Item(turns=[turn]))
    page.goto(f"{live_server.url}/projects/test/items/{item.id}")
    passage = page.locator("#ev-list .ev-text").first
    expect(passage).to_have_text(PASSAGE)
    comments_ready(page)
    select_text(passage, "every day", release=True)
    page.locator("#comment-selection").click()
    expect(page.locator("#comment-draft-where")).to_have_text("Passage 1 · turn 1")
    page.locator("#comment-draft-body").fill("Weekends too?")
    page.keyboard.press("Escape")  # cancels the draft
    expect(page.locator("#comment-draft")).to_be_hidden()
    select_text(passage, "every day")
    page.keyboard.press("Control+Alt+m")
    page.locator("#comment-draft-body").fill("Weekends too?")
    page.get_by_role("button", name="Add comment").first.click()
    expect(page.locator("#comments-list .thread .thread-quote")).to_have_text("every day")
    [stored] = list_comments(ws, project, item.id)
    assert (stored.target, stored.evidence, stored.quote, stored.anchor) == (
        "evidence",
        0,
        "every day",
        "ok",
    )
