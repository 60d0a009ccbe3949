"""Screenshots of the judging workbench for docs/screenshots/ (run after changing it).

Run: python scripts/screenshots_judging.py [--out build/screenshots] [--all DIR]

Imports the kiddie topics and runs of the shared autojudge fixtures into a personal-mode
workspace, judges a few units (a report with spans in two sentences, a document, a citation
with both kinds of spans) and saves the overview and the three modes: English at 1440x900
(judging-reports.png, judging-documents.png, judging-citations.png) and 1280x720
(judging-overview.png, judging-*-1280.png), German at 1440x900 (judging-citations-de.png,
judging-reports-de.png). ``--all DIR`` also writes every page at both sizes in both languages
there, to look at.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

from playwright.sync_api import sync_playwright
from screenshot_docs import OUT_DIR, publish
from screenshots import CHROMIUM, CHROMIUM_ARGS, ROOT, serve
from screenshots_queue import SIZES, shoot

from assay import open_workspace
from assay.judging.assignments import assign_topics
from assay.judging.judgments import Span, Unit, save_judgment
from assay.judging.reports import get_documents, get_report
from assay.judging.run_import import import_judging_inputs
from assay.people.accounts import LOCAL, create_account
from assay.people.actors import acting_account
from assay.store.projects import create_project
from assay.store.workspace import Workspace

KIDDIE = ROOT.parent / "shared" / "fixtures" / "autojudge" / "kiddie"
PAGES = {
    "overview": "/projects/kids/judging",
    "reports": "/projects/kids/judging/reports?topic=leaf&at=0",
    "documents": "/projects/kids/judging/documents?topic=leaf&at=0",
    "citations": "/projects/kids/judging/citations?topic=leaf&run=run1&at=0",
}
SHOTS = (  # page, language, size, file
    ("overview", "en", "1280", "judging-overview.png"),
    ("reports", "en", "1440", "judging-reports.png"),
    ("reports", "en", "1280", "judging-reports-1280.png"),
    ("reports", "de", "1440", "judging-reports-de.png"),
    ("documents", "en", "1440", "judging-documents.png"),
    ("documents", "en", "1280", "judging-documents-1280.png"),
    ("citations", "en", "1440", "judging-citations.png"),
    ("citations", "en", "1280", "judging-citations-1280.png"),
    ("citations", "de", "1440", "judging-citations-de.png"),
)


def span(text: str, part: str, shift: int = 0, sentence_idx: int | None = None) -> Span:
    start = text.index(part)
    return Span(shift + start, shift + start + len(part), part, sentence_idx)


def seed(ws: Workspace) -> None:
    if not KIDDIE.is_dir():
        sys.exit(f"the kiddie fixtures are not at {KIDDIE} (they come with ../shared)")
    project = create_project(ws, "kids", "en")
    import_judging_inputs(
        ws, project, topics=KIDDIE / "topics" / "kiddie-topics.jsonl", runs=[KIDDIE / "runs"]
    )
    me = acting_account(ws)
    report = get_report(ws, project, "leaf", "run1")
    first, second = report.sentences[0].text, report.sentences[1].text
    doc = get_documents(ws, project, ["Chlorophyll"])["Chlorophyll"]
    judged = [
        (
            Unit.report("leaf", "run1"),
            {
                "rating": "Mostly Good",
                "comment": "Clear for a child; the last sentence is vague.",
                "spans": [
                    span(first, "a green pigment called chlorophyll", 0, 0),
                    span(second, "When days get shorter and cooler", report.starts[1], 1),
                ],
            },
        ),
        (Unit.report("leaf", "run2"), {"rating": "Perfect"}),
        (
            Unit.document("leaf", "Chlorophyll"),
            {"rating": "Perfect", "spans": [span(doc.text, "It gives leaves their green color")]},
        ),
        (
            Unit.citation("leaf", "run1", 0, "Chlorophyll"),
            {
                "rating": "Perfect",
                "comment": "The document says exactly this.",
                "report_spans": [span(first, "a green pigment called chlorophyll")],
                "spans": [span(doc.text, "Chlorophyll is a green pigment found in plants")],
            },
        ),
    ]
    for unit, fields in judged:
        save_judgment(ws, project, unit, judge_id=me, version=0, **fields)  # type: ignore[arg-type]
    # a lead gave one topic to this judge and to another: listed first, marked
    create_account(ws, "ada", "a long screenshot password")
    assign_topics(ws, project, "report", ["bee"], [LOCAL, "ada"], assigned_by=me)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--all", type=Path, default=None)
    parser.add_argument("--port", type=int, default=8767)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(Path(home))
        seed(ws)
        with serve(ws, args.port) as base_url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            for name, language, size, file in SHOTS:
                shoot(page, base_url, quote(PAGES[name]), language, size, args.out / file)
            if args.all:
                args.all.mkdir(parents=True, exist_ok=True)
                for name, path in PAGES.items():
                    for language in ("en", "de"):
                        for size in SIZES:
                            target = args.all / f"judging-{name}-{language}-{size}.png"
                            shoot(page, base_url, quote(path), language, size, target)
            browser.close()


if __name__ == "__main__":
    main()
    publish()
