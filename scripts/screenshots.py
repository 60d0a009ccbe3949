"""Screenshots of every page for docs/screenshots/ (run after UI changes, then look at them).

Run: python scripts/screenshots.py [--out build/screenshots] [--only NAME ...] [--no-guide]

Like every screenshot script, it writes all its pictures into the untracked build/screenshots/
and then copies the ones the docs show, compressed, into docs/screenshots/
(``scripts/screenshot_docs.py``); with another --out, the docs are left alone.

Builds a demo workspace with something on every page (``assay.demo.showcase``: the demo
project with gold in every status, a review, comments, a conversation, two dataset versions,
an experiment run, a judging project; plus copies by three annotators to agree on, as
``scripts/agreement_screenshots.py`` makes them, and an empty project), serves it on loopback
and saves every page with the system Chromium at 1440x900 (``NAME.png``) and 1280x720
(``NAME-1280.png``), and the main pages in German too (``NAME-de.png``,
``NAME-de-1280.png``). The last pages switch team mode on (sign-in, queue, assignments).
It also writes the pictures the in-app guide shows (``src/assay/web/static/guide/``).

Other scripts import ``CHROMIUM``, ``CHROMIUM_ARGS``, ``ROOT`` and ``serve`` from here.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import uvicorn
from playwright.sync_api import Page, sync_playwright
from screenshot_docs import OUT_DIR, publish

from assay import open_workspace
from assay.demo.showcase import Showcase, build_showcase
from assay.experiments.store import experiment_tasks_of
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "src" / "assay" / "web" / "static" / "guide"
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
SIZES = {"": {"width": 1440, "height": 900}, "-1280": {"width": 1280, "height": 720}}
PASSWORD = "correct horse battery"


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


@dataclass(frozen=True)
class Shot:
    name: str  # the file name's stem
    path: str
    german: bool = False  # a main page: also in German
    ready: str = ""  # a selector to wait for (what a page's script draws)
    guide: bool = False  # the guide shows it


def shots(show: Showcase, task_id: str, adjudicate_id: str) -> list[Shot]:
    home = f"/projects/{show.project.name}"
    judging = f"/projects/{show.judging_project}/judging"
    topic = "topic=night-ferry"
    a, b = show.versions
    return [
        Shot("projects", "/", german=True),
        Shot("project", home, german=True),
        Shot("project-empty", "/projects/empty"),
        Shot("documents", f"{home}/documents", german=True, guide=True),
        Shot("document", f"{home}/documents/{show.document_id}"),
        Shot("items-list", f"{home}/items", german=True),
        Shot("item-editor", f"{home}/items/{show.item_id}", True, "#hits .hit", guide=True),
        Shot("item-new", f"{home}/items/new"),
        Shot("history", f"{home}/items/{show.item_id}/history"),
        Shot("conversations", f"{home}/conversations", german=True),
        Shot(
            "conversation",
            f"{home}/conversations/{show.conversation_id}",
            True,
            ".turn .passage",
            guide=True,
        ),
        Shot("conversation-new", f"{home}/conversations/new"),
        Shot("experiments", f"{home}/experiments", german=True),
        Shot("compare", f"{home}/experiments/{show.experiment_id}", german=True, guide=True),
        Shot("experiment-task", f"{home}/experiments/{show.experiment_id}/tasks/{task_id}"),
        Shot("transfer", f"{home}/transfer", german=True, guide=True),
        Shot("review-queue", f"{home}/review", german=True),
        Shot(
            "review",
            f"{home}/items/{show.submitted_id}",
            True,
            "#review-bar:not([hidden])",
            guide=True,
        ),
        Shot("dashboard", f"{home}/dashboard", german=True),
        Shot("agreement", f"{home}/agreement"),
        Shot("adjudication-list", f"{home}/adjudication"),
        Shot("adjudication", f"{home}/adjudication/{adjudicate_id}"),
        Shot("versions", f"{home}/versions", german=True),
        Shot("version", f"{home}/versions/{a}"),
        Shot("versions-diff", f"{home}/version-diff?a={a}&b={b}"),
        Shot("judging-overview", judging, german=True),
        Shot("judging-reports", f"{judging}/reports?{topic}"),
        Shot("judging-documents", f"{judging}/documents?{topic}"),
        Shot("judging-citations", f"{judging}/citations?{topic}&run=alpha"),
        Shot("judging-results", f"/projects/{show.judging_project}/judging-results"),
        Shot("guide", f"{home}/guide", german=True),
        Shot("api-docs", "/api/docs", True, ".opblock"),
        Shot("error", "/no/such/page"),
    ]


TEAM_SHOTS = [
    Shot("signin", "/login", german=True),
    Shot("queue", "/projects/demo/queue"),
    Shot("assign", "/projects/demo/assignments"),
]


def shoot(page: Page, base_url: str, shot: Shot, out: Path) -> list[Path]:
    written = []
    for language in ("en", "de") if shot.german else ("en",):
        page.goto(f"{base_url}/language/{language}?next={quote(shot.path, safe='/')}")
        for suffix, size in SIZES.items():
            page.set_viewport_size(size)
            page.goto(base_url + shot.path)
            page.wait_for_load_state("networkidle")
            if shot.ready:
                page.locator(shot.ready).first.wait_for(timeout=30_000)
            page.evaluate("document.activeElement && document.activeElement.blur()")
            page.evaluate("window.scrollTo(0, 0)")
            page.wait_for_timeout(300)
            tag = "-de" if language == "de" else ""
            target = out / f"{shot.name}{tag}{suffix}.png"
            page.screenshot(path=str(target))
            written.append(target)
            if shot.guide and suffix == "-1280":
                GUIDE.mkdir(parents=True, exist_ok=True)
                picture = GUIDE / f"{shot.name}{tag}.jpg"
                page.screenshot(path=str(picture), type="jpeg", quality=72)
    page.goto(f"{base_url}/language/en?next=/")
    return written


def sign_in(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/language/en?next=/login")
    page.get_by_label("User name").fill("lea")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Signed in as lea").wait_for()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--only", nargs="*", default=None, help="only these page names")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(Path(home) / "ws")
        show = build_showcase(ws, Path(home))
        create_project(ws, "empty", "de")
        task_id = experiment_tasks_of(ws, show.experiment_id)[0].task_id
        from agreement_screenshots import build as build_overlap  # copies to agree on

        _, adjudicate_id = build_overlap(ws)
        wanted = set(args.only) if args.only else None
        with serve(ws, args.port) as base_url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(locale="en-GB")
            for shot in shots(show, task_id, adjudicate_id):
                if wanted is None or shot.name in wanted:
                    written += shoot(page, base_url, shot, args.out)
            if wanted is None or wanted & {s.name for s in TEAM_SHOTS}:
                from assay.people.accounts import create_account
                from assay.people.members import set_role
                from assay.people.mode import set_team_mode

                lead = create_account(ws, "lea", PASSWORD, display_name="Lea", admin=True)
                set_role(ws, show.project.id, lead.id, "lead")
                set_team_mode(ws, True)
                written += shoot(page, base_url, TEAM_SHOTS[0], args.out)
                sign_in(page, base_url)
                for shot in TEAM_SHOTS[1:]:
                    written += shoot(page, base_url, shot, args.out)
            browser.close()
        ws.close()
    for png in written:
        print(png.relative_to(ROOT) if png.is_relative_to(ROOT) else png)


if __name__ == "__main__":
    main()
    publish()
