"""The import and export page in the real Chromium: export the native zip, download it, import
it into a new project, read the report; replacing asks for a second click."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from assay.corpus.documents import count_documents
from assay.corpus.ingest import ingest_bytes, replace_document
from assay.formats import get_format
from assay.gold.item_lists import list_items
from assay.gold.items import create_item
from assay.records import Evidence, Item, Project, Turn
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

PAYLOAD = "<img src=x onerror=window.__xss=1>"


def fill(ws: Workspace, project: Project) -> None:
    doc = ingest_bytes(ws, project, "policy.txt", b"Hotels are refunded up to 140 euros.\n")
    create_item(
        ws,
        project,
        Item(
            turns=[
                Turn(
                    query=f"Hotel refund? {PAYLOAD}",
                    answer="140 euros",
                    evidence=[Evidence(doc_id=doc.id, text="refunded up to 140 euros")],
                )
            ]
        ),
        status="accepted",
    )
    create_item(ws, project, Item(turns=[Turn(query="An unreviewed draft")]))


def test_export_download_and_import_into_a_new_project(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer, tmp_path: Path
) -> None:
    fill(ws, project)
    page.goto(f"{live_server.url}/projects/test/transfer")
    expect(page.get_by_role("heading", name="Import & export", level=1)).to_be_visible()
    export = page.locator("#export")
    export.get_by_label("Format").select_option("autorag")
    expect(page.locator("#export-format-help")).to_contain_text("qa.parquet")
    expect(page.locator("#export-chunking")).to_be_enabled()
    export.get_by_label("Format").select_option("native")
    expect(page.locator("#export-chunking")).to_be_disabled()
    # accepted items unless told otherwise; the result says what was left out
    expect(export.get_by_label("accepted")).to_be_checked()
    expect(export.get_by_label("draft")).not_to_be_checked()
    page.get_by_role("button", name="Start the export").click()
    link = page.locator("#export-download")
    expect(link).to_be_visible()
    expect(link).to_have_text("Download test-native.zip")
    expect(page.locator("#export-status")).to_contain_text("1 item(s)")
    expect(page.locator("#export-result")).to_contain_text("Left out: 1 draft item(s)")
    with page.expect_download() as info:
        link.click()
    saved = tmp_path / "downloaded.zip"
    info.value.save_as(saved)
    assert info.value.suggested_filename == "test-native.zip"
    assert len(list(get_format("native").read(saved).items)) == 1

    create_project(ws, "fresh")
    page.goto(f"{live_server.url}/projects/fresh/transfer")
    page.locator("#import-file").set_input_files(str(saved))
    page.locator("#import-format").select_option("native")
    page.get_by_role("button", name="Start the import").click()
    report = page.locator("#import-report")
    expect(report).to_contain_text("Imported into “fresh”")
    expect(report.locator("table")).to_contain_text("item")
    expect(report).to_contain_text("flagged ones were stored with a warning")
    expect(page.locator("#import-job")).to_have_class(re.compile(r"\bok\b"))
    fresh = get_project(ws, "fresh")
    assert list_items(ws, fresh)[0] == 1 and count_documents(ws, fresh) == 1

    # Replacing asks for a second click; the first one changes nothing.
    page.get_by_label("Replace the project's whole content with the file's").check()
    button = page.locator("#import-start")
    button.click()
    expect(button).to_have_text("Click again within 3 s to replace the project's content")
    expect(button).to_have_text("Start the import")
    page.get_by_label("Review status of the imported items").select_option("rejected")
    button.click()
    button.click()
    expect(report).to_contain_text("Imported into “fresh”")
    total, rows = list_items(ws, get_project(ws, "fresh"))
    assert total == 1 and rows[0].status == "rejected"
    assert page.evaluate("window.__xss") is None


def test_a_bad_file_shows_the_error(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer, tmp_path: Path
) -> None:
    bad = tmp_path / "broken.zip"
    bad.write_bytes(b"not a zip")
    page.goto(f"{live_server.url}/projects/test/transfer")
    page.locator("#import-file").set_input_files(str(bad))
    page.get_by_role("button", name="Start the import").click()
    status = page.locator("#import-status")
    expect(status).to_contain_text("not a readable zip file")
    expect(status).to_contain_text("Nothing was changed.")
    expect(page.locator("#import-job")).to_have_class(re.compile(r"\berror\b"))


def test_export_lists_items_needing_review_and_strict_refuses(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    fill(ws, project)
    doc = ingest_bytes(ws, project, "ferry.txt", b"The ferry leaves at 22:40.\n")
    turn = Turn(query="Ferry?", answer="22:40", evidence=[Evidence(doc_id=doc.id, text="22:40")])
    stale = create_item(ws, project, Item(turns=[turn]), status="accepted")
    replace_document(ws, project, doc, "ferry.txt", b"The ferry leaves at 23:10.\n")
    page.goto(f"{live_server.url}/projects/test/transfer")
    export = page.locator("#export")
    export.get_by_label("Format").select_option("csv")
    export.get_by_label("Strict: refuse the export if an item needs review").check()
    page.get_by_role("button", name="Start the export").click()
    expect(page.locator("#export-status")).to_contain_text(stale.id)
    expect(page.locator("#export-download")).to_have_count(0)
    export.get_by_label("Strict: refuse the export if an item needs review").uncheck()
    page.get_by_role("button", name="Start the export").click()
    expect(page.locator("#export-download")).to_be_visible()
    review = page.locator("#export-result .needs-review")
    expect(review).to_contain_text("Left out 1 item(s) that need review")
    link = page.locator("#export-result .needs-review-items a")
    expect(link).to_have_text(stale.id)
    expect(link).to_have_attribute("href", f"/projects/test/items/{stale.id}")
    expect(page.locator("#export-result .needs-review-items li")).to_contain_text(
        "turn 1, passage 1: its document changed"
    )


def test_a_job_waits_for_a_worker_and_can_be_cancelled(
    page: Page, ws: Workspace, project: Project, tmp_path: Path
) -> None:
    no_jobs = dataclasses.replace(
        ws, settings=ws.settings.model_copy(update={"server_runs_jobs": False})
    )
    upload = tmp_path / "questions.csv"
    upload.write_text("query,answer\nHotel refund?,140 euros\n", encoding="utf-8")
    with LiveServer(no_jobs) as server:  # nothing runs the queue: the import waits
        page.goto(f"{server.url}/projects/test/transfer")
        page.locator("#import-file").set_input_files(str(upload))
        page.get_by_role("button", name="Start the import").click()
        status = page.locator("#import-status")
        expect(status).to_have_text("waiting for a worker")
        page.locator("#import-job").get_by_role("button", name="Cancel").click()
        expect(status).to_have_text("Cancelled. Nothing was changed.")
        expect(page.locator("#import-job").get_by_role("button", name="Cancel")).to_be_hidden()
        page.reload()
        expect(page.locator("table.jobs tbody tr").first).to_contain_text("cancelled")
    assert list_items(ws, project)[0] == 0


def test_autorag_export_can_include_unanswerable_questions(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer, tmp_path: Path
) -> None:
    """The page offers what ``assay export --include-unanswerable`` does: the same job."""
    import io
    import zipfile

    import pandas as pd

    fill(ws, project)
    page.goto(f"{live_server.url}/projects/test/transfer")
    export = page.locator("#export")
    export.get_by_label("Format").select_option("autorag")
    export.get_by_label("draft").check()  # the draft has no passage: unanswerable
    export.get_by_label("AutoRAG: also write unanswerable questions").check()
    page.get_by_role("button", name="Start the export").click()
    link = page.locator("#export-download")
    expect(link).to_be_visible()
    with page.expect_download() as info:
        link.click()
    saved = tmp_path / "autorag.zip"
    info.value.save_as(saved)
    with zipfile.ZipFile(saved) as archive:
        qa = pd.read_parquet(io.BytesIO(archive.read("test-autorag/qa.parquet")))
    assert sorted(qa["query"]) == ["An unreviewed draft", f"Hotel refund? {PAYLOAD}"]


def test_mtrag_export_names_the_collection_set_on_the_page(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer, tmp_path: Path
) -> None:
    """The MTRAG collection is asked for beside the MTRAG and RAGAPHENE formats only, saved as
    the project's setting, and written on every task of the download."""
    fill(ws, project)
    page.goto(f"{live_server.url}/projects/test/transfer")
    export = page.locator("#export")
    field = page.locator("#export-collection")
    expect(field).to_be_hidden()
    export.get_by_label("Format").select_option("mtrag")
    expect(field).to_be_visible()
    expect(field).to_have_value("test")  # by default the project's name, never empty
    field.fill("handbook-v2")
    page.get_by_role("button", name="Start the export").click()
    link = page.locator("#export-download")
    expect(link).to_be_visible()
    with page.expect_download() as info:
        link.click()
    saved = tmp_path / info.value.suggested_filename
    info.value.save_as(saved)
    tasks = [json.loads(line) for line in saved.read_text().splitlines() if line.strip()]
    assert tasks and {task["collection"] for task in tasks} == {"handbook-v2"}
    assert get_project(ws, "test").settings["mtrag_collection"] == "handbook-v2"
    export.get_by_label("Format").select_option("native")
    expect(field).to_be_hidden()
    page.reload()
    export.get_by_label("Format").select_option("ragaphene")
    expect(field).to_have_value("handbook-v2")
