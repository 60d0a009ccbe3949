"""A screenshot of the offline judging page for docs/screenshots/judging-offline.png.

Run: python scripts/screenshots_judging_offline.py [--out build/screenshots] [--size 1440x900]

Imports the kiddie topics and runs (../shared/fixtures/autojudge/kiddie) into a temporary
workspace, writes the reports page with `assay judge html`'s function, opens it from disk in
the system Chromium, judges two reports (one with a selection across two sentences) and
saves judging-offline.png.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from assay import open_workspace
from assay.judging.offline_page import offline_page, write_offline_page
from assay.judging.run_import import import_judging_inputs
from assay.store.projects import create_project

sys.path.insert(0, str(Path(__file__).resolve().parent))
from screenshot_docs import OUT_DIR, publish
from screenshots import CHROMIUM, CHROMIUM_ARGS, ROOT

KIDDIE = ROOT.parent / "shared" / "fixtures" / "autojudge" / "kiddie"
SELECT = """([start, end]) => {
    const [first, second] = document.querySelectorAll('[aria-label="Report text"] .sentence');
    const range = document.createRange();
    range.setStart(first.firstChild, first.textContent.indexOf(start));
    range.setEnd(second.firstChild, second.textContent.indexOf(end) + end.length);
    window.getSelection().removeAllRanges();
    window.getSelection().addRange(range);
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--size", default="1440x900", help="WIDTHxHEIGHT of the window")
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(Path(home) / "ws")
        project = create_project(ws, "kiddie")
        import_judging_inputs(
            ws, project, topics=KIDDIE / "topics" / "kiddie-topics.jsonl", runs=[KIDDIE / "runs"]
        )
        page_file = Path(home) / "kiddie-reports.html"
        write_offline_page(page_file, offline_page(ws, project, mode="reports", dataset="kiddie"))
        ws.close()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(page_file.as_uri())
            page.get_by_label("Your name").fill("Ada")
            page.get_by_label("Report text").focus()
            page.evaluate(SELECT, ["green pigment", "trees stop"])
            page.keyboard.press("m")
            page.keyboard.press("2")
            page.get_by_label("Comment").fill("Right idea; the red colours need a source.")
            page.keyboard.press("Escape")
            page.keyboard.press("j")
            page.keyboard.press("1")
            page.keyboard.press("k")
            page.mouse.move(0, 0)
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(args.out / "judging-offline.png"))
            browser.close()
    print(f"wrote {args.out / 'judging-offline.png'}")


if __name__ == "__main__":
    main()
    publish()
