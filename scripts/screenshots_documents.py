"""Screenshots of the documents list, a document's view and the import & export page for
docs/screenshots/ (run after changing them).

Run: python scripts/screenshots_documents.py [--out build/screenshots] [--all DIR]

Starts the app on the demo project in a temporary workspace with a few demo gold items (so
the "used by" column and the citing list have something to show), refuses an image on the
documents page, opens a Markdown document rendered with a passage selected, and finishes an
export. Saves English at 1440x900 (documents.png, document-view.png, transfer.png) and
1280x720 (…-1280.png), German at 1440x900 (…-de.png). ``--all DIR`` also writes every page at
both sizes in both languages there, to look at.
"""

from __future__ import annotations

import argparse
import base64
import socket
import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright
from screenshot_docs import OUT_DIR, publish
from screenshots import CHROMIUM, CHROMIUM_ARGS, serve, write_items

from assay import open_workspace
from assay.corpus.documents import get_document_by_name
from assay.demo import open_demo
from assay.gold.item_lists import list_items
from assay.gold.items import set_status
from assay.records import Project
from assay.store.workspace import Workspace

SIZES = {"1440": {"width": 1440, "height": 900}, "1280": {"width": 1280, "height": 720}}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4).decode()


def drop_image(page: Page) -> None:
    page.evaluate(
        """(data) => {
            const transfer = new DataTransfer();
            const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
            const name = "scan-of-the-timetable.png";
            transfer.items.add(new File([bytes], name, { type: "image/png" }));
            const zone = document.querySelector("#dropzone");
            for (const kind of ["dragenter", "dragover", "drop"]) {
                const init = { dataTransfer: transfer, bubbles: true, cancelable: true };
                zone.dispatchEvent(new DragEvent(kind, init));
            }
        }""",
        PNG,
    )
    page.locator(".upload-item.error").wait_for()


def select_passage(page: Page, words: str) -> None:
    page.evaluate(
        """(words) => {
            const body = document.getElementById("doc-body");
            const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                const at = node.data.indexOf(words);
                if (at < 0) continue;
                const range = document.createRange();
                range.setStart(node, at);
                range.setEnd(node, at + words.length);
                getSelection().removeAllRanges();
                getSelection().addRange(range);
                return;
            }
        }""",
        words,
    )


def shoot(page: Page, base: str, doc_id: str, lang: str, size: str, out: Path, name: str) -> None:
    page.set_viewport_size(SIZES[size])
    page.context.add_cookies([{"name": "assay_lang", "value": lang, "url": base}])
    suffix = ("-de" if lang == "de" else "") + ("-1280" if size == "1280" else "")
    page.goto(f"{base}/projects/demo/documents")
    drop_image(page)
    page.screenshot(path=str(out / f"documents{suffix}.png"), full_page=True)
    page.goto(f"{base}/projects/demo/documents/{doc_id}")
    select_passage(page, "the public transport operator for the city of Kelmstadt")
    page.wait_for_timeout(200)
    page.screenshot(path=str(out / f"document-view{suffix}.png"))
    page.goto(f"{base}/projects/demo/transfer?format=beir")
    page.locator("#export-format").select_option("native")
    page.locator("#import-drop").scroll_into_view_if_needed()
    page.locator("#export-start").click()
    page.locator("#export-download").wait_for(timeout=60_000)
    page.wait_for_timeout(500)
    page.screenshot(path=str(out / f"transfer{suffix}.png"), full_page=True)


def accept_some(ws: Workspace, project: Project) -> None:
    """Accept half of the items: the export's default is the accepted ones."""
    rows = list_items(ws, project, limit=100)[1]
    for row in rows[::2]:
        set_status(ws, project, row.id, "accepted", row.version)


def free_port() -> int:
    """A port nothing listens on now (other screenshot scripts may hold the usual one)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--all", type=Path, default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(Path(home))
        project, _ = open_demo(ws)
        doc = get_document_by_name(ws, project, "company-profile.md")
        with serve(ws, port=free_port()) as base, sync_playwright() as pw:
            write_items(ws, project, base)
            accept_some(ws, project)
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            wanted = [("en", "1440"), ("en", "1280"), ("de", "1440")]
            if args.all:
                args.all.mkdir(parents=True, exist_ok=True)
                for lang in ("en", "de"):
                    for size in SIZES:
                        shoot(page, base, doc.id, lang, size, args.all, "all")
            for lang, size in wanted:
                shoot(page, base, doc.id, lang, size, args.out, "docs")
            browser.close()
        ws.close()


if __name__ == "__main__":
    main()
    publish()
