"""An annotator's day with documents and transfers in the real Chromium: a file without text is
refused with a clear message, a delete names the items that cite the document, a passage
selected in the document view starts a new item, an import takes a dropped file with the
format chosen by a link, and a finished export shows its download link in view."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from assay.corpus.documents import list_documents
from assay.corpus.ingest import ingest_bytes
from assay.formats import Bundle, DocumentRecord, get_format
from assay.gold.item_lists import list_items
from assay.gold.items import create_item, get_item
from assay.records import Evidence, Item, Project, Turn
from assay.store.projects import get_project
from assay.store.workspace import Workspace
from tests.browser.test_documents_page import drop_files, upload_row
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
SOURCE = (
    "# Night ferries\n\n"
    "The **night ferry** leaves pier 3 at 22:40 every day.\n"
    "Bikes ride free on it.\n\n"
    "- Tickets cost 12 euros\n"
    "- Children ride free\n"
)


def test_a_file_without_text_is_refused_with_a_clear_message(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    page.goto(f"{live_server.url}/projects/test/documents")
    drop_files(
        page,
        "#dropzone",
        [("scan.png", "image/png", PNG), ("notes.txt", "text/plain", b"Harbour notes.")],
    )
    refused = upload_row(page, "scan.png")
    expect(refused).to_have_class(re.compile(r"\berror\b"))
    expect(refused.locator(".file-status")).to_have_text(
        "not added: no text could be extracted from “scan.png” (an image, a scanned PDF or an "
        "unknown file type). Upload text, Markdown, CSV, JSON, HTML, PDF or Word files."
    )
    expect(upload_row(page, "notes.txt")).to_have_class(re.compile(r"\bok\b"))
    expect(page.locator("td.doc-name a")).to_have_text(["notes.txt"])
    assert [d.name for d in list_documents(ws, project)] == ["notes.txt"]

    # a project that keeps such files: kept, amber, never a green "added"
    page.get_by_label(re.compile("Keep files without extractable text")).check()
    expect(page.locator("#toast")).to_contain_text("keeps files")
    assert get_project(ws, "test").settings["keep_textless_documents"] is True
    page.locator("#file-picker").set_input_files(
        {"name": "photo.png", "mimeType": "image/png", "buffer": PNG}
    )
    kept = upload_row(page, "photo.png")
    expect(kept).to_have_class(re.compile(r"\bwarn\b"))
    expect(kept).not_to_have_class(re.compile(r"\bok\b"))
    expect(kept.locator(".file-status")).to_contain_text("no text could be extracted")
    expect(page.locator("td.doc-name a")).to_have_text(["notes.txt", "photo.png"])


def test_delete_names_the_items_and_conversations_that_cite_the_document(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    cited = ingest_bytes(ws, project, "timetable.txt", b"The ferry leaves at 22:40 from pier 3.")
    free = ingest_bytes(ws, project, "unused.txt", b"Nobody cites this text.")
    create_item(
        ws,
        project,
        Item(
            turns=[
                Turn(
                    query="When does the ferry leave?",
                    evidence=[Evidence(doc_id=cited.id, start=20, end=25)],
                )
            ]
        ),
    )
    create_item(
        ws,
        project,
        Item(
            kind="conversation",
            turns=[
                Turn(query="Which pier?", evidence=[Evidence(doc_id=cited.id, start=31, end=37)])
            ],
        ),
    )
    page.goto(f"{live_server.url}/projects/test/documents")
    row = page.locator(f'tr[data-doc-id="{cited.id}"]')
    expect(row.locator("td.used-by")).to_have_text("2")
    expect(row.locator("td.used-by a")).to_have_accessible_name("2 item(s)")
    expect(page.locator(f'tr[data-doc-id="{free.id}"] td.used-by')).to_have_text("0")
    row.get_by_role("button", name="Delete timetable.txt").click()
    status = row.locator(".row-status")
    expect(status).to_contain_text("“timetable.txt” cannot be deleted: the evidence of 2 item(s)")
    links = status.get_by_role("link")
    expect(links).to_have_text(["When does the ferry leave?", "Which pier?"])
    expect(links.nth(1)).to_have_attribute("href", re.compile(r"/projects/test/conversations/"))
    # nothing was armed: the button still says Delete, and the document is still there
    expect(row.get_by_role("button", name="Delete timetable.txt")).to_have_text("Delete")
    assert {d.name for d in list_documents(ws, project)} == {"timetable.txt", "unused.txt"}

    # the document view names them too
    page.goto(f"{live_server.url}/projects/test/documents/{cited.id}")
    expect(page.locator("#cited li")).to_have_count(2)
    page.locator("article.document").get_by_role("button", name="Delete").click()
    expect(page.locator("article.document .row-status")).to_contain_text("cannot be deleted")

    # an uncited document still asks for the second click, then goes
    page.goto(f"{live_server.url}/projects/test/documents")
    delete = page.locator(f'tr[data-doc-id="{free.id}"]').get_by_role(
        "button", name="Delete unused.txt"
    )
    delete.click()
    expect(page.locator(f'tr[data-doc-id="{free.id}"] button[data-action="delete"]')).to_have_text(
        "Click again to delete"
    )
    page.locator(f'tr[data-doc-id="{free.id}"] button[data-action="delete"]').click()
    expect(page.locator(f'tr[data-doc-id="{free.id}"]')).to_have_count(0)
    assert [d.name for d in list_documents(ws, project)] == ["timetable.txt"]


def select_text(page: Page, words: str) -> None:
    """Select the first occurrence of ``words`` in the document's shown text, as a mouse would."""
    found = page.evaluate(
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
                return true;
            }
            return false;
        }""",
        words,
    )
    assert found, words


def select_across(page: Page, first: str, last: str) -> None:
    """Select from the start of ``first`` to the end of ``last`` (different elements)."""
    page.evaluate(
        """([first, last]) => {
            const body = document.getElementById("doc-body");
            const nodes = [];
            const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
            const a = nodes.find((n) => n.data.includes(first));
            const b = nodes.find((n) => n.data.includes(last));
            const range = document.createRange();
            range.setStart(a, a.data.indexOf(first));
            range.setEnd(b, b.data.indexOf(last) + last.length);
            getSelection().removeAllRanges();
            getSelection().addRange(range);
        }""",
        [first, last],
    )


@pytest.mark.parametrize("view", ["rendered", "text"])
def test_a_selected_passage_starts_a_new_item_with_it_as_evidence(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer, view: str
) -> None:
    doc = ingest_bytes(ws, project, "ferries.md", SOURCE.encode())
    suffix = "?view=text" if view == "text" else ""
    page.goto(f"{live_server.url}/projects/test/documents/{doc.id}{suffix}")
    expect(page.locator("#doc-body h2" if view == "rendered" else "#doc-body pre")).to_be_visible()
    button = page.get_by_role("button", name="New item with the selection as evidence")
    expect(button).to_be_disabled()
    if view == "rendered":  # across the bold words and the line end
        select_across(page, "night ferry", "ride free on it")
        wanted = "night ferry** leaves pier 3 at 22:40 every day.\nBikes ride free on it"
    else:
        select_text(page, "leaves pier 3 at 22:40")
        wanted = "leaves pier 3 at 22:40"
    expect(button).to_be_enabled()
    button.click()
    expect(page).to_have_url(re.compile(r"/projects/test/items/new\?"))
    expect(page.locator("#f-query")).to_have_value("")
    evidence = page.locator("#ev-list")
    expect(evidence).to_contain_text(wanted.split("\n")[0][:20])
    page.locator("#f-query").fill("When does the night ferry leave?")
    expect(page).to_have_url(re.compile(r"/projects/test/items/[0-9a-f-]{36}"))

    total, rows = list_items(ws, project)
    assert total == 1
    item = get_item(ws, project, rows[0].id)
    assert item.turns[0].query == "When does the night ferry leave?"
    [passage] = item.turns[0].evidence
    start = SOURCE.index(wanted)
    assert (passage.doc_id, passage.start, passage.end) == (doc.id, start, start + len(wanted))
    assert passage.text == wanted == SOURCE[passage.start : passage.end]
    assert passage.label == "relevant" and passage.origin == "selected"


def test_import_by_drop_with_the_format_from_a_link(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer, tmp_path: Path
) -> None:
    source = tmp_path / "tasks.jsonl"
    text = "Ferries leave at 22:40."
    bundle = Bundle(
        documents=[DocumentRecord(ref="d1", name="ferries.txt", text=text)],
        items=[
            Item(
                id="ferry-1",
                turns=[
                    Turn(
                        query="When?",
                        answer="22:40",
                        evidence=[Evidence(doc_id="d1", start=17, end=22, text="22:40")],
                    )
                ],
            )
        ],
    )
    get_format("mtrag").write(bundle, source)
    page.goto(f"{live_server.url}/projects/test/transfer?format=mtrag")
    expect(page.locator("#import-format")).to_have_value("mtrag")
    expect(page.locator("#export-format")).to_have_value("mtrag")
    expect(page.locator("#import-format option:checked")).to_have_text("MTRAG generation tasks")
    expect(page.locator("#import-format-help")).to_contain_text("JSON Lines")
    drop_files(page, "#import-drop", [("tasks.jsonl", "application/jsonl", source.read_bytes())])
    expect(page.locator("#import-dropped")).to_have_text("Chosen: tasks.jsonl")
    expect(page.locator("#import-format")).to_have_value("mtrag")
    page.get_by_role("button", name="Start the import").click()
    expect(page.locator("#import-report")).to_contain_text("Imported into “test”")
    # the job list shows the import without a reload
    expect(page.locator("#jobs tbody tr").first).to_contain_text("MTRAG generation tasks")
    expect(page.locator("#jobs tbody tr").first).to_contain_text("done")
    total, rows = list_items(ws, project)
    assert total == 1 and rows[0].query == "When?"

    page.goto(f"{live_server.url}/projects/test/transfer?format=nonsense")
    expect(page.get_by_role("alert")).to_contain_text("“nonsense”")


def test_a_finished_export_shows_its_download_link_in_view(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    page.set_viewport_size({"width": 1280, "height": 720})
    doc = ingest_bytes(ws, project, "policy.txt", b"Hotels are refunded up to 140 euros.")
    create_item(
        ws,
        project,
        Item(
            turns=[Turn(query="Hotel refund?", evidence=[Evidence(doc_id=doc.id, start=0, end=6)])]
        ),
        status="accepted",
    )
    create_item(ws, project, Item(turns=[Turn(query="A draft")]))
    page.goto(f"{live_server.url}/projects/test/transfer?format=csv")
    export = page.locator("#export")
    expect(export.get_by_label("accepted")).to_be_checked()
    expect(export.get_by_label("draft")).not_to_be_checked()
    expect(page.locator("#export-format option:checked")).to_have_text("Spreadsheet (CSV)")
    page.get_by_role("button", name="Start the export").click()
    link = page.locator("#export-download")
    expect(link).to_have_text("Download test-csv.csv")
    expect(link).to_be_in_viewport()
    expect(link).to_be_focused()
    expect(page.locator("#jobs tbody tr").first).to_contain_text("Spreadsheet (CSV)")
    expect(page.locator("#jobs tbody tr").first.get_by_role("link")).to_have_text("test-csv.csv")
