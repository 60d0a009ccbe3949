"""From a production log to assigned tasks in the real Chromium (team mode, signed in): a
lead uploads a log, sees the import report, the topics and the coverage gaps, shows the
sample with the reasons for each pick, and makes assigned tasks of it in one click; the
annotator finds them in their queue. The page fits at 1280x720 in English and German."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from assay.corpus.ingest import ingest_bytes
from assay.people.accounts import create_account, get_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.review.tasks import queue_of
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from tests.browser.test_queue import fits
from tests.browser.test_team_scenario import sign_in
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
FERRY = "# Night ferry\n\nThe night ferry leaves at 22:40 from pier 3. Bikes ride free.\n"
LEAVES = "The night ferry leaves at 22:40 from pier 3."
FARES = "# Fares\n\nChildren under six travel free. A day pass costs 9 euros.\n"
LOG = [
    {"question": "When does the night ferry leave?", "answer": "At 22:40.",
     "passages": [{"doc": "night-ferry.md", "text": LEAVES}],
     "feedback": "thumbs_down"},
    {"question": "when does the night ferry leave", "answer": "At 22:40."},
    {"question": "How much is a day pass? Send it to kim@example.org",
     "passages": [{"doc": "fares.md", "text": "A day pass costs 9 euros."}]},
    {"question": "Can I take my dog on the ferry?",
     "passages": [{"text": "Dogs on a short lead are welcome."}]},
    {"question": "Is there a bus from pier 3 after midnight?"},
]  # fmt: skip


def seed(ws: Workspace) -> None:
    create_account(ws, "root", PASSWORD, admin=True)
    project = create_project(ws, "ferries", "en")
    for name, role in (("lea", "lead"), ("ada", "annotator")):
        set_role(ws, project.id, create_account(ws, name, PASSWORD, display_name=name.title()).id,
                 role)  # fmt: skip
    ingest_bytes(ws, project, "night-ferry.md", FERRY.encode())
    ingest_bytes(ws, project, "fares.md", FARES.encode())
    set_team_mode(ws, True)


def test_a_lead_turns_a_production_log_into_assigned_tasks(
    browser: Browser, ws: Workspace, live_server: LiveServer, tmp_path: Path
) -> None:
    seed(ws)
    url = live_server.url
    log = tmp_path / "support-log.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in LOG))

    lead = browser.new_page(viewport={"width": 1280, "height": 720})
    sign_in(lead, url + "/projects/ferries/assignments", "lea", PASSWORD)
    lead.get_by_role("link", name="Production questions").click()
    expect(lead.get_by_role("heading", name="Production questions", exact=True)).to_be_visible()
    expect(lead.locator("#cand-empty")).to_be_visible()
    lead.wait_for_load_state()
    lead.locator("#cand-file").set_input_files(str(log))
    lead.get_by_role("button", name="Import").click()
    report = lead.locator("#cand-report")
    expect(report).to_contain_text("Imported 5 questions from 5 lines (0 skipped): 4 groups.")
    expect(report).to_contain_text("Masked: email 1.")
    expect(report).to_contain_text("2 anchored in documents, 1 found in no document")
    lead.get_by_role("link", name="Show the new groups and coverage").click()
    expect(lead.locator("#cand-groups")).to_contain_text("When does the night ferry leave?")
    expect(lead.locator("#cand-gaps")).to_contain_text("night-ferry.md")

    lead.get_by_label("How many").fill("3")
    lead.get_by_label("Ada").check()
    lead.get_by_role("button", name="Show the sample").click()
    picks = lead.locator("#cand-picks > li")
    expect(picks).to_have_count(3)
    expect(picks.first).to_contain_text("covers night-ferry.md, which has no gold yet")
    expect(picks.first).to_contain_text("asked 2 times")
    expect(picks.first).to_contain_text("1 negative feedback")
    expect(lead.locator("#cand-picks")).to_contain_text("covers fares.md, which has no gold yet")
    if os.environ.get("ASSAY_SHOTS"):
        lead.screenshot(path=f"{os.environ['ASSAY_SHOTS']}/candidates-en.png", full_page=True)
    lead.get_by_role("button", name="Make the items and assign them (3)").click()
    expect(lead.locator("#cand-result")).to_contain_text("Made 3 items and assigned them: ada 3.")

    project = get_project(ws, "ferries")
    queue = queue_of(ws, project, get_account(ws, "ada").id)
    assert queue.total == 3
    assert {t.query for t in queue.tasks} >= {"When does the night ferry leave?"}
    ada = browser.new_page(viewport={"width": 1280, "height": 720})
    sign_in(ada, url + "/projects/ferries/queue", "ada", PASSWORD)
    expect(ada.get_by_text("0 of 3 done").first).to_be_visible()

    lead.goto(f"{url}/projects/ferries/dashboard")
    panel = lead.locator("#dash-cand")
    expect(panel).to_contain_text("Documents with gold: 0 of 2")
    expect(panel.locator("#dash-cand-gaps")).to_contain_text("night-ferry.md")
    fits(lead)
    if os.environ.get("ASSAY_SHOTS"):
        panel.screenshot(path=f"{os.environ['ASSAY_SHOTS']}/candidates-dashboard.png")

    for language, heading in (("en", "Production questions"), ("de", "Fragen aus dem Betrieb")):
        lead.goto(f"{url}/language/{language}?next=/projects/ferries/candidates")
        expect(lead.get_by_role("heading", name=heading, exact=True)).to_be_visible()
        fits(lead)
    lead.get_by_role("button", name="Stichprobe zeigen").click()
    expect(lead.locator("#cand-picks > li")).to_have_count(1)
    expect(lead.locator("#cand-picks")).to_contain_text("Thema")
    if os.environ.get("ASSAY_SHOTS"):
        lead.screenshot(path=f"{os.environ['ASSAY_SHOTS']}/candidates-de.png", full_page=True)
