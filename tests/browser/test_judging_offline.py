"""The offline judging page in the real Chromium, opened from file:// with no server: a judge
marks a report (a selection across two sentences), a hostile document and a citation, the
work survives a reload, and the downloaded JSONL merges into the project with the importer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from assay.judging.judgment_files import import_judgments, judgment_records
from assay.judging.judgments import Span, list_judgments
from assay.judging.offline_page import offline_page, write_offline_page
from assay.judging.run_import import import_judging_inputs
from assay.records import Project
from assay.store.projects import create_project
from assay.store.workspace import Workspace

pytestmark = pytest.mark.browser

HOSTILE = "</script><img src=x onerror=alert(1)>"
EVIL_TEXT = f"A page that tries {HOSTILE} to run code. Bees \U0001f41d buzz, more text here."
REPORT = '[aria-label="Report text"]'
DOCUMENT = '[aria-label="Document text"]'
SENTENCE = '[aria-label="Sentence text"]'
SENTENCES = ["Bees make honey from nectar.", "They keep it in wax cells."]


def _project(ws: Workspace, tmp_path: Path, name: str = "bees", language: str = "en") -> Project:
    project = create_project(ws, name, language)
    topics = tmp_path / "topics.jsonl"
    topics.write_text(json.dumps({"request_id": "honey", "title": "How bees make honey"}) + "\n")
    run = tmp_path / "run.jsonl"
    report = {
        "metadata": {"team_id": "hive", "run_id": "r1", "topic_id": "honey"},
        "responses": [
            {"text": SENTENCES[0], "citations": ["evil", "Honey"]},
            {"text": SENTENCES[1], "citations": []},
        ],
        "documents": {
            "evil": {"id": "evil", "title": "Hostile page", "text": EVIL_TEXT},
            "Honey": {"id": "Honey", "title": "Honey", "text": "Honey is made by bees."},
        },
    }
    run.write_text(json.dumps(report) + "\n")
    import_judging_inputs(ws, project, topics=topics, runs=[run])
    return project


def _page_file(ws: Workspace, project: Project, tmp_path: Path, mode: str) -> str:
    path = tmp_path / f"{mode}.html"
    write_offline_page(path, offline_page(ws, project, mode=mode, dataset="bees-1"))
    return path.as_uri()


def _select(page: Page, selector: str, start: str, end: str) -> None:
    """Select from the first ``start`` to the end of the next ``end`` inside ``selector``."""
    page.evaluate(
        """([selector, start, end]) => {
            const root = document.querySelector(selector);
            const nodes = [];
            const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
            for (let t = walker.nextNode(); t; t = walker.nextNode()) nodes.push(t);
            const first = nodes.findIndex((t) => t.data.includes(start));
            const last = nodes.findIndex((t, i) => i >= first && t.data.includes(end));
            const range = document.createRange();
            range.setStart(nodes[first], nodes[first].data.indexOf(start));
            range.setEnd(nodes[last], nodes[last].data.indexOf(end) + end.length);
            window.getSelection().removeAllRanges();
            window.getSelection().addRange(range);
        }""",
        [selector, start, end],
    )


def _drag_over(page: Page, selector: str, phrase: str) -> None:
    """Select ``phrase`` with the mouse, as a judge does (the page marks it on release)."""
    box = page.evaluate(
        """([selector, phrase]) => {
            const root = document.querySelector(selector);
            const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
            for (let t = walker.nextNode(); t; t = walker.nextNode()) {
                const at = t.data.indexOf(phrase);
                if (at < 0) continue;
                const rect = (from, to) => {
                    const r = document.createRange();
                    r.setStart(t, from);
                    r.setEnd(t, to);
                    return r.getBoundingClientRect();
                };
                const first = rect(at, at + 1);
                const last = rect(at + phrase.length - 1, at + phrase.length);
                return [first.left + 1, first.top + first.height / 2,
                        last.right - 1, last.top + last.height / 2];
            }
            return null;
        }""",
        [selector, phrase],
    )
    assert box is not None, phrase
    page.mouse.move(box[0], box[1])
    page.mouse.down()
    page.mouse.move(box[2], box[3], steps=5)
    page.mouse.up()


def _download(page: Page, into: Path) -> list[dict[str, object]]:
    with page.expect_download() as download:
        page.get_by_role("button", name="Download JSONL").click()
    download.value.save_as(into)
    return [json.loads(line) for line in into.read_text(encoding="utf-8").splitlines()]


def test_judge_offline_download_and_merge(page: Page, ws: Workspace, tmp_path: Path) -> None:
    project = _project(ws, tmp_path)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    downloads = tmp_path / "downloads"
    downloads.mkdir()

    # reports: one selection across both sentences becomes one span per sentence, trimmed
    page.goto(_page_file(ws, project, tmp_path, "reports"))
    expect(page.get_by_text("0 of 1 judged").first).to_be_visible()
    page.get_by_label("Your name").fill("Ada Judge")
    page.get_by_label("Report text").focus()  # the keys go to the page, not to the name
    _select(page, REPORT, " from nectar.", "They keep")
    page.keyboard.press("r")
    spans = page.get_by_role("list", name="Spans").get_by_role("listitem")
    expect(spans).to_have_text(["S1: “from nectar.”×", "S2: “They keep”×"])
    page.keyboard.press("1")
    page.get_by_label("Comment").fill("Clear, but thin.")
    page.reload()  # the work is in the browser's storage
    expect(spans).to_have_text(["S1: “from nectar.”×", "S2: “They keep”×"])
    expect(page.get_by_label("Perfect")).to_be_checked()
    expect(page.get_by_label("Comment")).to_have_value("Clear, but thin.")
    expect(page.get_by_label("Your name")).to_have_value("Ada Judge")
    expect(page.locator("#overall")).to_have_text("1 of 1 judged")
    (report,) = _download(page, downloads / "reports.jsonl")
    assert list(report) == [
        "dataset", "request_id", "run_id", "team_id", "topic_id", "username", "rating",
        "comment", "spans", "report",
    ]  # fmt: skip
    assert report["spans"] == [
        {"start": 16, "end": 28, "text": "from nectar.", "sentence_idx": 0},
        {"start": 29, "end": 38, "text": "They keep", "sentence_idx": 1},
    ]
    assert report["username"] == "Ada Judge" and report["dataset"] == "bees-1"

    # documents: the hostile document is text on the page, and a span after an emoji
    # counts code points as the project does
    page.goto(_page_file(ws, project, tmp_path, "documents"))
    page.get_by_role("button", name="Hostile page").click()
    document_text = page.get_by_label("Document text")
    expect(document_text).to_contain_text(HOSTILE)
    assert page.locator("img").count() == 0
    _drag_over(page, DOCUMENT, "more text")
    expect(page.get_by_role("list", name="Spans")).to_have_text("“more text”×")
    page.keyboard.press("3")
    (document,) = _download(page, downloads / "documents.jsonl")
    shown = f"Hostile page\n\n{EVIL_TEXT}"
    start = shown.index("more text")
    assert document["docid"] == "evil" and document["rating"] == "So-so"
    assert document["spans"] == [{"start": start, "end": start + 9, "text": "more text"}]
    assert document["document"] == {
        "id": "evil", "text": EVIL_TEXT, "title": "Hostile page", "url": None,
    }  # fmt: skip

    # citations: a span on the sentence and one on the cited document
    page.goto(_page_file(ws, project, tmp_path, "citations"))
    expect(page.get_by_role("heading", name="sentence 1, citing evil")).to_be_visible()
    _select(page, SENTENCE, "Bees make", "honey")
    page.keyboard.press("r")
    _select(page, DOCUMENT, "Bees", "buzz")
    page.keyboard.press("r")
    page.keyboard.press("4")
    expect(page.get_by_role("list", name="Sentence spans")).to_have_text("“Bees make honey”×")
    (citation,) = _download(page, downloads / "citations.jsonl")
    assert citation["report_spans"] == [{"start": 0, "end": 15, "text": "Bees make honey"}]
    cited = citation["citation"]
    assert isinstance(cited, dict)
    assert (cited["sentence_idx"], cited["docid"]) == (0, "evil")
    assert cited["sentence"] == {"text": SENTENCES[0], "citations": ["evil", "Honey"]}

    # the downloads merge into the project as the judge's judgments
    merged = import_judgments(ws, project, downloads)
    assert (merged.added, merged.judges, merged.datasets) == (3, ["Ada Judge"], ["bees-1"])
    judged = {j.unit.mode: j for j in list_judgments(ws, project)}
    assert judged["report"].spans == (
        Span(16, 28, "from nectar.", 0),
        Span(29, 38, "They keep", 1),
    )
    assert (judged["report"].rating, judged["report"].comment) == ("Perfect", "Clear, but thin.")
    assert judged["document"].spans == (Span(start, start + 9, "more text"),)
    assert judged["citation"].unit.doc_id == "evil" and judged["citation"].rating == "Bad"
    bees = shown.index("Bees")
    assert judged["citation"].spans == (Span(bees, bees + 11, "Bees \U0001f41d buzz"),)
    assert judged["citation"].report_spans == (Span(0, 15, "Bees make honey"),)
    assert {j.judge for j in judged.values()} == {"Ada Judge"}
    # what the page wrote is what the project exports for the same judgments, key for key
    exported = list(judgment_records(ws, project, dataset="bees-1"))
    assert exported == [report, document, citation]
    assert [list(r) for r in exported] == [list(r) for r in (report, document, citation)]
    assert dialogs == []


def test_the_page_speaks_the_projects_german(page: Page, ws: Workspace, tmp_path: Path) -> None:
    german = _project(ws, tmp_path, "bienen", "de")
    path = tmp_path / "berichte.html"
    write_offline_page(path, offline_page(ws, german, mode="reports", dataset="bienen"))
    page.goto(path.as_uri())
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page.get_by_role("heading", name="bienen · Berichte (Projekt bienen)")).to_be_visible()
    expect(page.locator("#overall")).to_have_text("0 von 1 bewertet")
    page.get_by_role("button", name="JSONL herunterladen").click()
    expect(page.get_by_role("status")).to_have_text(
        "Geben Sie zuerst Ihren Namen ein: Das Projekt führt Bewertungen danach zusammen."
    )
    expect(page.get_by_label("Ihr Name")).to_be_focused()
    page.get_by_label("Berichtstext").focus()
    _select(page, '[aria-label="Berichtstext"]', "nectar", "They")
    page.keyboard.press("r")
    expect(page.get_by_role("list", name="Stellen").get_by_role("listitem")).to_have_text(
        ["S1: „nectar.“×", "S2: „They“×"]
    )
    expect(page.locator("#overall")).to_have_text("1 von 1 bewertet")
