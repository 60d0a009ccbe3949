"""Assignment and queues in the real Chromium (team mode, signed in): a lead assigns six
items with overlap 2 to two annotators in blind mode; each works through the queue with
Submit → next, seeing "N of M done"; blind mode keeps the other's version away; the pages
fit at 1280x720 and 1440x900, in English and German."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item
from assay.people.accounts import create_account, get_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Evidence, Item, Turn
from assay.review.tasks import queue_of
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from tests.browser.test_team_scenario import sign_in
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
FERRY = "# Night ferry\n\nThe night ferry leaves at 22:40 from pier 3. Bikes ride free.\n"
SIZES = ({"width": 1280, "height": 720}, {"width": 1440, "height": 900})


def seed(ws: Workspace) -> None:
    """Team mode; project ferries with six drafts ready to submit (LLM drafts a person
    checks); lead lea, annotators ada and bob; annotators may read every item, so only
    blind mode keeps their versions apart."""
    create_account(ws, "root", PASSWORD, admin=True)
    project = create_project(ws, "ferries", "en", settings={"annotators_see_all": True})
    for name, role, shown in (("lea", "lead", "Lea"), ("ada", "annotator", "Ada"),
                              ("bob", "annotator", "Bob")):  # fmt: skip
        set_role(ws, project.id, create_account(ws, name, PASSWORD, display_name=shown).id, role)
    doc = ingest_bytes(ws, project, "night-ferry.md", FERRY.encode())
    for n in range(6):
        passage = Evidence(doc_id=doc.id, start=None, end=None, text="22:40")
        turn = Turn(query=f"When does ferry {n + 1} leave?", answer="At 22:40.", evidence=[passage])
        create_item(ws, project, Item(turns=[turn], origin="llm-suggestion"))
    set_team_mode(ws, True)


def editor_ready(page: Page) -> None:
    expect(page.locator("#save-state")).to_have_class(re.compile(r"\b(idle|saved)\b"))


def work_through(page: Page, url: str, count: int) -> list[str]:
    """Start the queue and submit ``count`` tasks, checking "N of M done" at each; the item
    ids worked on."""
    page.goto(url + "/projects/ferries")
    page.get_by_role("link", name="My queue").first.click()
    expect(page.get_by_text("0 of 6 done").first).to_be_visible()
    page.get_by_role("button", name="Start").click()
    seen = []
    for done in range(count):
        editor_ready(page)
        expect(page.locator("#queue-count")).to_have_text(f"{done} of 6 done")
        seen.append(page.url.split("/items/")[1].split("?")[0])
        page.get_by_role("button", name="Submit", exact=True).click()
        if done + 1 < 6:
            expect(page).not_to_have_url(re.compile(re.escape(seen[-1])))
    return seen


def fits(page: Page) -> None:
    """Nothing sticks out sideways (no horizontal scroll bar)."""
    width = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert width <= 0, f"{page.url} is {width}px too wide"


def test_a_lead_assigns_and_two_annotators_work_through_their_queues(
    browser: Browser, ws: Workspace, live_server: LiveServer
) -> None:
    seed(ws)
    url = live_server.url
    project = get_project(ws, "ferries")

    lead = browser.new_page(viewport=SIZES[0])
    sign_in(lead, url + "/projects/ferries", "lea", PASSWORD)
    lead.get_by_role("link", name="Assign tasks").click()
    expect(lead.get_by_role("heading", name="Assign tasks")).to_be_visible()
    lead.wait_for_load_state()
    lead.get_by_label("Ada").check()
    lead.get_by_label("Bob").check()
    lead.get_by_label("Overlap (annotators per item)").fill("2")
    lead.get_by_label("Blind mode").check()
    lead.get_by_role("button", name="Assign", exact=True).click()
    assigned = "Assigned 6 items (0 were assigned before)."
    expect(lead.locator("#assign-result")).to_have_text(assigned)
    table = lead.locator("#assign-table")
    expect(table.get_by_role("row", name="Ada 6 0 0")).to_be_visible()
    expect(table.get_by_role("row", name="Bob 6 0 0")).to_be_visible()

    ada = browser.new_page(viewport=SIZES[0])
    sign_in(ada, url + "/projects/ferries", "ada", PASSWORD)
    ada_items = work_through(ada, url, 6)
    expect(ada.get_by_role("heading", name="My queue")).to_be_visible()  # all done: back
    expect(ada.get_by_text("6 of 6 done").first).to_be_visible()
    expect(ada.get_by_role("button", name="Start")).to_be_disabled()

    bob = browser.new_page(viewport=SIZES[0])
    sign_in(bob, url + "/projects/ferries", "bob", PASSWORD)
    bob_items = work_through(bob, url, 2)
    expect(bob.locator("#queue-count")).to_have_text("2 of 6 done")
    assert not set(ada_items) & set(bob_items)  # each on their own copy
    # blind mode: ada's version stays away from bob, on its page and in the list
    bob.goto(f"{url}/projects/ferries/items/{ada_items[0]}")
    expect(bob.get_by_text("blind mode keeps versions apart until review")).to_be_visible()
    bob.goto(f"{url}/projects/ferries/items?copies=include")
    expect(bob.get_by_role("heading", name="Items (6)")).to_be_visible()  # the gold items only
    ada_queue = queue_of(ws, project, get_account(ws, "ada").id)
    assert (ada_queue.done, ada_queue.total) == (6, 6)

    lead.reload()
    expect(table.get_by_role("row", name="Ada 0 6 0")).to_be_visible()
    expect(table.get_by_role("row", name="Bob 4 2 0")).to_be_visible()
    lead.goto(f"{url}/projects/ferries/items?copies=only")
    expect(lead.get_by_role("heading", name="Items (12)")).to_be_visible()  # the lead sees all

    # both pages fit at both sizes, in both languages
    for page, path in ((bob, "/queue"), (lead, "/assignments")):
        for size in SIZES:
            page.set_viewport_size(size)
            for language in ("en", "de"):
                page.goto(f"{url}/language/{language}?next=/projects/ferries{path}")
                expect(page.locator("html")).to_have_attribute("lang", language)
                fits(page)
    expect(lead.get_by_role("heading", name="Aufgaben verteilen")).to_be_visible()
    bob.goto(f"{url}/projects/ferries/queue")
    expect(bob.get_by_text("2 von 6 erledigt").first).to_be_visible()
