"""The experiment page's "Ask the models again" box: a resumed run that skips the response
cache makes every model call again; without it the cache answers."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from assay.experiments import create_experiment, run_experiment
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.conftest import LiveServer
from tests.experiments_corpus import build_corpus
from tests.fakes.openai_server import Computed, FakeOpenAI

pytestmark = pytest.mark.browser


def test_resume_without_the_cache(page: Page, ws: Workspace, live_server: LiveServer) -> None:
    corpus = build_corpus(ws, create_project(ws, "cached", "en"))
    with FakeOpenAI([Computed(lambda body: "An answer.")]) as fake:
        generator = {"kind": "openai", "base_url": fake.url, "model": "m", "retries": 0}
        pipeline = {"name": "rag", "generator": generator}
        for name in ("first", "again", "fresh"):
            create_experiment(ws, corpus.project, name, mode="rag", pipelines=[pipeline])
        run_experiment(ws, corpus.project, "first")
        asked = fake.count
        assert asked == 5

        page.goto(live_server.url + "/projects/cached/experiments/again")
        page.get_by_role("button", name="Resume").click()
        expect(page.locator("#run-state")).to_have_text("done")
        assert fake.count == asked  # every answer came from the cache

        page.goto(live_server.url + "/projects/cached/experiments/fresh")
        page.get_by_label("Ask the models again (no cache)").check()
        page.get_by_role("button", name="Resume").click()
        expect(page.locator("#run-state")).to_have_text("done")
        assert fake.count == 2 * asked  # asked again
