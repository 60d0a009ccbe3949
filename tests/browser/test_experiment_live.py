"""A run's live figures in the real Chromium, English and German: units in flight, time
left, requests, cached share, cost so far, and the budget that stops it, set on the page."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from assay.demo import open_demo
from assay.experiments import create_experiment
from assay.store.workspace import Workspace
from tests.browser.test_experiments import accepted_demo_items
from tests.conftest import LiveServer
from tests.fakes.latency_llm import LatencyLLM

pytestmark = pytest.mark.browser
SHOTS = os.environ.get("ASSAY_SCREENSHOTS")
"""A folder to keep screenshots of the page in (to look at them), when set."""


@pytest.fixture
def slow_llm() -> Iterator[LatencyLLM]:
    with LatencyLLM(latency_s=2.0) as fake:
        yield fake


def _shot(page: Page, name: str) -> None:
    if SHOTS:
        page.set_viewport_size({"width": 1280, "height": 720})
        page.locator("#run-panel").scroll_into_view_if_needed()
        page.screenshot(path=str(Path(SHOTS) / name))


def test_the_run_panel_shows_what_is_in_flight_and_stops_at_the_budget(
    page: Page, ws: Workspace, live_server: LiveServer, slow_llm: LatencyLLM
) -> None:
    accepted_demo_items(ws, count=6)
    project, _ = open_demo(ws)
    generator = {"kind": "openai", "base_url": slow_llm.url, "model": "gen", "max_in_flight": 2}
    created = create_experiment(
        ws,
        project,
        "live",
        mode="generation",
        pipelines=[{"name": "gen", "generator": generator}],
        metrics=["token_f1"],
    )
    page.set_viewport_size({"width": 1280, "height": 720})
    url = f"{live_server.url}/projects/demo/experiments/{created.id}"
    page.goto(url)
    page.get_by_label("Max requests").fill("4")
    page.get_by_role("button", name="Resume").click()
    expect(page.locator("#run-in-flight")).to_have_text("2")
    expect(page.locator("#run-budget")).to_have_text("4 requests")
    _shot(page, "experiment-live-en.png")

    page.goto(f"{live_server.url}/language/de?next=/projects/demo/experiments/{created.id}")
    page.locator("html[lang=de]").wait_for()
    panel = page.locator("#run-live")
    expect(panel.get_by_text("Gleichzeitig")).to_be_visible()
    _shot(page, "experiment-live-de.png")
    expect(page.locator("#run-state")).to_have_text("abgebrochen")
    expect(page.locator("#run-requests")).to_have_text("4")
    expect(page.locator("#run-message")).to_contain_text("Budget erreicht: 4 Anfragen")
    expect(page.locator("#run-counts")).to_contain_text("4 von 6")
    _shot(page, "experiment-budget-de.png")
    assert slow_llm.requests == 4
