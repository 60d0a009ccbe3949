"""Retrieval stages in the real Chromium: the editor's rerank toggle, the stage fields of the
experiment form, and token and cost totals on the experiment page. With
ASSAY_SCREENSHOTS=folder the pages are saved there at 1440×900 and 1280×720, in English and
German."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from assay.experiments import create_experiment, run_experiment
from assay.gold.project_config import update_settings
from assay.records import Project
from assay.store.workspace import Workspace
from tests.conftest import LiveServer
from tests.experiments_corpus import Corpus, build_corpus
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.rerank_server import FakeReranker, Overlap

pytestmark = pytest.mark.browser
SIZES = ((1440, 900, ""), (1280, 720, "-1280"))


@pytest.fixture
def reranker() -> Iterator[FakeReranker]:
    with FakeReranker([Overlap()]) as server:
        yield server


@pytest.fixture
def corpus(ws: Workspace, project: Project, reranker: FakeReranker) -> Corpus:
    built = build_corpus(ws, project)
    update_settings(ws, built.project, {"reranker": {"url": reranker.url, "retries": 0}})
    return built


def shots(page: Page, url: str, name: str) -> None:
    folder = os.environ.get("ASSAY_SCREENSHOTS")
    if not folder:
        return
    for lang in ("en", "de"):
        page.context.set_extra_http_headers({"Accept-Language": lang})
        for width, height, suffix in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            page.goto(url)
            page.wait_for_load_state("networkidle")
            tail = "" if lang == "en" else "-de"
            page.screenshot(path=str(Path(folder) / f"{name}{suffix}{tail}.png"), full_page=True)
    page.context.set_extra_http_headers({"Accept-Language": "en"})
    page.set_viewport_size({"width": 1440, "height": 900})


def test_rerank_toggle_in_the_editor(
    page: Page, corpus: Corpus, live_server: LiveServer, reranker: FakeReranker
) -> None:
    name = corpus.project.name
    page.goto(f"{live_server.url}/projects/{name}/items/new")
    page.locator("#search-q").fill("leave days employee")
    page.locator("#search-form button[type=submit]").click()
    expect(page.locator("#search-state")).to_contain_text("hits")
    assert reranker.requests == []
    with page.expect_response(lambda r: "rerank=true" in r.url) as answer:
        page.get_by_label("Rerank").check()  # reruns the search, reranked
    assert answer.value.ok
    expect(page.locator("#hits .hit").first).to_contain_text("30 days")
    assert len(reranker.requests) == 1
    assert reranker.requests[0]["query"] == "leave days employee"


def test_stage_fields_and_costs_on_the_experiment_pages(
    page: Page, ws: Workspace, corpus: Corpus, live_server: LiveServer
) -> None:
    project = corpus.project
    with FakeOpenAI([Reply("hotel refund")]) as server:
        generator = {"kind": "openai", "base_url": server.url, "model": "m", "retries": 0}
        done = create_experiment(
            ws,
            project,
            "costs",
            mode="rag",
            pipelines=["keyword", {"name": "llm+wide", "generator": generator, "expand": 1}],
        )
        run_experiment(ws, project, done.id)
    base = f"{live_server.url}/projects/{project.name}/experiments"
    page.goto(base)
    first = page.locator(".exp-pipeline").first
    first.get_by_label("Reranking of pipeline 1").select_option("project")
    first.get_by_label("Neighbouring chunks of pipeline 1").fill("1")
    page.get_by_label("Name", exact=True).first.fill("staged")
    page.get_by_role("button", name="Create and run").click()
    page.wait_for_url(f"{base}/*")
    expect(page.locator("#run-state")).to_have_text("done")
    page.goto(f"{base}/{done.id}")
    expect(page.locator("#token-row")).to_contain_text("55 / 25")
    expect(page.locator("#cost-total")).to_contain_text("5 model calls")
    shots(page, base, "experiments-stages")
    shots(page, f"{base}/{done.id}", "experiment-costs")
    shots(page, f"{live_server.url}/projects/{project.name}/items/new", "editor-rerank")
