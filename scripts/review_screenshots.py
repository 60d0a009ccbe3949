"""Screenshots of review for docs/screenshots/ (run after changing the review UI).

Run: python scripts/review_screenshots.py [--out build/screenshots] [--all]

Starts the app in team mode on the demo project in a temporary workspace, submits a few demo
items written by an annotator, signs in as a reviewer and saves ``review.png`` (the item
editor with a reviewer's change shown as a diff before accepting) and ``review-queue.png``
(the queue, "N of M reviewed"), 1280x720, English. ``--all`` also saves both at 1440x900 and
in German (``review-de-1440x900.png`` ...), to look at every layout.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from playwright.sync_api import Browser, Page, sync_playwright
from screenshot_docs import OUT_DIR, publish
from screenshot_gold import gold_body
from screenshots import CHROMIUM, CHROMIUM_ARGS, serve

from assay import open_workspace
from assay.demo import gold_items, open_demo
from assay.gold.items import create_item, parse_item, set_status
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Project
from assay.review.reviews import review_item
from assay.store.workspace import Workspace

PASSWORD = "correct horse battery"


def team_with_work(ws: Workspace, project: Project) -> None:
    """An annotator's six submitted items, two of them already reviewed by a lead."""
    create_account(ws, "admin", PASSWORD, admin=True)
    people = {}
    for name, shown, role in (("ana", "Ana", "annotator"), ("rita", "Rita", "reviewer"),
                              ("lee", "Lee", "lead")):  # fmt: skip
        people[name] = create_account(ws, name, PASSWORD, display_name=shown).id
        set_role(ws, project.id, people[name], role)
    for n, gold in enumerate(gold_items()[:6]):
        data = parse_item(gold_body(ws, project, gold), "demo item")
        item = create_item(ws, project, data, author=people["ana"])
        item = set_status(ws, project, item.id, "submitted", item.version, actor=people["ana"])
        if n >= 4:
            verdict, reason = ("accept", "") if n == 4 else ("reject", "Which year is meant?")
            review_item(ws, project, item.id, verdict, item.version, reviewer=people["lee"],
                        reason=reason)  # fmt: skip
    set_team_mode(ws, True)


def shoot(browser: Browser, base_url: str, out: Path, size: dict[str, int], lang: str) -> None:
    suffix = (
        "" if (size["width"], lang) == (1280, "en") else f"-{lang}-{size['width']}x{size['height']}"
    )
    context = browser.new_context(viewport=size, locale="en-GB" if lang == "en" else "de-DE")
    page: Page = context.new_page()
    page.goto(f"{base_url}/projects/demo/review")
    page.locator("input[name=username]").fill("rita")
    page.locator("input[name=password]").fill(PASSWORD)
    page.locator("main button[type=submit]").click()
    page.locator("#review-start").wait_for()
    page.wait_for_load_state()
    page.screenshot(path=str(out / f"review-queue{suffix}.png"))
    page.locator("#review-start").click()
    page.locator("#review-bar").wait_for()
    page.locator("#save-state.saved, #save-state.idle").wait_for()
    answer = page.locator("#f-answer")
    answer.fill(answer.input_value() + " (checked against the source)")
    page.locator("#save-state.saved").wait_for()
    page.evaluate("window.scrollTo(0, 0)")  # the question, with the dialog over the form
    page.locator("#review-accept-edited:enabled").click()
    page.locator("#review-diff table.changes").wait_for()
    page.screenshot(path=str(out / f"review{suffix}.png"))
    context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--all", action="store_true", help="also 1440x900 and German")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    layouts = [({"width": 1280, "height": 720}, "en")]
    if args.all:
        layouts += [({"width": 1440, "height": 900}, "en"), ({"width": 1280, "height": 720}, "de"),
                    ({"width": 1440, "height": 900}, "de")]  # fmt: skip
    for size, lang in layouts:  # a fresh workspace each: the first reviewer took an item
        with tempfile.TemporaryDirectory() as home:
            ws = open_workspace(Path(home))
            project, _ = open_demo(ws)
            team_with_work(ws, project)
            with serve(ws, port=8766) as base_url, sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                shoot(browser, base_url, args.out, size, lang)
                browser.close()
            ws.close()
    for png in sorted(args.out.glob("review*.png")):
        print(png)


if __name__ == "__main__":
    main()
    publish()
