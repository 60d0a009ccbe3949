"""Screenshots of an item's history page and the dataset versions pages for docs/screenshots/.

Run: python scripts/screenshots_versions.py [--out build/screenshots] [--size 1280x900]
[--language en]

Starts the app on the demo project in a temporary workspace (as scripts/screenshots.py
does), accepts demo items, edits one (so its history has a save, a status change and a
restore), freezes two versions with changes between them, and saves history.png,
versions.png and versions-diff.png with the system Chromium.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from assay import open_workspace
from assay.demo import open_demo
from assay.gold.item_lists import item_ids
from assay.gold.items import editable_copy, get_item, save_item, set_status
from assay.review.history import item_history, restore_version
from assay.review.versions import create_version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from screenshot_docs import OUT_DIR, publish
from screenshot_gold import write_items
from screenshots import CHROMIUM, CHROMIUM_ARGS, ROOT, serve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--size", default="1280x900", help="WIDTHxHEIGHT of the window")
    parser.add_argument("--language", default="en", choices=("en", "de"))
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(Path(home))
        project, _ = open_demo(ws)
        with serve(ws) as base_url, sync_playwright() as playwright:
            shown = write_items(ws, project, base_url)
            for item_id in item_ids(ws, project):
                item = get_item(ws, project, item_id)
                set_status(ws, project, item_id, "accepted", item.version)
            create_version(ws, project, "2026-11-pilot")
            item = get_item(ws, project, shown)
            edited = editable_copy(item)
            edited.turns[0].answer = "From pier 3, at 22:40 (winter timetable: 21:15)."
            edited.turns[0].alternatives = ["22:40"]
            edited.turns[0].evidence[0].label = "distracting"
            edited.notes = "Answer checked against the winter timetable."
            saved = save_item(ws, project, shown, edited, item.version)
            first = item_history(ws, project, shown)[0].event
            restored = restore_version(ws, project, shown, first, saved.version)
            again = editable_copy(restored)
            again.turns[0].answer = edited.turns[0].answer
            save_item(ws, project, shown, again, restored.version)
            others = item_ids(ws, project)
            last = get_item(ws, project, others[-1])
            set_status(ws, project, last.id, "rejected", last.version)
            create_version(ws, project, "2026-12-release")

            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": width, "height": height})
            page = context.new_page()
            page.goto(f"{base_url}/language/{args.language}?next=/")
            suffix = "" if args.language == "en" else f"-{args.language}"
            page.goto(f"{base_url}/projects/demo/items/{shown}/history")
            page.screenshot(path=str(args.out / f"history{suffix}.png"))
            page.goto(f"{base_url}/projects/demo/versions")
            page.screenshot(path=str(args.out / f"versions{suffix}.png"))
            page.get_by_role("button").filter(has_text="Show differences").or_(
                page.get_by_role("button").filter(has_text="Unterschiede zeigen")
            ).click()
            page.wait_for_load_state()
            page.screenshot(path=str(args.out / f"versions-diff{suffix}.png"))
            browser.close()
        ws.close()
    for png in sorted(args.out.glob("*.png")):
        print(png.relative_to(ROOT) if png.is_relative_to(ROOT) else png)


if __name__ == "__main__":
    main()
    publish()
