"""The item editor in the real Chromium: search, mark, select spans, groups, autosave,
conflicts, languages, shortcuts, and inert payloads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from assay.corpus.ingest import ingest_bytes, ingest_paths
from assay.gold.items import create_item, get_item, item_events, parse_item
from assay.records import Item, Project, Turn
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parents[1] / "data" / "parsing"
PAYLOAD = "<img src=x onerror=window.__xss=1>"


def corpus(ws: Workspace, project: Project) -> dict[str, str]:
    docs = {
        "night-ferry.md": "# Night ferry\n\nThe night ferry leaves at 22:40 from pier 3.\n",
        "winter.txt": "Winter timetable: from December the night ferry leaves at 21:15.\n",
        "bikes.md": "Bikes ride free on every ferry, the night ferry too.\n",
    }
    ids = {name: ingest_bytes(ws, project, name, text.encode()).id for name, text in docs.items()}
    report = ingest_paths(ws, project, [DATA / "sample.pdf"])
    ids["sample.pdf"] = str(report.outcomes[0].doc_id)
    return ids


def select_in(page: Page, selector: str, needle: str) -> None:
    """Select ``needle`` inside the (first) text node of the element, as a mouse would."""
    page.evaluate(
        """([selector, needle]) => {
            const node = document.querySelector(selector);
            const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
            let text;
            while ((text = walker.nextNode())) {
                const at = text.data.indexOf(needle);
                if (at < 0) continue;
                const range = document.createRange();
                range.setStart(text, at);
                range.setEnd(text, at + needle.length);
                const selection = window.getSelection();
                selection.removeAllRanges();
                selection.addRange(range);
                return;
            }
            throw new Error("text not found: " + needle);
        }""",
        [selector, needle],
    )


def hit_index(page: Page, doc_name: str) -> int:
    names = page.locator("#hits .hit .docname").all_inner_texts()
    return names.index(doc_name)


def test_write_an_item_with_search_spans_groups_and_reload(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    ids = corpus(ws, project)
    page.goto(live_server.url + "/projects/test/items/new")
    page.get_by_label("Question", exact=True).fill("When does the night ferry leave?")
    expect(page.locator("#search-q")).to_have_value("When does the night ferry leave?")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#hits .hit .docname", has_text="bikes.md")).to_be_visible()

    # a whole chunk: click the hit, press r
    first = hit_index(page, "night-ferry.md")
    page.locator("#hits .hit").nth(first).locator(".hit-meta").click()
    page.keyboard.press("r")
    expect(page.locator("#ev-list .ev")).to_have_count(1)

    # a sub-span: select two words in the hit's passage (shown in the hit), press r
    select_in(page, f'#hits .hit[data-index="{hit_index(page, "winter.txt")}"] .hit-text', "21:15")
    page.keyboard.press("r")
    expect(page.locator("#ev-list .ev")).to_have_count(2)
    # put it into the same group as the first relevant passage (OR)
    page.locator("#ev-list .group").nth(1).get_by_role(
        "button", name="Join the group above"
    ).click()
    expect(page.locator("#ev-list .group")).to_have_count(1)
    expect(page.locator("#ev-list .group h3")).to_have_text("Group 1: any one of these is enough")

    # a distracting chunk: move with j/k to the bikes hit and press d
    page.locator("#hits .hit").nth(0).focus()
    for _ in range(hit_index(page, "bikes.md")):
        page.keyboard.press("j")
    page.keyboard.press("d")
    expect(page.locator("#ev-list .ev-distracting")).to_have_count(1)

    # a span selected in the document view of the PDF, as its own group (AND)
    page.keyboard.press("/")
    expect(page.locator("#search-q")).to_be_focused()
    page.locator("#search-q").fill("anchored character offsets")
    page.keyboard.press("Enter")
    expect(page.locator("#hits .hit .docname").first).to_have_text("sample.pdf")
    page.locator("#hits .hit").first.get_by_role("button", name="Open the document").click()
    expect(page.locator("#doc-panel")).to_be_visible()
    select_in(page, "#doc-text", "character offsets")
    page.get_by_role("button", name="Mark the selection relevant").click()
    page.get_by_role("button", name="Close", exact=True).click()
    expect(page.locator("#ev-list .group")).to_have_count(3)  # two AND groups + distracting

    page.get_by_label("Reference answer").fill("At 22:40, or at 21:15 in winter.")
    page.get_by_role("button", name="Add an answer").click()
    page.get_by_label("Acceptable answer 1", exact=True).fill("22:40")
    expect(page.locator("#save-state")).to_have_text("Saved")
    assert "/items/new" not in page.url

    page.reload()
    expect(page.get_by_label("Question", exact=True)).to_have_value(
        "When does the night ferry leave?"
    )
    expect(page.get_by_label("Reference answer")).to_have_value("At 22:40, or at 21:15 in winter.")
    expect(page.get_by_label("Acceptable answer 1", exact=True)).to_have_value("22:40")
    expect(page.locator("#ev-list .ev")).to_have_count(4)
    expect(page.locator("#findings")).to_contain_text("Complete")

    item_id = page.url.rstrip("/").split("/")[-1].split("?")[0]
    stored = get_item(ws, project, item_id).turns[0]
    found = {(e.doc_id, e.text, e.label, e.group) for e in stored.evidence}
    assert found == {
        (
            ids["night-ferry.md"],
            "# Night ferry\n\nThe night ferry leaves at 22:40 from pier 3.",
            "relevant",
            1,
        ),
        (ids["winter.txt"], "21:15", "relevant", 1),
        (ids["bikes.md"], "Bikes ride free on every ferry, the night ferry too.", "distracting", 0),
        (ids["sample.pdf"], "character offsets", "relevant", 2),
    }
    assert all(e.anchor == "ok" for e in stored.evidence)
    assert stored.alternatives == ["22:40"]

    page.get_by_role("button", name="Submit", exact=True).click()
    expect(page.locator("#item-status")).to_have_text("submitted")


def test_two_tabs_get_a_conflict_and_lose_nothing(
    context: BrowserContext, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    item = create_item(ws, project, Item(turns=[Turn(query="Which pier?")]))
    url = f"{live_server.url}/projects/test/items/{item.id}"
    first, second = context.new_page(), context.new_page()
    first.goto(url)
    second.goto(url)

    first.get_by_label("Reference answer").fill("Pier 3.")
    expect(first.locator("#save-state")).to_have_text("Saved")
    second.get_by_label("Notes").fill("check the winter timetable")

    dialog = second.locator("dialog#conflict")
    expect(dialog).to_be_visible()
    expect(second.locator("#save-state")).to_have_text("Conflict, not saved")
    expect(dialog.locator("#conflict-mine")).to_contain_text("check the winter timetable")
    expect(dialog.locator("#conflict-theirs")).to_contain_text("Pier 3.")
    expect(dialog.locator("#conflict-theirs-meta")).to_contain_text("version 2")

    dialog.get_by_role("button", name="Keep mine (overwrite)").click()
    expect(second.locator("#save-state")).to_have_text("Saved")
    stored = get_item(ws, project, item.id)
    assert stored.version == 3 and stored.notes == "check the winter timetable"
    # the overwritten answer is kept in the item's history
    saves = [e for e in item_events(ws, project, item.id) if e["action"] == "save"]
    assert saves[-1]["before"]["turns"][0]["answer"] == "Pier 3."

    # the other way round: the first tab is now stale and takes the stored version
    first.get_by_label("Notes").fill("mine from the first tab")
    expect(first.locator("dialog#conflict")).to_be_visible()
    first.get_by_role("button", name="Take the stored version").click()
    expect(first.get_by_label("Notes")).to_have_value("check the winter timetable")
    expect(first.locator("#restore-banner")).to_be_visible()  # yours is offered back
    kept = first.evaluate(
        "Object.entries(localStorage).filter(([k]) => k.startsWith('assay:draft:'))"
        ".map(([, v]) => JSON.parse(v).data.notes)"
    )
    assert kept == ["mine from the first tab"]
    first.get_by_role("button", name="Restore").click()
    expect(first.get_by_label("Notes")).to_have_value("mine from the first tab")
    expect(first.locator("#save-state")).to_have_text("Saved")
    assert get_item(ws, project, item.id).notes == "mine from the first tab"


def test_german_interface(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    page.goto(live_server.url + "/projects/test/items/new")
    page.get_by_role("button", name="Deutsch").click()
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page.get_by_label("Frage", exact=True)).to_be_visible()
    expect(page.get_by_label("Referenzantwort")).to_be_visible()
    expect(page.get_by_label("Fragetyp")).to_contain_text("Einzelfakt")
    expect(page.locator("#type-help")).to_contain_text("Die Dokumente nennen die Antwort")
    page.locator("h1").click()  # the question has the focus on a new item
    page.keyboard.press("?")
    expect(page.get_by_role("heading", name="Tastenkürzel")).to_be_visible()
    page.goto(live_server.url + "/projects/test/items")
    expect(page.get_by_role("link", name="Neuer Eintrag")).to_be_visible()


def test_payloads_stay_inert(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    ingest_bytes(
        ws,
        project,
        f"{PAYLOAD}.txt",
        f"Ferry notes {PAYLOAD} <script>window.__xss=2</script>".encode(),
    )
    page.goto(live_server.url + "/projects/test/items/new")
    page.get_by_label("Question", exact=True).fill(f"Ferry {PAYLOAD}")
    page.get_by_label("Reference answer").fill(PAYLOAD)
    page.get_by_label("Notes").fill(PAYLOAD)
    expect(page.locator("#save-state")).to_have_text("Saved")
    page.reload()
    expect(page.get_by_label("Question", exact=True)).to_have_value(f"Ferry {PAYLOAD}")
    page.locator("#search-q").fill("ferry notes")
    page.keyboard.press("Enter")
    hit = page.locator("#hits .hit").first
    expect(hit.locator(".docname")).to_have_text(f"{PAYLOAD}.txt")
    hit.locator(".hit-meta").click()
    page.keyboard.press("r")
    hit.get_by_role("button", name="Open the document").click()
    expect(page.locator("#doc-text")).to_contain_text("<script>window.__xss=2</script>")
    expect(page.locator("#ev-list .docname")).to_have_text(f"{PAYLOAD}.txt")
    expect(page.locator("#save-state")).to_have_text("Saved")
    page.goto(live_server.url + "/projects/test/items")
    expect(page.get_by_role("link", name=f"Ferry {PAYLOAD}")).to_be_visible()
    assert page.evaluate("window.__xss") is None


def test_help_overlay_and_no_shortcuts_while_typing(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    corpus(ws, project)
    page.goto(live_server.url + "/projects/test/items/new")
    overlay = page.locator("#help-overlay")
    question = page.get_by_label("Question", exact=True)
    question.fill("night ferry")
    question.press("?")
    question.press("r")
    question.press("/")
    expect(overlay).to_be_hidden()
    expect(question).to_have_value("night ferry?r/")
    expect(question).to_be_focused()

    page.locator("h1").click()
    page.keyboard.press("?")
    expect(overlay).to_be_visible()
    expect(overlay).to_contain_text("mark the current hit, or the selected text, as relevant")
    page.keyboard.press("Escape")
    expect(overlay).to_be_hidden()


def test_switching_to_unanswerable_asks_first(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    ids = corpus(ws, project)
    evidence: list[dict[str, Any]] = [
        {"doc_id": ids["night-ferry.md"], "text": "22:40", "label": "relevant"},
        {"doc_id": ids["bikes.md"], "text": "Bikes ride free", "label": "distracting"},
    ]
    item = create_item(
        ws, project, parse_item({"turns": [{"query": "q", "evidence": evidence}]}, "test item")
    )
    page.goto(f"{live_server.url}/projects/test/items/{item.id}")
    messages: list[str] = []

    def answer(dialog: Any) -> None:
        messages.append(dialog.message)
        dialog.dismiss() if len(messages) == 1 else dialog.accept()

    page.on("dialog", answer)
    page.get_by_label("Question type").select_option("unanswerable")
    expect(page.get_by_label("Question type")).to_have_value("fact_single")
    assert "1 relevant passage(s) will be removed" in messages[0]
    page.get_by_label("Question type").select_option("unanswerable")
    expect(page.locator("#ev-list .ev")).to_have_count(1)
    expect(page.locator("#save-state")).to_have_text("Saved")
    stored = get_item(ws, project, item.id).turns[0]
    assert stored.query_type == "unanswerable"
    assert [e.label for e in stored.evidence] == ["distracting"]
