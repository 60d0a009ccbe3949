"""Experiments in the real Chromium: create keyword vs hybrid on the demo project, watch the
progress, open the compare page and a drill-down."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from assay.corpus.documents import get_document_by_name
from assay.demo import gold_items, open_demo
from assay.experiments.tasks import build_tasks
from assay.gold.items import create_item, set_status
from assay.records import Evidence, Item, Turn
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser


def accepted_demo_items(ws: Workspace, count: int = 6) -> None:
    project, _ = open_demo(ws)
    for gold in gold_items()[:count]:
        evidence = [
            Evidence(
                doc_id=get_document_by_name(ws, project, e["document"]).id,
                text=e["text"],
                label=e["label"],
                group=e.get("group"),
            )
            for e in gold["evidence"]
        ]
        turn = Turn(
            query=gold["query"],
            query_type=gold["query_type"],
            answer=gold["answer"],
            evidence=evidence,
        )
        item = create_item(ws, project, Item(turns=[turn]))
        set_status(ws, project, item.id, "accepted", item.version)


def test_keyword_against_hybrid_from_the_page(
    page: Page, ws: Workspace, live_server: LiveServer
) -> None:
    accepted_demo_items(ws)
    page.goto(live_server.url + "/projects/demo/experiments")
    expect(page.get_by_text("No experiments yet")).to_be_visible()
    page.get_by_label("Name", exact=True).first.fill("keyword vs hybrid")
    page.get_by_label("Mode", exact=True).select_option("rag")
    chosen = page.locator("#metrics-chosen")
    expect(chosen).to_have_text(
        "Chosen: retrieval_recall, retrieval_ndcg, nDCG@10, token_f1, rouge_l"
    )
    # metrics come from the list: untick one, tick another with its cut-off
    picker = page.locator("#metric-picker")
    picker.get_by_role("checkbox", name="rouge_l").uncheck()
    picker.get_by_role("checkbox", name="retrieval_mrr").check()
    picker.get_by_label("Cut-off k of retrieval_mrr@k").fill("5")
    expect(
        picker.get_by_text("Share of the gold passage groups that were retrieved.")
    ).to_be_visible()
    expect(chosen).to_have_text(
        "Chosen: retrieval_recall, retrieval_ndcg, nDCG@10, token_f1, retrieval_mrr@5"
    )
    expect(page.get_by_label("Retriever of pipeline 1")).to_have_value("keyword")
    expect(page.get_by_label("Retriever of pipeline 2")).to_have_value("hybrid")
    page.get_by_label("Embedder of pipeline 2").select_option("hashing")
    page.get_by_role("button", name="Create and run").click()

    expect(page.locator("h1")).to_have_text("keyword vs hybrid")
    # progress arrives through server-sent events until the run is over
    expect(page.locator("#run-state")).to_have_text("done")
    expect(page.locator("#run-counts")).to_have_text("12 of 12 done, 0 errors (100%)")
    # the results are there at once, without reloading the page: numbers, not "–"
    table = page.locator("#aggregate-table")
    expect(table.locator("thead th")).to_have_text(["Metric", "keyword", "hybrid"])
    expect(table.locator("tbody tr").first.locator("th")).to_have_text("retrieval_recall")
    first_mean = table.locator("tbody tr").first.locator("td").first
    expect(first_mean).to_contain_text(re.compile(r"^\s*\d\.\d{3}"))
    expect(table.locator("tr.meta td").first).to_have_text("6")  # scored tasks
    expect(page.locator("#reload-results")).to_be_hidden()
    mrr = table.locator("tbody tr", has=page.locator("th", has_text="retrieval_mrr@5"))
    expect(mrr.locator("td").first).to_contain_text(re.compile(r"\d\.\d{3}"))
    expect(table).not_to_contain_text("rouge_l")
    expect(page.locator("#plots svg").first).to_be_visible()
    expect(page.locator("#type-table")).to_contain_text("Single fact")
    expect(page.locator("#task-table tbody tr")).to_have_count(6)

    first = page.locator("#task-table tbody tr").first.get_by_role("link")
    query = first.inner_text().rstrip("…")
    first.click()
    expect(page.locator("#task-query")).to_contain_text(query)
    expect(page.locator("#gold blockquote").first).to_be_visible()
    results = page.locator(".pipeline-result")
    expect(results).to_have_count(2)
    expect(results.first.locator("h2")).to_have_text("keyword")
    expect(results.first.locator(".exp-retrieved li").first).to_be_visible()
    expect(page.locator(".exp-retrieved li.hit").first).to_be_visible()
    expect(results.first.locator(".diff")).to_be_visible()


def test_cancel_and_resume_buttons(page: Page, ws: Workspace, live_server: LiveServer) -> None:
    from assay.experiments import create_experiment

    accepted_demo_items(ws, 4)
    project, _ = open_demo(ws)
    create_experiment(ws, project, "later", pipelines=["keyword"], mode="retrieval")
    page.goto(live_server.url + "/projects/demo/experiments")
    page.get_by_role("link", name="later").click()
    expect(page.locator("#run-state")).to_have_text("pending")
    page.get_by_role("button", name="Resume").click()
    expect(page.locator("#run-state")).to_have_text("done")
    expect(page.locator("#run-counts")).to_have_text("4 of 4 done, 0 errors (100%)")


def test_a_pipeline_from_an_uploaded_run_file(
    page: Page, ws: Workspace, live_server: LiveServer, tmp_path: Path
) -> None:
    accepted_demo_items(ws, count=3)
    project, _ = open_demo(ws)
    lines = [
        f"{task.task_id} Q0 {chunk_id} {rank} {10 - rank} mine"
        for task in build_tasks(ws, project)
        for rank, chunk_id in enumerate(sorted({c for g in task.chunk_groups() for c in g}), 1)
    ]
    run = tmp_path / "system-a.run"
    run.write_text("\n".join(lines) + "\n")
    page.goto(live_server.url + "/projects/demo/experiments")
    page.get_by_label("Name", exact=True).first.fill("file vs keyword")
    page.get_by_label("Name of pipeline 1").fill("system-a")
    page.get_by_label("Where pipeline 1 gets its answers").select_option("file")
    expect(page.get_by_label("Retriever of pipeline 1")).to_have_count(0)
    page.get_by_role("button", name="Create and run").click()
    expect(page.get_by_role("alert")).to_contain_text("Pipeline system-a: choose a run file")
    page.get_by_label("Run file of pipeline 1").set_input_files(str(run))
    page.get_by_label("Retriever of pipeline 2").select_option("keyword")
    page.get_by_role("button", name="Create and run").click()

    expect(page.locator("h1")).to_have_text("file vs keyword")
    expect(page.locator("#run-state")).to_have_text("done")
    table = page.locator("#aggregate-table")
    expect(table.locator("thead th")).to_have_text(["Metric", "system-a", "keyword"])
    recall = table.locator("tbody tr").first.locator("td").first
    expect(recall).to_contain_text("1.000")


def test_compare_two_experiments_differences_sorted(
    page: Page, ws: Workspace, live_server: LiveServer
) -> None:
    from assay.experiments import create_experiment, run_experiment

    accepted_demo_items(ws)
    project, _ = open_demo(ws)
    hybrid = {"name": "hybrid", "retriever": {"kind": "hybrid", "embedder": "hashing"}}
    for name, pipeline in (("keyword only", "keyword"), ("hybrid only", hybrid)):
        made = create_experiment(ws, project, name, pipelines=[pipeline], mode="retrieval")
        run_experiment(ws, project, made.id)
    page.goto(live_server.url + "/projects/demo/experiments")
    page.get_by_role("link", name="Compare two experiments").click()
    expect(page.locator("h1")).to_have_text("Compare two experiments")
    expect(page.get_by_label("Experiment A")).to_have_value(
        str(next(e.id for e in _experiments(ws) if e.name == "keyword only"))
    )
    rows = page.locator("#compare-metrics tbody tr")
    expect(rows).to_have_count(6)
    differences = [_signed(t) for t in rows.locator("td.diff-cell").all_inner_texts()]
    sizes = [abs(d) for d in differences if d is not None]
    assert sizes == sorted(sizes, reverse=True) and sizes and max(sizes) > 0
    tasks = page.locator("#compare-tasks tbody tr")
    expect(tasks).to_have_count(6)
    per_task = [_signed(t) for t in tasks.locator("td:last-child").all_inner_texts()]
    task_sizes = [abs(d) for d in per_task if d is not None]
    assert task_sizes == sorted(task_sizes, reverse=True)
    # choose another metric for the tasks: the form keeps both experiments
    page.get_by_label("Tasks by metric").select_option("R@10")
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("#cmp-tasks-heading")).to_have_text("Per task: R@10")
    expect(page.get_by_label("Experiment B")).not_to_have_value("")


def _experiments(ws: Workspace) -> list:  # type: ignore[type-arg]
    from assay.experiments import list_experiments

    project, _ = open_demo(ws)
    return list_experiments(ws, project)


def _signed(text: str) -> float | None:
    text = text.strip().replace("−", "-")
    return None if text in ("", "–") else float(text.replace(",", ""))
