"""Screenshots of the conversation workbench for docs/screenshots/ (run after changing it).

Run: python scripts/conversation_screenshots.py [--out build/screenshots] [--all-sizes DIR]

Builds the demo in a temporary workspace, chats three turns in the workbench (passages
rated, an edited answer, enrichments), then saves the workbench at 1440x900 in English
(``conversation.png``), German (``conversation-de.png``) and at 1280x720
(``conversation-1280.png``), and a regenerated draft beside an answer
(``conversation-draft.png``); ``--all-sizes`` also writes every size in both languages, and
the items list with the conversation marked, to DIR.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from screenshot_docs import OUT_DIR, publish  # noqa: E402
from screenshot_gold import ask_demo  # noqa: E402
from screenshots import CHROMIUM, CHROMIUM_ARGS, serve  # noqa: E402

from assay import open_workspace  # noqa: E402
from assay.demo import open_demo  # noqa: E402

QUESTIONS = (
    "In which year was the tram company that became Kelmtal Mobil founded?",
    "What share of it does the City of Kelmstadt own?",
    "How many employees does it have?",
)


def chat(page: Page, base_url: str) -> str:
    """Three turns with rated passages, an edited answer and enrichments; the page's URL."""
    ask_demo(page, base_url, QUESTIONS)
    first = page.locator('.turn[data-turn="0"]')
    passages = first.locator(".passage")
    passages.nth(0).get_by_role("button", name="relevant", exact=True).click()
    passages.nth(1).get_by_role("button", name="irrelevant", exact=True).click()
    passages.nth(2).get_by_role("button", name="distracting", exact=True).click()
    first.locator('input[data-enrichment="answerability"][value="ANSWERABLE"]').check()
    first.locator('input[data-enrichment="Question Type"][value="Factoid"]').check()
    answer = page.locator("#t0-answer")
    answer.fill("Checked: " + answer.input_value().strip())
    page.locator("#save-state").get_by_text("All changes saved").wait_for(timeout=15_000)
    return page.url


def draft_screenshot(page: Page, url: str, out: Path) -> None:
    """Turn 1 regenerated: the new draft waits beside the person's answer
    (``conversation-draft.png``)."""
    page.goto(url)
    first = page.locator('.turn[data-turn="0"]')
    first.get_by_role("button", name="Regenerate").click()
    page.locator("#t0-draft").wait_for(timeout=30_000)
    page.locator("#t0-answer").scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, 120)")
    page.screenshot(path=str(out / "conversation-draft.png"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--all-sizes", type=Path, default=None)
    parser.add_argument("--port", type=int, default=8779)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(home)
        open_demo(ws)
        with serve(ws, port=args.port) as base_url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 900}, locale="en")
            url = chat(page, base_url)
            page.close()
            shots = [
                (args.out, "en", 1440, 900, "conversation"),
                (args.out, "de", 1440, 900, "conversation-de"),
                (args.out, "en", 1280, 720, "conversation-1280"),
            ]
            if args.all_sizes:
                args.all_sizes.mkdir(parents=True, exist_ok=True)
                shots += [
                    (args.all_sizes, lang, w, h, f"conversation-{lang}-{w}")
                    for lang in ("en", "de")
                    for w, h in ((1440, 900), (1280, 720))
                ]
            for folder, lang, width, height, name in shots:
                page = browser.new_page(
                    viewport={"width": width, "height": height},
                    locale=lang,
                    extra_http_headers={"Accept-Language": lang},
                )
                page.goto(url)
                page.locator(".turn .answer-view .support").first.wait_for(timeout=15_000)
                page.evaluate("window.scrollTo(0, 0)")
                page.screenshot(path=str(folder / f"{name}.png"))
                if folder == args.all_sizes and name.count("-") == 2:
                    first = page.locator('.turn[data-turn="0"]')
                    first.locator(".passage").first.scroll_into_view_if_needed()
                    page.screenshot(path=str(folder / f"{name}-passages.png"))
                    first.locator(".turn-enrichments").scroll_into_view_if_needed()
                    page.screenshot(path=str(folder / f"{name}-answer.png"))
                    page.goto(f"{base_url}/projects/demo/items?kind=conversation")
                    page.screenshot(path=str(folder / f"items-{lang}-{width}.png"))
                    page.goto(f"{base_url}/projects/demo")
                    page.screenshot(path=str(folder / f"home-{lang}-{width}.png"))
                page.close()
            page = browser.new_page(viewport={"width": 1440, "height": 900}, locale="en")
            draft_screenshot(page, url, args.out)
            browser.close()
        ws.close()


if __name__ == "__main__":
    main()
    publish()
