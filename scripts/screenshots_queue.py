"""Screenshots of assignment and queues for docs/screenshots/ (run after changing them).

Run: python scripts/screenshots_queue.py [--out build/screenshots] [--all DIR]

Builds a team workspace (a lead, two annotators, six items of the demo's kind assigned with
overlap 2 in blind mode; one task done, one skipped, one sent back by a reviewer) and saves
the annotator's queue, the editor opened from it, and the lead's assignment page: English at
1280x720 (queue.png, queue-editor.png, assign.png) and German at 1440x900 (queue-de.png,
assign-de.png). ``--all DIR`` also writes every page at both sizes in both languages there,
to look at.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright
from screenshot_docs import OUT_DIR, publish
from screenshots import CHROMIUM, CHROMIUM_ARGS, ROOT, serve

from assay import open_workspace
from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item, get_item, set_status
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Evidence, Item, Turn
from assay.review.assignments import ItemFilter, assign, set_queue_settings
from assay.review.queue import next_task, skip_task, submit_task
from assay.review.tasks import queue_of
from assay.store.db import utcnow
from assay.store.projects import create_project
from assay.store.review_schema import reviews
from assay.store.workspace import Workspace

PASSWORD = "correct horse battery"
FERRY = (
    "# Night ferry\n\nThe night ferry leaves at 22:40 from pier 3. Bikes ride free. "
    "From December the winter timetable applies: the last ferry leaves at 21:15.\n"
)
QUESTIONS = (
    "When does the night ferry leave?",
    "From which pier does the night ferry leave?",
    "Do bikes ride free on the night ferry?",
    "When does the last ferry leave in winter?",
    "Which timetable applies from December?",
    "Is there a ferry after midnight?",
)
SIZES = {"1280": {"width": 1280, "height": 720}, "1440": {"width": 1440, "height": 900}}


def seed(ws: Workspace) -> None:
    create_account(ws, "root", PASSWORD, admin=True)
    project = create_project(ws, "ferries", "en", settings={"annotators_see_all": True})
    people = {}
    for name, role, shown in (("lea", "lead", "Lea"), ("ada", "annotator", "Ada"),
                              ("bob", "annotator", "Bob")):  # fmt: skip
        people[name] = create_account(ws, name, PASSWORD, display_name=shown).id
        set_role(ws, project.id, people[name], role)
    doc = ingest_bytes(ws, project, "night-ferry.md", FERRY.encode())
    for question in QUESTIONS:
        passage = Evidence(doc_id=doc.id, start=None, end=None, text="22:40")
        turn = Turn(query=question, answer="At 22:40.", evidence=[passage])
        create_item(ws, project, Item(turns=[turn], origin="llm-suggestion"))
    set_queue_settings(ws, project, blind=True)
    assign(ws, project, ItemFilter(status="draft"), ["ada", "bob"], assigned_by=people["lea"],
           overlap=2)  # fmt: skip
    ada = people["ada"]
    for _ in range(2):
        task = next_task(ws, project, ada)
        assert task is not None
        submit_task(ws, project, task.id, ada, get_item(ws, project, task.item_id).version)
    task = next_task(ws, project, ada)
    assert task is not None
    skip_task(ws, project, task.id, ada, "The document does not say; ask the ferry office.")
    # a reviewer sends the first one back (what the review part writes)
    done = next(t.item_id for t in queue_of(ws, project, ada).tasks if t.state == "done")
    with ws.engine.begin() as conn:
        item = get_item(ws, project, done, conn=conn)
        set_status(ws, project, done, "rejected", item.version, actor=people["lea"], conn=conn)
        conn.execute(
            reviews.insert().values(
                project_id=project.id, item_id=done, reviewer_id=people["lea"],
                verdict="reject", reason="Cite the timetable, not the intro.",
                submitted_version=item.version, changes=[], at=utcnow(),
            )
        )  # fmt: skip
    set_team_mode(ws, True)


def sign_in(page: Page, base_url: str, username: str) -> None:
    page.goto(f"{base_url}/login")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text(f"Signed in as {username}").wait_for()


def shoot(page: Page, base_url: str, path: str, language: str, size: str, target: Path) -> None:
    page.set_viewport_size(SIZES[size])
    page.goto(f"{base_url}/language/{language}?next={path}")
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(target))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--all", type=Path, default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(Path(home))
        seed(ws)
        with serve(ws) as base_url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            ada = browser.new_page()
            sign_in(ada, base_url, "ada")
            lead = browser.new_page()
            sign_in(lead, base_url, "lea")
            queue, assignments = "/projects/ferries/queue", "/projects/ferries/assignments"
            shoot(ada, base_url, queue, "en", "1280", args.out / "queue.png")
            shoot(ada, base_url, queue, "de", "1440", args.out / "queue-de.png")
            shoot(lead, base_url, assignments, "en", "1280", args.out / "assign.png")
            shoot(lead, base_url, assignments, "de", "1440", args.out / "assign-de.png")
            ada.goto(f"{base_url}/language/en?next={queue}")
            ada.get_by_role("button", name="Start").click()
            ada.locator("#queue-bar").wait_for()
            ada.locator("#save-state.saved").wait_for()
            ada.screenshot(path=str(args.out / "queue-editor.png"))
            if args.all:
                args.all.mkdir(parents=True, exist_ok=True)
                for page, name, path in ((ada, "queue", queue), (lead, "assign", assignments)):
                    for size in SIZES:
                        for language in ("en", "de"):
                            target = args.all / f"{name}-{language}-{size}.png"
                            shoot(page, base_url, path, language, size, target)
            browser.close()
        ws.close()
    for png in sorted(args.out.glob("*.png")):
        print(png.relative_to(ROOT) if png.is_relative_to(ROOT) else png)


if __name__ == "__main__":
    main()
    publish()
