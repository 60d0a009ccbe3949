"""Languages and the annotator's name in the real Chromium."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from assay.corpus.documents import list_documents
from assay.corpus.ingest import ingest_bytes
from assay.records import Project
from assay.store.workspace import Workspace
from tests.conftest import LiveServer

pytestmark = pytest.mark.browser

PAYLOAD = "<img src=x onerror=window.__xss=1>"


def test_switch_to_german_and_back(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    doc = ingest_bytes(ws, project, "fahrplan.txt", b"Die Nachtfaehre faehrt um 22:40.")
    page.goto(live_server.url + "/projects/test/documents")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.get_by_role("button", name="Deutsch").click()
    expect(page.locator("html")).to_have_attribute("lang", "de")
    assert page.url.endswith("/projects/test/documents")  # stays on the same page
    expect(page.get_by_role("heading", name="Dokumente hochladen")).to_be_visible()
    expect(page.get_by_role("button", name="fahrplan.txt umbenennen")).to_be_visible()
    expect(page.get_by_role("columnheader", name="Aktionen")).to_be_visible()
    expect(page.get_by_label("Ihr Name")).to_be_visible()

    page.get_by_role("link", name="fahrplan.txt", exact=True).click()
    expect(page.get_by_role("heading", name="Text", exact=True)).to_be_visible()
    expect(page.get_by_label("Abschnittsgrenzen von")).to_have_value("default")
    assert doc.id in page.url

    page.get_by_role("link", name="Anleitung").click()
    expect(page.get_by_role("heading", name="Anleitung für Annotierende")).to_be_visible()
    expect(
        page.get_by_role("heading", name="Beleggruppen: alle nötig oder eine genügt")
    ).to_be_visible()
    expect(page.locator("dl.query-types dt").first).to_contain_text("Einzelfakt")
    expect(page.locator("html")).to_have_attribute("lang", "de")

    page.get_by_role("button", name="English").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.get_by_role("heading", name="Guide for annotators")).to_be_visible()
    expect(page.get_by_role("heading", name="Keyboard shortcuts")).to_be_visible()


def test_the_annotator_name_is_kept_and_recorded(
    page: Page, ws: Workspace, project: Project, live_server: LiveServer
) -> None:
    page.goto(live_server.url + "/projects/test/documents")
    name = page.get_by_label("Your name")
    name.fill(f"Jürgen {PAYLOAD}")
    name.press("Enter")
    expect(page.locator("#author-status")).to_have_text(f"Saved: you work as Jürgen {PAYLOAD}.")
    page.reload()
    expect(page.get_by_label("Your name")).to_have_value(f"Jürgen {PAYLOAD}")

    page.locator("#file-picker").set_input_files(
        {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"Some harbour notes."}
    )
    expect(page.locator("#uploads .upload-item")).to_have_class("upload-item ok")
    (document,) = list_documents(ws, project)
    page.get_by_role("link", name="notes.txt", exact=True).click()
    added_by = page.locator("dl.meta div", has=page.get_by_text("Added by", exact=True))
    expect(added_by.locator("dd")).to_have_text(f"Jürgen {PAYLOAD}")
    assert page.evaluate("window.__xss") is None

    page.get_by_label("Your name").fill("")
    page.get_by_label("Your name").press("Enter")
    expect(page.locator("#author-status")).to_have_text("Name removed.")
    assert not any(c["name"] == "assay_author" for c in page.context.cookies())
    assert document.name == "notes.txt"
