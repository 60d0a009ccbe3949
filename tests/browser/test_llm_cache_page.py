"""The response cache section of the experiments page and the run controls by role, in the
real Chromium (team mode): a lead drops the cache only after confirming; a viewer sees the
cache's size and the run's progress but no control, with a line saying why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from assay.experiments import create_experiment
from assay.llm.response_cache import ResponseCache, cache_summary
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Project
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.browser.test_review import PASSWORD, sign_in
from tests.conftest import LiveServer
from tests.experiments_corpus import build_corpus

pytestmark = pytest.mark.browser

URL = "http://models.example/v1/chat/completions"
SHOTS = os.environ.get("ASSAY_SHOTS")
"""A folder for screenshots of the pages (set it to look at them; none are kept otherwise)."""


def signed_in(browser: Browser, server: LiveServer, path: str, username: str) -> Page:
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    sign_in(page, f"{server.url}/projects/handbook/{path}", username)
    return page


def cached_project(ws: Workspace) -> tuple[Project, int]:
    """Project handbook with an experiment and three cached answers; a lead (lena) and a
    viewer (vic), in team mode."""
    project = build_corpus(ws, create_project(ws, "handbook", "en")).project
    made = create_experiment(ws, project, "baseline", pipelines=["keyword"], mode="retrieval")
    cache = ResponseCache(ws.engine, project.id)
    for n in range(3):
        body = {"model": "m", "messages": [{"role": "user", "content": f"question {n}"}]}
        cache.put(cache.key(URL, body), URL, "m", {"choices": [{"text": "an answer"}]})
    create_account(ws, "root", PASSWORD, admin=True)
    for name, role in (("lena", "lead"), ("vic", "viewer")):
        set_role(ws, project.id, create_account(ws, name, PASSWORD).id, role)
    set_team_mode(ws, True)
    return project, made.id


def shot(page: Page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def test_a_lead_drops_the_cache_after_confirming(
    browser: Browser, ws: Workspace, live_server: LiveServer
) -> None:
    project, _ = cached_project(ws)
    page = signed_in(browser, live_server, "experiments", "lena")
    section = page.locator("#llm-cache")
    expect(section.get_by_role("heading", name="Response cache")).to_be_visible()
    expect(page.locator("#llm-cache-size")).to_contain_text("3 answers")
    shot(page, "llm-cache-en")
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.get_by_role("button", name="Drop the cache").click()
    expect(page.locator("#llm-cache-size")).to_contain_text("3 answers")
    assert asked and "Drop all 3 cached answers of this project?" in asked[0]
    assert cache_summary(ws.engine, project.id)["entries"] == 3  # dismissed: nothing dropped
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Drop the cache").click()
    expect(page.locator("#llm-cache-size")).to_contain_text("0 answers")
    expect(page.get_by_role("button", name="Drop the cache")).to_have_count(0)
    assert cache_summary(ws.engine, project.id)["entries"] == 0
    page.goto(f"{live_server.url}/language/de?next=/projects/handbook/experiments")
    expect(section.get_by_role("heading", name="Antwort-Cache")).to_be_visible()
    expect(page.locator("#llm-cache-size")).to_contain_text("0 Antworten")
    shot(page, "llm-cache-de-empty")


def test_a_viewer_sees_no_run_controls(
    browser: Browser, ws: Workspace, live_server: LiveServer
) -> None:
    _, experiment = cached_project(ws)
    page = signed_in(browser, live_server, f"experiments/{experiment}", "vic")
    expect(page.locator("#run-state")).to_be_visible()  # the run's state is there to follow
    expect(page.locator("#run-read-only")).to_contain_text(
        "Owners and leads run, resume and cancel experiments"
    )
    for name in ("Resume", "Cancel"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    expect(page.get_by_label("Ask the models again (no cache)")).to_have_count(0)
    expect(page.locator("#run-max-cost")).to_have_count(0)
    shot(page, "run-viewer-en")
    page.goto(f"{live_server.url}/projects/handbook/experiments")
    expect(page.locator("#llm-cache-size")).to_contain_text("3 answers")
    expect(page.locator("#llm-cache-read-only")).to_have_text(
        "Owners and leads can drop the cache."
    )
    expect(page.get_by_role("button", name="Drop the cache")).to_have_count(0)
    shot(page, "llm-cache-viewer-en")
    page.goto(f"{live_server.url}/language/de?next=/projects/handbook/experiments/{experiment}")
    expect(page.locator("#run-read-only")).to_contain_text("Sie können diesem Lauf folgen")
    shot(page, "run-viewer-de")
    page.goto(f"{live_server.url}/projects/handbook/experiments")
    expect(page.locator("#llm-cache-size")).to_contain_text("3 Antworten")
    shot(page, "llm-cache-viewer-de")
