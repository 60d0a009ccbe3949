"""Screenshots of the single-turn item editor for docs/screenshots/ (run after changing it).

Run: python scripts/screenshots_item_editor.py [--out build/screenshots] [--all DIR]

Starts the app on the demo project in a temporary workspace, writes the demo gold items
through the JSON API, opens one from the items list (so Previous / Next and "N of M" show)
with a sub-span marked, and saves the editor at 1440x900 (item-editor.png, German
item-editor-de.png), at 1280x720 (item-editor-1280.png) and with the document view open
(item-editor-document.png). ``--all DIR``: every size in both languages, to look at.
"""

from __future__ import annotations

import argparse
import socket
import tempfile
from pathlib import Path

import httpx
from playwright.sync_api import Page, sync_playwright
from screenshot_docs import OUT_DIR, publish
from screenshot_gold import write_items
from screenshots import CHROMIUM, CHROMIUM_ARGS, serve

from assay import open_workspace
from assay.demo import open_demo

SIZES = {"1440": {"width": 1440, "height": 900}, "1280": {"width": 1280, "height": 720}}


def add_sub_span(base_url: str, item_id: str) -> None:
    """Mark a sentence of the first relevant passage's document as its own distracting span,
    so the hits show their span badges."""
    api = f"{base_url}/api/projects/demo/items/{item_id}"
    with httpx.Client() as client:
        client.get(base_url + "/")
        client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
        item = client.get(api).json()
        body = item["input"]
        first = body["turns"][0]["evidence"][0]
        words = first["text"].split(". ")
        sentence = words[-1].strip() if len(words) > 1 else first["text"][:40]
        body["turns"][0]["evidence"].append(
            {"doc_id": first["doc_id"], "text": sentence.rstrip("."), "label": "distracting"}
        )
        client.put(api, json={"version": item["item"]["version"], "item": body}).raise_for_status()


def open_from_list(page: Page, base_url: str, language: str, query: str) -> None:
    page.goto(f"{base_url}/language/{language}?next=/projects/demo/items?sort=created")
    page.locator("td.q a", has_text=query).first.click()
    page.locator("#hits .hit").first.wait_for()
    page.locator("#save-state.saved").wait_for()
    page.wait_for_timeout(400)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--all", type=Path, default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(Path(home))
        project, _ = open_demo(ws)
        with serve(ws, free_port()) as base_url, sync_playwright() as playwright:
            item_id = write_items(ws, project, base_url)
            add_sub_span(base_url, item_id)
            with httpx.Client() as client:
                query = client.get(f"{base_url}/api/projects/demo/items/{item_id}").json()
            question = query["item"]["turns"][0]["query"]
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            shots = [("1440", "en", "item-editor.png"), ("1280", "en", "item-editor-1280.png")]
            shots.append(("1440", "de", "item-editor-de.png"))
            if args.all:
                args.all.mkdir(parents=True, exist_ok=True)
                shots += [
                    (size, lang, str(args.all / f"item-editor-{lang}-{size}.png"))
                    for size in SIZES
                    for lang in ("en", "de")
                ]
            for size, language, name in shots:
                page = browser.new_page(viewport=SIZES[size])  # type: ignore[arg-type]
                open_from_list(page, base_url, language, question[:30])
                target = Path(name) if "/" in name else args.out / name
                page.screenshot(path=str(target))
                page.close()
            page = browser.new_page(viewport=SIZES["1440"])  # type: ignore[arg-type]
            open_from_list(page, base_url, "en", question[:30])
            page.locator("#hits .hit").first.get_by_role("button", name="Open the document").click()
            page.locator("#doc-panel .focus").first.wait_for()
            page.wait_for_timeout(300)
            page.screenshot(path=str(args.out / "item-editor-document.png"))
            browser.close()
        ws.close()


if __name__ == "__main__":
    main()
    publish()
