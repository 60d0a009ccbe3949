"""Screenshots of the main workbench pages for docs/screenshots/ (run after UI changes).

Run: python scripts/screenshots.py [--out docs/screenshots]

Starts the app on the demo project in a temporary workspace, writes a few demo gold items
through the JSON API (as the editor does), and saves 1280x900 PNGs of the documents page, the
items list and other pages with the system Chromium (the item editor's own screenshots:
scripts/screenshots_item_editor.py).
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from playwright.sync_api import Page, sync_playwright

from assay import open_workspace
from assay.corpus.documents import get_document_by_name
from assay.demo import gold_items, open_demo
from assay.records import Project
from assay.store.workspace import Workspace
from assay.web import create_app

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]
SIZE = {"width": 1280, "height": 900}


@contextmanager
def serve(ws: Workspace, port: int = 8765) -> Iterator[str]:
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


def gold_body(ws: Workspace, project: Project, gold: dict[str, Any]) -> dict[str, Any]:
    evidence = [
        {
            "doc_id": get_document_by_name(ws, project, ev["document"]).id,
            "text": ev["text"],
            "label": ev.get("label", "relevant"),
            "group": ev.get("group"),
            "origin": "searched",
        }
        for ev in gold.get("evidence", [])
    ]
    turn = {
        "query": gold["query"],
        "query_type": gold.get("query_type", "fact_single"),
        "answer": gold.get("answer", ""),
        "evidence": evidence,
    }
    return {"turns": [turn]}


def write_items(ws: Workspace, project: Project, base_url: str) -> str:
    """Write a dozen demo gold items through the API; returns the id of the one to show."""
    with httpx.Client(base_url=base_url) as client:
        client.get("/")
        client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
        client.cookies.set("assay_author", "ana")
        shown = ""
        for n, gold in enumerate(gold_items()[:12]):
            response = client.post(
                f"/api/projects/{project.name}/items", json=gold_body(ws, project, gold)
            )
            response.raise_for_status()
            item = response.json()["item"]
            if gold["query_id"] == "q03":
                shown = item["id"]
            elif n % 3 == 0:
                client.post(
                    f"/api/projects/{project.name}/items/{item['id']}/status",
                    json={"version": item["version"], "status": "submitted"},
                ).raise_for_status()
    return shown


def documents_screenshots(page: Page, base_url: str, out: Path) -> None:
    page.goto(f"{base_url}/projects/demo/documents")
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(out / "documents.png"))


def items_screenshots(page: Page, base_url: str, out: Path, item_id: str) -> None:
    page.goto(f"{base_url}/projects/demo/items")
    page.screenshot(path=str(out / "items-list.png"))

    # the item editor's own screenshots: scripts/screenshots_item_editor.py


def experiments_screenshots(
    page: Page, base_url: str, out: Path, ws: Workspace, project: Project
) -> None:
    """Accept the demo items, run keyword vs hybrid (hashing embedder), shoot both pages."""
    from assay.experiments import create_experiment, run_experiment
    from assay.gold.item_lists import list_items
    from assay.gold.item_writes import set_status

    for row in list_items(ws, project, limit=100)[1]:
        if row.status != "accepted":
            set_status(ws, project, row.id, "accepted", row.version)
    hybrid = {"name": "hybrid", "retriever": {"kind": "hybrid", "embedder": "hashing"}}
    experiment = create_experiment(ws, project, "keyword vs hybrid", pipelines=["keyword", hybrid])
    run_experiment(ws, project, experiment.id)
    page.goto(f"{base_url}/projects/demo/experiments")
    page.screenshot(path=str(out / "experiments.png"), full_page=True)
    page.goto(f"{base_url}/projects/demo/experiments/{experiment.id}")
    page.wait_for_timeout(300)
    page.screenshot(path=str(out / "compare.png"), full_page=True)


def ask_demo(page: Page, base_url: str, questions: tuple[str, ...]) -> None:
    """A new conversation on the demo project, each question asked and answered."""
    page.goto(f"{base_url}/projects/demo/conversations/new")
    for n, question in enumerate(questions):
        page.locator("#composer-q").fill(question)
        page.locator("#composer-q").press("Control+Enter")
        page.locator(f"#t{n}-answer:not([readonly])").wait_for()
        page.wait_for_function(f"document.getElementById('t{n}-answer').value.length > 0")


def transfer_screenshots(page: Page, base_url: str, out: Path) -> None:
    """Export the demo as the native zip, import it into a new project, show both results."""
    page.goto(f"{base_url}/projects/demo/transfer")
    page.get_by_role("button", name="Start the export").click()
    link = page.locator("#export-download")
    link.wait_for()
    with page.expect_download() as info:
        link.click()
    with tempfile.TemporaryDirectory() as tmp:
        saved = Path(tmp) / info.value.suggested_filename
        info.value.save_as(saved)
        page.locator("#import-file").set_input_files(str(saved))
        page.locator("#import-project").fill("demo-copy")
        page.get_by_label("Lenient: skip bad records and report them").check()
        page.get_by_role("button", name="Start the import").click()
        page.locator("#import-report table").wait_for()
    page.wait_for_timeout(300)
    page.screenshot(path=str(out / "transfer.png"), full_page=True)


def signin_screenshot(page: Page, base_url: str, out: Path, ws: Workspace) -> None:
    """Last: turns team mode on, after which every page asks for a sign-in."""
    from assay.people.accounts import create_account
    from assay.people.mode import set_team_mode

    create_account(ws, "ana", "correct horse battery", admin=True)
    set_team_mode(ws, True)
    page.goto(f"{base_url}/projects/demo/items")
    page.get_by_label("User name").fill("ana")
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("alert").filter(has_text="Wrong").wait_for()
    page.screenshot(path=str(out / "signin.png"), full_page=True)


def comments_screenshot(page: Page, base_url: str, out: Path, item_id: str) -> None:
    """The item editor with its comments panel: a thread on a span of the answer (hovered, so
    the span is outlined) with a reply, a general comment, and one made outdated by an edit."""
    api = f"{base_url}/api/projects/demo/items/{item_id}"
    with httpx.Client() as client:
        client.get(base_url + "/")
        client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
        client.cookies.set("assay_author", "ben")
        item = client.get(api).json()["item"]
        turn = item["turns"][0]
        words = turn["answer"].split()
        quote = " ".join(words[1:4]) if len(words) > 3 else turn["answer"]
        at = turn["answer"].index(quote)
        span = {"target": "answer", "turn": 0, "start": at, "end": at + len(quote)}
        first = client.post(
            f"{api}/comments",
            json={
                "body": "Is this still true after the "
                "2024 revision? Please check the newest version.",
                **span,
            },
        ).json()
        client.cookies.set("assay_author", "ana")
        client.post(
            f"{api}/comments",
            json={
                "body": "Yes: section 3 of the current version says the same.",
                "parent_id": first["id"],
            },
        ).raise_for_status()
        question = turn["query"]
        client.post(
            f"{api}/comments",
            json={
                "body": "Too vague: name the document.",
                "target": "question",
                "turn": 0,
                "start": 0,
                "end": len(question.split()[0]),
            },
        ).raise_for_status()
        client.post(
            f"{api}/comments",
            json={"body": "Add a second relevant passage (the FAQ answers it too)."},
        ).raise_for_status()
        turn["query"] = "For h" + question[1:]  # the comment on "How" is now outdated
        client.put(
            api,
            json={
                "version": item["version"],
                "item": {k: item[k] for k in ("kind", "notes", "origin", "extra", "turns")},
            },
        ).raise_for_status()
    page.goto(f"{base_url}/projects/demo/items/{item_id}")
    page.locator("#comments-toggle").click()
    page.locator("#comments-list .thread .thread-quote").first.click()  # shown in the answer
    page.wait_for_timeout(300)
    page.screenshot(path=str(out / "comments.png"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(Path(home))
        project, _ = open_demo(ws)
        with serve(ws) as base_url, sync_playwright() as playwright:
            item_id = write_items(ws, project, base_url)
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport=SIZE, locale="en-GB")
            page = context.new_page()
            documents_screenshots(page, base_url, args.out)
            items_screenshots(page, base_url, args.out, item_id)
            transfer_screenshots(page, base_url, args.out)
            experiments_screenshots(page, base_url, args.out, ws, project)
            # the conversation workbench: scripts/conversation_screenshots.py
            comments_screenshot(page, base_url, args.out, item_id)
            signin_screenshot(page, base_url, args.out, ws)
            browser.close()
        ws.close()
    for png in sorted(args.out.glob("*.png")):
        print(png.relative_to(ROOT) if png.is_relative_to(ROOT) else png)


if __name__ == "__main__":
    main()
