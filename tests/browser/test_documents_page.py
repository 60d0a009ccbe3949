"""The documents workbench in the real Chromium: create a project, upload by drop and by picker
with per-file outcomes, view chunk boundaries, rename, delete with the 3-second confirm, edit the
query types, and keep user text inert."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import FilePayload, Locator, Page, expect

from assay.corpus.documents import get_document, list_documents
from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item
from assay.records import Evidence, Item, Project, Turn
from assay.store.projects import get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

PAYLOAD = "<img src=x onerror=window.__xss=1>"
DATA = Path(__file__).resolve().parents[1] / "data" / "parsing"
LIMIT_MB = 0.05  # 52,428 bytes: the sample PDF (22 KB) fits, 60 KB does not


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace with a small upload limit, so an over-limit file is cheap to make."""
    workspace = Workspace.open(Settings(home=tmp_path / "ws", max_file_mb=LIMIT_MB))
    yield workspace
    workspace.close()


def drop_files(page: Page, selector: str, files: list[tuple[str, str, bytes]]) -> None:
    """Drop files on an element the way a browser does: a DataTransfer holding File objects.
    Waits for the page's scripts first: text rendered by the server is visible before the
    drop handlers exist, and a drop then would fall on nothing (seen on a busy machine)."""
    page.wait_for_load_state("load")
    payload = [
        {"name": name, "type": media_type, "data": base64.b64encode(data).decode()}
        for name, media_type, data in files
    ]
    page.evaluate(
        """([selector, files]) => {
            const transfer = new DataTransfer();
            for (const f of files) {
                const bytes = Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0));
                transfer.items.add(new File([bytes], f.name, { type: f.type }));
            }
            const target = document.querySelector(selector);
            for (const kind of ["dragenter", "dragover", "drop"]) {
                target.dispatchEvent(new DragEvent(kind, {
                    dataTransfer: transfer, bubbles: true, cancelable: true }));
            }
        }""",
        [selector, payload],
    )


def upload_row(page: Page, name: str) -> Locator:
    return page.locator(".upload-item", has=page.locator(".file-name", has_text=name))


def test_create_a_project_and_upload_three_documents_by_drop(
    page: Page, ws: Workspace, live_server: LiveServer
) -> None:
    page.goto(live_server.url + "/")
    page.get_by_label("Name", exact=True).fill("Ferries")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name="Ferries", level=1)).to_be_visible()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Documents").click()
    expect(page.get_by_text("No documents yet")).to_be_visible()

    drop_files(
        page,
        "#dropzone",
        [
            ("timetable.md", "text/markdown", b"# Timetable\n\nThe night ferry leaves at 22:40.\n"),
            ("sample.pdf", "application/pdf", (DATA / "sample.pdf").read_bytes()),
            (f"{PAYLOAD}.txt", "text/plain", f"Harbour notes {PAYLOAD} <b>bold</b>".encode()),
        ],
    )
    uploads = page.locator("#uploads .upload-item")
    expect(uploads).to_have_count(3)
    for row in uploads.all():
        expect(row).to_have_class(re.compile(r"\bok\b"))
        expect(row.locator("progress")).to_have_attribute("value", "100")
    expect(upload_row(page, "sample.pdf").locator(".file-status")).to_have_text(
        "added as “sample.pdf”"
    )
    expect(page.locator("#uploads")).to_have_attribute("aria-live", "polite")
    # The list was refreshed from the server with the three documents.
    expect(page.locator("td.doc-name a")).to_have_text(
        [f"{PAYLOAD}.txt", "sample.pdf", "timetable.md"]
    )
    expect(page.locator("main h1")).to_contain_text("(3)")

    # Dropping the same content again is reported as a duplicate, not added.
    drop_files(
        page,
        "#dropzone",
        [("again.md", "text/markdown", b"# Timetable\n\nThe night ferry leaves at 22:40.\n")],
    )
    expect(upload_row(page, "again.md").locator(".file-status")).to_have_text(
        "same content as “timetable.md”: not added again"
    )
    project = get_project(ws, "Ferries")
    assert len(list_documents(ws, project)) == 3
    # Search sees the uploads at once.
    page.get_by_label("Search the documents").fill("fire fighters")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("article.hit").first).to_contain_text("fire")
    assert page.evaluate("window.__xss") is None


def test_picker_upload_shows_per_file_errors(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    page.goto(live_server.url + "/projects/test/documents")
    files: list[FilePayload] = [
        {"name": "fine.txt", "mimeType": "text/plain", "buffer": b"A fine little text."},
        {"name": "huge.txt", "mimeType": "text/plain", "buffer": b"x" * 60_000},
        {"name": "latin.txt", "mimeType": "text/plain", "buffer": "Grüße".encode("cp1252")},
        {"name": "broken.pdf", "mimeType": "application/pdf", "buffer": b"%PDF-1.4 nope"},
    ]
    page.locator("#file-picker").set_input_files(files)
    expect(upload_row(page, "fine.txt")).to_have_class(re.compile(r"\bok\b"))
    for name, reason in (
        ("huge.txt", "0.05 MB limit"),
        ("latin.txt", "UTF-8"),
        ("broken.pdf", "broken.pdf"),
    ):
        row = upload_row(page, name)
        expect(row).to_have_class(re.compile(r"\berror\b"))
        status = row.locator(".file-status")
        expect(status).to_contain_text("not added: ")
        expect(status).to_contain_text(name)
        expect(status).to_contain_text(reason)
    assert [d.name for d in list_documents(ws, project)] == ["fine.txt"]


def test_view_chunks_rename_and_delete_with_confirm(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    text = " ".join(f"Sentence {n} tells about ferry number {n}." for n in range(80))
    long_doc = ingest_bytes(ws, project, "long.txt", text.encode())
    cited = ingest_bytes(ws, project, "cited.txt", b"The museum opens at nine every day.")
    create_item(
        ws,
        project,
        Item(
            turns=[
                Turn(
                    query="When does the museum open?",
                    answer="At nine.",
                    evidence=[Evidence(doc_id=cited.id, start=0, end=10)],
                )
            ]
        ),
    )

    # The document view: chunk boundaries, and the whole text exactly once.
    page.goto(f"{live_server.url}/projects/test/documents")
    page.get_by_role("link", name="long.txt", exact=True).click()
    expect(page.get_by_role("heading", name="long.txt", level=1)).to_be_visible()
    chunks = page.locator("pre.doctext .chunk")
    assert chunks.count() > 2
    assert page.locator("pre.doctext").evaluate("pre => pre.textContent") == text
    expect(chunks.nth(0)).to_have_class(re.compile(r"\bodd\b"))
    expect(chunks.nth(1)).to_have_class(re.compile(r"\beven\b"))
    marker = chunks.nth(1).evaluate("s => getComputedStyle(s, '::before').content")
    assert marker == '"#1"'
    expect(page.get_by_label("Chunk boundaries of")).to_have_value("default")

    # Notes with a payload stay text (the form is among the folded details).
    page.get_by_text("Details: file, parser, metadata, name and notes").click()
    page.get_by_label("Notes", exact=True).fill(PAYLOAD)
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("article.document .row-status")).to_have_text("Saved.")
    assert get_document(ws, project, long_doc.id).notes == PAYLOAD
    page.reload()
    expect(page.locator(".notes")).to_have_text(PAYLOAD)

    # Rename inline on the list.
    page.goto(f"{live_server.url}/projects/test/documents")
    page.get_by_role("button", name="Rename long.txt").click()
    page.get_by_label("New name").fill(f"{PAYLOAD} ferries.txt")
    page.get_by_label("New name").press("Enter")
    expect(page.get_by_role("link", name=f"{PAYLOAD} ferries.txt", exact=True)).to_be_visible()
    assert get_document(ws, project, long_doc.id).name == f"{PAYLOAD} ferries.txt"

    # Delete needs a second click within 3 seconds; the first click alone does nothing.
    delete = page.locator(f'tr[data-doc-id="{long_doc.id}"] button[data-action="delete"]')
    delete.click()
    expect(delete).to_have_text("Click again to delete")
    expect(delete).to_have_text("Delete")  # the confirm expired
    assert get_document(ws, project, long_doc.id)
    delete.click()
    delete.click()
    expect(page.locator(f'tr[data-doc-id="{long_doc.id}"]')).to_have_count(0)
    assert [d.name for d in list_documents(ws, project)] == ["cited.txt"]

    # A document cited by an item cannot be deleted; the first click names the item.
    blocked = page.locator(f'tr[data-doc-id="{cited.id}"] button[data-action="delete"]')
    expect(blocked).to_have_accessible_name("Delete cited.txt")
    blocked.click()
    expect(blocked).to_have_accessible_name("Delete cited.txt")
    status = page.locator(f'tr[data-doc-id="{cited.id}"] .row-status')
    expect(status).to_contain_text("When does the museum open?")
    expect(status).to_have_class(re.compile(r"\berror\b"))
    assert page.evaluate("window.__xss") is None


def test_replace_flags_stale_evidence(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    text = "The ferry leaves at 22:40. Tickets cost 12 euros."
    doc = ingest_bytes(ws, project, "ferry.txt", text.encode())
    start = text.index("22:40")
    create_item(
        ws,
        project,
        Item(
            turns=[
                Turn(
                    query="When does the ferry leave?",
                    answer="At 22:40.",
                    evidence=[Evidence(doc_id=doc.id, start=start, end=start + 5)],
                )
            ]
        ),
    )
    page.goto(f"{live_server.url}/projects/test/documents/{doc.id}")
    page.get_by_label("Replace the file of ferry.txt").set_input_files(
        {"name": "ferry-v2.txt", "mimeType": "text/plain", "buffer": b"The boat departs at 23:10."}
    )
    status = page.locator("article.document .row-status")
    expect(status).to_contain_text("1 evidence passage(s) no longer match")
    expect(page.locator("pre.doctext")).to_have_text("The boat departs at 23:10.")

    # the item now needs review: the items list's filter finds it and marks it
    create_item(ws, project, Item(turns=[Turn(query="Untouched?")]))
    page.goto(f"{live_server.url}/projects/test/items")
    expect(page.locator("table.items tbody tr")).to_have_count(2)
    page.get_by_label("Evidence").select_option("needed")
    page.get_by_role("button", name="Apply").click()
    rows = page.locator("table.items tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("When does the ferry leave?")
    expect(rows.first.locator(".badge.needs-review")).to_have_text("needs review")


def test_user_text_stays_inert_everywhere(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    doc = ingest_bytes(
        ws, project, f"{PAYLOAD}.txt", f"Content {PAYLOAD} <script>window.__xss=2</script>".encode()
    )
    from assay.corpus.documents import update_document

    update_document(ws, doc, notes=f"{PAYLOAD}\n<script>window.__xss=3</script>")
    for path in (
        "/",
        "/projects/test",
        "/projects/test/documents",
        f"/projects/test/documents/{doc.id}",
    ):
        page.goto(live_server.url + path)
        assert page.evaluate("window.__xss") is None, path
    expect(page.locator("pre.doctext")).to_contain_text(f"Content {PAYLOAD}")
    expect(page.locator("h1")).to_have_text(f"{PAYLOAD}.txt")
    page.goto(live_server.url + "/projects/test/documents?search=content")
    expect(page.locator("article.hit").first).to_contain_text(PAYLOAD)
    assert page.evaluate("window.__xss") is None
    assert page.locator("img[src=x]").count() == 0


def test_query_type_editor_saves_and_shows_errors(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    page.goto(live_server.url + "/projects/test")
    editor = page.locator("section.taxonomy")
    expect(editor.locator(".type-list li")).to_have_count(4)
    editor.get_by_text("Edit the query types").click()
    expect(editor.locator("fieldset")).to_have_count(4)
    editor.get_by_role("button", name="Add a query type").click()
    new = editor.locator("fieldset").nth(4)
    expect(new.get_by_label("Id")).to_be_focused()
    new.get_by_label("Id").fill("fact_single")
    editor.get_by_role("button", name="Save query types").click()
    expect(editor.get_by_role("alert")).to_contain_text("unique")
    new.get_by_label("Id").fill("compare")
    new.get_by_label("Label (English)").fill(f"Compare {PAYLOAD}")
    new.get_by_label("Label (German)").fill("Vergleich")
    new.get_by_label("Definition (English)").fill("Two things side by side.")
    editor.locator("fieldset").nth(0).get_by_role("button", name="Remove").click()
    editor.get_by_role("button", name="Save query types").click()
    expect(editor.get_by_role("status")).to_have_text("Query types saved.")
    saved = get_project(ws, "test").settings["query_types"]
    assert [q["id"] for q in saved] == ["summary", "reasoning", "unanswerable", "compare"]
    assert saved[-1]["label"] == {"en": f"Compare {PAYLOAD}", "de": "Vergleich"}
    expect(editor.locator(".type-list li").last).to_have_text(f"Compare {PAYLOAD} compare")
    page.reload()
    expect(editor.locator(".type-list li")).to_have_count(4)
    expect(editor.get_by_text("This project has its own list.")).to_be_visible()
    editor.get_by_text("Edit the query types").click()
    editor.get_by_role("button", name="Restore the defaults").click()
    expect(editor.locator("fieldset").nth(0).get_by_label("Id")).to_have_value("fact_single")
    assert "query_types" not in get_project(ws, "test").settings
    assert page.evaluate("window.__xss") is None
