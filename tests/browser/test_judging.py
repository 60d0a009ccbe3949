"""The judging workbench in the real Chromium, by keys: a report with one selection across
two sentences (stored as two spans with their sentence_idx), a document and a citation with
spans on both sides; a reload loses nothing; the page in German; two tabs of one judge meet
in the conflict dialog and nothing is lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from assay.judging.judgments import Judgment, Unit, get_judgment, list_judgments
from assay.records import Project
from assay.store.workspace import Workspace
from tests.conftest import LiveServer
from tests.judging_sample import judging_project

pytestmark = pytest.mark.browser

REPORT = (
    "The 🚢 night ferry leaves at 22:40. In winter the last one leaves at 21:15. Have a good trip."
)
FERRY = "Night ferry\n\nThe night ferry 🚢 leaves at 22:40 from pier 3. Bikes ride free."
WINTER = "Winter timetable\n\nFrom December the last ferry leaves at 21:15."
SENTENCE = "In winter the last one leaves at 21:15."

SELECT = """([fromSelector, fromText, toSelector, toText]) => {
  const find = (selector, text, atEnd) => {
    for (const host of document.querySelectorAll(selector)) {
      const walker = document.createTreeWalker(host, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.data.indexOf(text);
        if (at >= 0) return [node, atEnd ? at + text.length : at];
      }
    }
    throw new Error("not on the page: " + text);
  };
  const [startNode, start] = find(fromSelector, fromText, false);
  const [endNode, end] = find(toSelector, toText, true);
  const range = document.createRange();
  range.setStart(startNode, start);
  range.setEnd(endNode, end);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}"""


def select(page: Page, selector: str, text: str, to_selector: str = "", to_text: str = "") -> None:
    page.evaluate(SELECT, [selector, text, to_selector or selector, to_text or text])


def at(text: str, part: str) -> tuple[int, int]:
    start = text.index(part)
    return start, start + len(part)


def judgment(ws: Workspace, project: Project, unit: Unit) -> Judgment:
    judge = list_judgments(ws, project)[0].judge_id
    found = get_judgment(ws, project, unit, judge)
    assert found is not None, f"no judgment of {unit.key}"
    return found


def test_three_modes_by_keys_survive_a_reload_and_speak_german(
    browser: Browser, ws: Workspace, live_server: LiveServer, tmp_path: Path
) -> None:
    project = judging_project(ws, tmp_path)
    base = live_server.url + "/projects/ferries/judging"
    page = browser.new_page(viewport={"width": 1440, "height": 900})

    # the overview, then the reports workbench
    page.goto(live_server.url + "/projects/ferries")
    page.get_by_role("link", name="Judging").click()
    expect(page.get_by_role("heading", name="Reports · 0 of 2 judged")).to_be_visible()
    page.goto(base + "/reports?topic=t1")
    expect(page.locator("#unit-title")).to_have_text("alpha · blue")
    select(page, ".sentence", "ferry leaves at 22:40.", ".sentence", "In winter")
    page.keyboard.press("r")
    page.keyboard.press("2")
    page.keyboard.press("c")
    page.keyboard.type("Clear, but says nothing of pier 3.")
    page.keyboard.press("Escape")
    expect(page.locator("#save-state")).to_have_text("Saved")
    expect(page.locator("#judged-count")).to_have_text("1 of 2 judged")
    report = judgment(ws, project, Unit.report("t1", "alpha"))
    assert [(s.start, s.end, s.text, s.sentence_idx) for s in report.spans] == [
        (*at(REPORT, "ferry leaves at 22:40."), "ferry leaves at 22:40.", 0),
        (*at(REPORT, "In winter"), "In winter", 1),
    ]
    assert (report.rating, report.comment) == ("Mostly Good", "Clear, but says nothing of pier 3.")
    page.keyboard.press("n")  # the next unjudged unit
    expect(page.locator("#unit-title")).to_have_text("beta · green")

    # a document
    page.goto(base + "/documents?topic=t1")
    expect(page.locator("#unit-title")).to_have_text("Night ferry")
    select(page, "pre.doc-text", "leaves at 22:40")
    page.keyboard.press("r")
    page.keyboard.press("1")
    expect(page.locator("#save-state")).to_have_text("Saved")
    document = judgment(ws, project, Unit.document("t1", "ferry"))
    assert [(s.start, s.end, s.text) for s in document.spans] == [
        (*at(FERRY, "leaves at 22:40"), "leaves at 22:40")
    ]
    assert document.rating == "Perfect"

    # a citation: the sentence on one side, the cited document on the other
    page.goto(base + "/citations?topic=t1&run=alpha")
    page.keyboard.press("j")
    expect(page.locator("#unit-title")).to_have_text("alpha · Sentence 2 · Winter timetable")
    select(page, ".judged-sentence .sel-source", "leaves at 21:15")
    page.keyboard.press("r")
    select(page, "pre.doc-text", "the last ferry leaves at 21:15")
    page.get_by_role("button", name="Add selection as span").click()
    page.keyboard.press("1")
    expect(page.locator("#save-state")).to_have_text("Saved")
    citation = judgment(ws, project, Unit.citation("t1", "alpha", 1, "winter"))
    assert [(s.start, s.end, s.text) for s in citation.report_spans] == [
        (*at(SENTENCE, "leaves at 21:15"), "leaves at 21:15")
    ]
    assert [(s.start, s.end, s.text) for s in citation.spans] == [
        (*at(WINTER, "the last ferry leaves at 21:15"), "the last ferry leaves at 21:15")
    ]

    # reload: nothing lost, and the place is kept
    page.reload()
    expect(page.locator("#unit-title")).to_have_text("alpha · Sentence 2 · Winter timetable")
    expect(page.locator(".span-list[data-field=report_spans] q")).to_have_text(["leaves at 21:15"])
    expect(page.locator(".span-list[data-field=spans] q")).to_have_text(
        ["the last ferry leaves at 21:15"]
    )
    expect(page.get_by_role("radio", name="Perfect")).to_be_checked()
    expect(page.locator(".judged-sentence mark")).to_have_text(["leaves at 21:15"])
    expect(page.locator("#judged-count")).to_have_text("1 of 4 judged")
    page.goto(base + "/reports?topic=t1")
    expect(page.locator(".sentence mark")).to_have_text(["ferry leaves at 22:40.", "In winter"])
    expect(page.get_by_label("Comment")).to_have_value("Clear, but says nothing of pier 3.")

    # German
    page.goto(live_server.url + "/language/de?next=/projects/ferries/judging/reports?topic=t1")
    expect(page.get_by_role("heading", name="Berichte bewerten")).to_be_visible()
    expect(page.locator("#judged-count")).to_have_text("1 von 2 bewertet")
    expect(page.get_by_role("radio", name="Überwiegend gut")).to_be_checked()
    expect(page.get_by_role("heading", name="Stellen im Bericht")).to_be_visible()
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Tasten beim Bewerten")).to_be_visible()
    page.keyboard.press("Escape")
    page.goto(base)
    page.get_by_role("link", name="Dokumente 1 von 2 bewertet").click()
    expect(page.get_by_role("heading", name="Dokumente · 1 von 2 bewertet")).to_be_visible()


def test_two_tabs_of_one_judge_meet_in_the_conflict_dialog(
    browser: Browser, ws: Workspace, live_server: LiveServer, tmp_path: Path
) -> None:
    project = judging_project(ws, tmp_path)
    address = live_server.url + "/projects/ferries/judging/reports?topic=t1"
    first, second = browser.new_page(), browser.new_page()
    first.goto(address)
    second.goto(address)
    first.keyboard.press("1")
    expect(first.locator("#save-state")).to_have_text("Saved")

    second.keyboard.press("4")  # read before the first tab saved: version 0 is stale
    dialog = second.get_by_role("dialog", name="This judgment changed elsewhere")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#conflict-theirs")).to_contain_text("Perfect")
    expect(dialog.locator("#conflict-mine")).to_contain_text("Bad")
    dialog.get_by_role("button", name="Keep mine").click()
    expect(second.locator("#save-state")).to_have_text("Saved")
    kept = judgment(ws, project, Unit.report("t1", "alpha"))
    assert (kept.rating, kept.version) == ("Bad", 2)
