"""An annotator's walk through one single-turn item, counted in clicks and keys.

Run: python benchmarks/annotator_walk.py [--rounds 3]

Drives the system Chromium through the item editor (a fresh workspace, served on loopback)
and writes one AND item: a question, one whole hit as relevant (group 1), a sub-span of
another hit dragged with the mouse as relevant (group 2), a third hit as distracting, a
reference answer, and Submit. Every click, key press and mouse drag goes through a counter;
typing text is counted apart (characters), as the issue does. At the end the stored item is
checked (two groups, the sub-span's exact text, one distracting passage, submitted).

The walk takes the fewest steps each editor offers, and finds out which editor it faces:
the one before the "annotator's day" (no search while typing, no focus in the question,
a passage's whole text behind "Whole passage", Submit that stays) or the one after (focus
in the question, search from it, the passage in the hit, Ctrl+Enter = submit and new). To
count the editor before, run this script with the old sources first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn
from playwright.sync_api import Locator, Page, expect, sync_playwright

from assay import open_workspace
from assay.corpus.ingest import ingest_bytes
from assay.gold.item_lists import list_items
from assay.gold.items import get_item
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
DOCS = {
    "night-ferry.md": "# Night ferry\n\nThe night ferry leaves at 22:40 from pier 3.\n",
    "winter.txt": "Winter timetable: from December the night ferry leaves at 21:15.\n",
    "bikes.md": "Bikes ride free on every ferry, the night ferry too.\n",
    "harbour.txt": "The harbour office opens at 8:00 and sells tickets for all ferries.\n",
}
QUESTION = "When does the night ferry leave in summer and in winter?"
ANSWER = "At 22:40, and at 21:15 from December."


@dataclass
class Counts:
    clicks: int = 0
    keys: int = 0
    drags: int = 0
    typed: int = 0
    steps: list[str] = field(default_factory=list)

    def click(self, target: Locator, why: str) -> None:
        target.click()
        self.clicks += 1
        self.steps.append(f"click: {why}")

    def key(self, page: Page, key: str, why: str) -> None:
        page.keyboard.press(key)
        self.keys += 1
        self.steps.append(f"key {key}: {why}")

    def type(self, page: Page, text: str) -> None:
        page.keyboard.type(text)
        self.typed += len(text)

    def drag(self, page: Page, container: str, needle: str, why: str) -> None:
        """Press the mouse before ``needle`` in the element and release it after."""
        box = page.evaluate(
            """([selector, needle]) => {
                const root = document.querySelector(selector);
                const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
                let text;
                while ((text = walker.nextNode())) {
                    const at = text.data.indexOf(needle);
                    if (at < 0) continue;
                    const range = document.createRange();
                    range.setStart(text, at);
                    range.setEnd(text, at + needle.length);
                    const r = range.getBoundingClientRect();
                    return { left: r.left, right: r.right, y: r.top + r.height / 2 };
                }
                return null;
            }""",
            [container, needle],
        )
        assert box, f"{needle!r} is not shown in {container}"
        page.mouse.move(box["left"] + 1, box["y"])
        page.mouse.down()
        page.mouse.move((box["left"] + box["right"]) / 2, box["y"], steps=4)
        page.mouse.move(box["right"] - 1, box["y"], steps=4)
        page.mouse.up()
        self.drags += 1
        self.steps.append(f"drag: {why}")


def hit(page: Page, name: str) -> Locator:
    return page.locator("#hits .hit", has_text=name)


def hit_selector(page: Page, name: str) -> str:
    names = page.locator("#hits .hit .docname").all_inner_texts()
    return f'#hits .hit[data-index="{names.index(name)}"] .hit-text'


def walk(page: Page, base: str) -> tuple[Counts, str]:
    counts = Counts()
    page.goto(base + "/projects/walk/items/new")
    page.locator("#save-state").wait_for()
    after = page.locator("#submit-new").count() > 0
    if not after:
        counts.click(page.get_by_label("Question", exact=True), "into the question")
    counts.type(page, QUESTION)
    if not after:
        counts.click(page.get_by_role("button", name="Search", exact=True), "search")
    expect(hit(page, "winter.txt")).to_be_visible(timeout=20_000)

    counts.click(hit(page, "night-ferry.md").get_by_role("button", name="Relevant"), "relevant")
    if not after:
        counts.click(hit(page, "winter.txt").locator("summary"), "open the whole passage")
    counts.drag(page, hit_selector(page, "winter.txt"), "21:15", "the sub-span")
    counts.key(page, "r", "mark the selection relevant")
    counts.click(hit(page, "bikes.md").get_by_role("button", name="Distracting"), "distracting")
    counts.click(page.get_by_label("Reference answer"), "into the answer")
    counts.type(page, ANSWER)
    if after:
        counts.key(page, "Control+Enter", "submit (and open a new item)")
        expect(page).to_have_url(f"{base}/projects/walk/items/new", timeout=20_000)
    else:
        expect(page.locator("#save-state")).to_have_text("Saved", timeout=20_000)
        counts.click(page.get_by_role("button", name="Submit", exact=True), "submit")
        expect(page.locator("#item-status")).to_have_text("submitted", timeout=20_000)
        # on to the next new item: "save and next" (Ctrl+Enter) opens one when no list goes on
        counts.key(page, "Control+Enter", "open a new item")
        expect(page).to_have_url(f"{base}/projects/walk/items/new", timeout=20_000)
    return counts, "after" if after else "before"


def check(ws: Workspace) -> None:
    project = ws_project(ws)
    rows = list_items(ws, project, limit=10)[1]
    item = get_item(ws, project, rows[0].id)
    evidence = item.turns[0].evidence
    found = sorted((e.label, e.group, e.text) for e in evidence)
    assert item.status == "submitted", item.status
    assert found == [
        ("distracting", 0, DOCS["bikes.md"].strip()),
        ("relevant", 1, DOCS["night-ferry.md"].strip()),
        ("relevant", 2, "21:15"),
    ], found


def ws_project(ws: Workspace):  # type: ignore[no-untyped-def]
    from assay.store.projects import get_project

    return get_project(ws, "walk")


@contextmanager
def serve(ws: Workspace) -> Iterator[str]:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(ws), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def one_round(browser_launch) -> tuple[Counts, str, float]:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(Path(home))
        project = create_project(ws, "walk", "en")
        for name, text in DOCS.items():
            ingest_bytes(ws, project, name, text.encode())
        with serve(ws) as base:
            browser = browser_launch()
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            started = time.perf_counter()
            counts, editor = walk(page, base)
            seconds = time.perf_counter() - started
            browser.close()
        check(ws)
        ws.close()
    return counts, editor, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import assay

    print(f"sources: {Path(assay.__file__).parent}")
    print(f"machine: {platform.machine()}, {platform.python_version()}, load {load()}")
    with sync_playwright() as playwright:

        def launch():  # type: ignore[no-untyped-def]
            return playwright.chromium.launch(
                executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
            )

        results = [one_round(launch) for _ in range(args.rounds)]
    counts, editor, _ = results[0]
    assert all(
        (c.clicks, c.keys, c.drags) == (counts.clicks, counts.keys, counts.drags)
        for c, _, _ in results
    )
    times = [s for _, _, s in results]
    print(f"editor: {editor}")
    for step in counts.steps:
        print(f"  {step}")
    print(
        f"clicks {counts.clicks}, keys {counts.keys}, drags {counts.drags}, "
        f"typed {counts.typed} characters"
    )
    print(
        f"walk time over {args.rounds} rounds (browser driven, includes waits for search and "
        f"saves): min {min(times):.2f} s, median {statistics.median(times):.2f} s"
    )


def load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


if __name__ == "__main__":
    main()
