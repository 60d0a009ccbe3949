"""Role-shaped editors and keys that cannot corrupt gold, in the real Chromium (team mode).

A viewer opens the item editor, the conversation workbench and the judging workbench: every
field is read-only, a line says why, typing changes nothing and nothing is saved. A reviewer
corrects an answer, presses Esc and then Shift+E: the answer is accepted exactly as typed
(no "E" in it); Alt+Shift+X from inside a field opens the reject dialog without typing.
Selections: one that cuts words is widened to whole words, one across two passages is
refused with a message, in the item editor and in the conversation workbench (where `r` on a
search hit in focus marks it, as in the item editor)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item, get_item, set_status
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Item, Project, Turn
from assay.store.workspace import Workspace
from tests.browser.test_review import PASSWORD, sign_in
from tests.conftest import LiveServer
from tests.judging_sample import judging_project

pytestmark = pytest.mark.browser

DOCS = {
    "night-ferry.md": "The night ferry leaves at 22:40 from pier 3.\n",
    "winter.txt": "From December the night ferry leaves at 21:15.\n",
}
QUESTION = "When does the night ferry leave?"


def team(ws: Workspace, folder: Path) -> tuple[Project, dict[str, int], dict[str, str]]:
    """Project ferries (with judging inputs and two documents), a lead, a reviewer and a
    viewer; a submitted item and a conversation written by the lead."""
    project = judging_project(ws, folder)
    create_account(ws, "root", PASSWORD, admin=True)
    people = {}
    for name, role in (("lena", "lead"), ("rita", "reviewer"), ("vic", "viewer")):
        people[name] = create_account(ws, name, PASSWORD).id
        set_role(ws, project.id, people[name], role)
    for name, text in DOCS.items():
        ingest_bytes(ws, project, name, text.encode())
    made = create_item(
        ws, project, Item(turns=[Turn(query=QUESTION, answer="At 22:40.")]), author=people["lena"]
    )
    item = set_status(ws, project, made.id, "submitted", made.version, actor=people["lena"])
    turn = Turn(query=QUESTION, answer="It leaves at 22:40.")
    conversation = create_item(
        ws, project, Item(kind="conversation", turns=[turn]), author=people["lena"]
    )
    set_team_mode(ws, True)
    return project, people, {"item": item.id, "conversation": conversation.id}


def select_between(page: Page, start: tuple[str, str], end: tuple[str, str]) -> None:
    """Select from the text ``start[1]`` in the element ``start[0]`` to the end of the text
    ``end[1]`` in ``end[0]``, as a mouse drag would (the texts may run over several
    highlighted runs of their element)."""
    page.evaluate(
        """([[fromSel, fromText], [toSel, toText]]) => {
            const find = (selector, text, atEnd) => {
                const host = document.querySelector(selector);
                let at = host.textContent.indexOf(text);
                if (at < 0) throw new Error("not on the page: " + text);
                if (atEnd) at += text.length;
                const walker = document.createTreeWalker(host, NodeFilter.SHOW_TEXT);
                for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                    if (at <= node.data.length) return [node, at];
                    at -= node.data.length;
                }
                throw new Error("past the end: " + text);
            };
            const range = document.createRange();
            range.setStart(...find(fromSel, fromText, false));
            range.setEnd(...find(toSel, toText, true));
            window.getSelection().removeAllRanges();
            window.getSelection().addRange(range);
        }""",
        [list(start), list(end)],
    )


def editor_ready(page: Page) -> None:
    expect(page.locator("#save-state")).to_have_class(re.compile(r"\b(idle|saved)\b"))


def try_typing_everywhere(page: Page) -> int:
    """Click into and type into every visible field of the page's main part (search boxes
    aside); returns how many fields were tried. Each must keep its value."""
    fields = page.locator(
        "#main textarea:visible, #main input:visible:not([type=hidden]), "
        "#main [contenteditable]:visible"
    )
    tried = 0
    for index in range(fields.count()):
        field = fields.nth(index)
        if field.evaluate("f => Boolean(f.closest('#search-form, .search-row'))"):
            continue
        before = field.evaluate("f => f.value ?? f.textContent")
        field.click(force=True)
        page.keyboard.type("zz")
        after = field.evaluate("f => f.value ?? f.textContent")
        assert after == before, f"field {index} took text: {after!r}"
        tried += 1
    return tried


def test_a_viewer_cannot_type_into_any_editor(
    browser: Browser, ws: Workspace, live_server: LiveServer, tmp_path: Path
) -> None:
    project, _, ids = team(ws, tmp_path)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    writes: list[str] = []
    base = f"{live_server.url}/projects/ferries"
    sign_in(page, f"{base}/items/{ids['item']}", "vic")
    page.on(
        "request",
        lambda r: writes.append(f"{r.method} {r.url}") if r.method in ("PUT", "POST") else None,
    )
    note = page.locator("#read-only-note")
    expect(note).to_contain_text("You can read this item but not change it")
    expect(note).to_contain_text("vic may not edit items in project 'ferries'")
    expect(note).not_to_contain_text("item.edit")
    editor_ready(page)
    expect(page.get_by_label("Reference answer")).to_have_value("At 22:40.")
    assert try_typing_everywhere(page) >= 3  # question, answer, notes
    expect(page.locator("#submit-button")).to_be_hidden()

    page.goto(f"{base}/conversations/{ids['conversation']}")
    expect(page.locator("#read-only-note")).to_contain_text("not change it")
    expect(page.locator("#t0-answer")).to_have_value("It leaves at 22:40.")
    expect(page.locator("#composer")).to_be_hidden()
    assert try_typing_everywhere(page) >= 1  # the turn's answer

    page.goto(f"{base}/judging/reports?topic=t1")
    expect(page.locator("#read-only-note")).to_contain_text("You can read these judgments")
    expect(page.locator("#rating-options input").first).to_be_disabled()
    assert try_typing_everywhere(page) >= 1  # the comment
    page.locator("#texts").click()
    page.keyboard.press("1")  # a rating key says why instead of rating
    expect(page.locator("#toast")).to_contain_text("may not judge")
    expect(page.locator("#save-state")).not_to_have_class(re.compile("pending|saving"))

    page.goto(f"{base}/items/{ids['item']}")  # the German line
    page.context.add_cookies([{"name": "assay_lang", "value": "de", "url": live_server.url}])
    page.reload()
    expect(page.locator("#read-only-note")).to_contain_text(
        "Einträge bearbeiten ist für vic im Projekt 'ferries' nicht erlaubt"
    )
    assert writes == [], writes
    assert get_item(ws, project, ids["item"]).version == 2  # created, then submitted


def reviewer_in_answer(
    browser: Browser, ws: Workspace, live_server: LiveServer, tmp_path: Path
) -> tuple[Project, dict[str, str], Page]:
    """rita (a reviewer) in the lead's submitted item, the cursor in its answer."""
    project, _, ids = team(ws, tmp_path)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    sign_in(page, f"{live_server.url}/projects/ferries/items/{ids['item']}", "rita")
    editor_ready(page)
    page.get_by_label("Reference answer").click()
    return project, ids, page


def test_esc_then_shift_e_accepts_the_answer_as_typed(
    browser: Browser, ws: Workspace, live_server: LiveServer, tmp_path: Path
) -> None:
    project, ids, page = reviewer_in_answer(browser, ws, live_server, tmp_path)
    answer = page.get_by_label("Reference answer")
    page.keyboard.press("End")
    page.keyboard.type(" From pier 3.")
    page.keyboard.press("Escape")
    expect(answer).not_to_be_focused()
    page.keyboard.press("Shift+E")
    dialog = page.get_by_role("dialog", name="Accept with these edits?")
    expect(dialog).to_be_visible()
    expect(answer).to_have_value("At 22:40. From pier 3.")
    dialog.get_by_role("button", name="Accept with edits").click()
    expect(page.locator("#item-status")).to_have_text("accepted")
    stored = get_item(ws, project, ids["item"])
    assert (stored.status, stored.turns[0].answer) == ("accepted", "At 22:40. From pier 3.")


def test_verdict_keys_from_inside_a_field_type_nothing(
    browser: Browser, ws: Workspace, live_server: LiveServer, tmp_path: Path
) -> None:
    project, ids, page = reviewer_in_answer(browser, ws, live_server, tmp_path)
    answer = page.get_by_label("Reference answer")
    page.keyboard.press("Shift+X")  # in a field: a capital X, as typed
    expect(answer).to_have_value("At 22:40.X")
    page.keyboard.press("Backspace")
    page.keyboard.press("Alt+Shift+X")  # the verdict key from the field: nothing typed
    expect(page.get_by_role("dialog", name="Reject this item")).to_be_visible()
    expect(answer).to_have_value("At 22:40.")
    assert get_item(ws, project, ids["item"]).turns[0].answer == "At 22:40."


def marked(ws: Workspace, project: Project, item_id: str) -> list[str]:
    return [e.text for e in get_item(ws, project, item_id).turns[0].evidence]


def saved_marks(page: Page, ws: Workspace, project: Project, item_id: str, count: int) -> list[str]:
    """The item's evidence texts once the page has saved ``count`` of them."""
    expect(page.locator("#save-state")).to_have_class(re.compile(r"\bsaved\b"))
    while len(found := marked(ws, project, item_id)) < count:
        page.wait_for_timeout(100)  # the save is on its way (the page said so)
    return found


def hit_text(page: Page, name: str, focus: bool = False) -> str:
    """The selector of the text of the search hit from the document ``name``, by its
    document id and offset, which stay when the hits are drawn again (the page redraws them
    as the item changes); ``focus``: the hit takes focus."""
    hit = page.locator("#hits .hit", has=page.locator(".docname", has_text=name))
    expect(hit).to_have_count(1)
    doc_id, start = hit.evaluate(
        """(hit, focus) => {
            const text = hit.querySelector(".hit-text");
            if (focus) hit.focus();
            return [text.dataset.docId, text.dataset.start];
        }""",
        focus,
    )
    return f'#hits .hit-text[data-doc-id="{doc_id}"][data-start="{start}"]'


def test_selections_snap_to_words_and_never_cross_passages(
    browser: Browser, ws: Workspace, live_server: LiveServer, tmp_path: Path
) -> None:
    project, _, ids = team(ws, tmp_path)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    sign_in(page, f"{live_server.url}/projects/ferries/items/{ids['item']}", "lena")
    editor_ready(page)
    for editor in ("items", "conversations"):
        if editor == "conversations":
            page.goto(f"{live_server.url}/projects/ferries/conversations/{ids['conversation']}")
            editor_ready(page)
        page.locator("#search-q").fill("night ferry leaves")
        page.locator("#search-q").press("Enter")
        winter = hit_text(page, "winter.txt")
        ferry = hit_text(page, "night-ferry.md", focus=True)
        item_id = ids["item" if editor == "items" else "conversation"]

        # across two passages: refused with a message, nothing marked
        select_between(page, (ferry, "night"), (winter, "December"))
        page.keyboard.press("r")
        expect(page.locator("#toast")).to_contain_text("spans several passages")
        assert marked(ws, project, item_id) == []

        # "ight ferry lea" (a drag that cut two words): marked as "night ferry leaves"
        ferry = hit_text(page, "night-ferry.md", focus=True)
        select_between(page, (ferry, "ight ferry lea"), (ferry, "ight ferry lea"))
        page.keyboard.press("r")
        assert saved_marks(page, ws, project, item_id, 1) == ["night ferry leaves"]

    # no selection: r marks the search hit in focus, whole, as in the item editor
    hit_text(page, "winter.txt", focus=True)
    page.keyboard.press("r")
    texts = saved_marks(page, ws, project, ids["conversation"], 2)
    assert texts[0] == "night ferry leaves" and "From December" in texts[1]


def test_the_lead_sees_two_judges_progress(
    browser: Browser, ws: Workspace, live_server: LiveServer, tmp_path: Path
) -> None:
    """rita judges both reports of topic t1 in the workbench, lena one; the lead's overview
    lists both judges with their progress (a judge's own overview shows only their own)."""
    team(ws, tmp_path)
    for name, runs in (("rita", ("alpha", "beta")), ("lena", ("alpha",))):
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        sign_in(page, f"{live_server.url}/projects/ferries/judging/reports?topic=t1", name)
        expect(page.locator("#save-state")).to_have_class(re.compile(r"\bidle\b"))
        for run in runs:
            page.locator("#units .unit-button", has_text=run).click()
            page.locator("#texts").click()
            page.keyboard.press("4")  # Bad: judged
            expect(page.locator("#save-state")).to_have_class(re.compile(r"\bsaved\b"))
        page.close()
    lead = browser.new_page(viewport={"width": 1280, "height": 720})
    sign_in(lead, f"{live_server.url}/projects/ferries/judging?mode=reports", "lena")
    table = lead.locator("table.judging-judges")
    expect(table.get_by_role("row", name=re.compile(r"^rita .*2 of 2 judged"))).to_be_visible()
    expect(table.get_by_role("row", name=re.compile(r"^lena .*1 of 2 judged"))).to_be_visible()


@pytest.mark.parametrize("width, height", [(1280, 720), (1440, 900)])
def test_the_german_dashboard_tables_fit(
    browser: Browser,
    ws: Workspace,
    live_server: LiveServer,
    tmp_path: Path,
    width: int,
    height: int,
) -> None:
    team(ws, tmp_path)
    page = browser.new_page(viewport={"width": width, "height": height})
    page.context.add_cookies([{"name": "assay_lang", "value": "de", "url": live_server.url}])
    page.goto(f"{live_server.url}/projects/ferries/dashboard")
    page.get_by_label("Benutzername").fill("lena")
    page.get_by_label("Passwort").fill(PASSWORD)
    page.get_by_role("button", name="Anmelden").click()
    expect(page.get_by_role("heading", name="Übersicht")).to_be_visible()
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    expect(page.locator("table.dash-table").first).to_be_visible()
    wide = page.evaluate(
        """() => [...document.querySelectorAll('table.dash-table')]
            .filter((t) => t.getBoundingClientRect().right
                > t.closest('.dash-card').getBoundingClientRect().right)
            .map((t) => t.rows[0].textContent)"""
    )
    assert wide == []
    assert page.evaluate("document.documentElement.scrollWidth") == width
