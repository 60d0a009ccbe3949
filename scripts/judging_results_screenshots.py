"""Screenshot of the judging results page (leaderboard and agreement) for docs/screenshots/.

Run: python scripts/judging_results_screenshots.py [--out build/screenshots] [--all DIR]

Imports the kiddie topics and its four runs (../shared/fixtures/autojudge/kiddie) into a
temporary workspace, lets three judges rate reports, citations and documents (seeded, each
run with a quality of its own, the judges disagreeing now and then, some spans), and saves
judging-results.png (1440x900, English). ``--all DIR`` also writes the page at 1280x720 and
1440x900 in English and German into DIR, to look at.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from screenshot_docs import OUT_DIR, publish  # noqa: E402
from screenshots import CHROMIUM, CHROMIUM_ARGS, serve  # noqa: E402
from screenshots_queue import SIZES, shoot  # noqa: E402

from assay import open_workspace  # noqa: E402
from assay.judging.judgments import Span, Unit, save_judgment  # noqa: E402
from assay.judging.reports import get_documents, list_reports, topic_doc_ids  # noqa: E402
from assay.judging.run_import import import_judging_inputs  # noqa: E402
from assay.judging.units import report_units  # noqa: E402
from assay.people.actors import account_for  # noqa: E402
from assay.records import Project  # noqa: E402
from assay.store.projects import create_project  # noqa: E402
from assay.store.workspace import Workspace  # noqa: E402

KIDDIE = ROOT.parent / "shared" / "fixtures" / "autojudge" / "kiddie"
RATINGS = ["Bad", "So-so", "Mostly Good", "Perfect"]
QUALITY = {"run1": 2.6, "run2": 1.9, "run3": 1.2, "run4": 0.6}
"""Each run's typical grade: the judges' ratings scatter around it."""


def rating(rng: random.Random, quality: float) -> str:
    return RATINGS[max(0, min(3, round(rng.gauss(quality, 0.8))))]


def first_words(text: str, words: int) -> Span:
    """A span over the first words of ``text`` (trimmed, as the workbench saves them)."""
    shown = " ".join(text.split(" ")[:words]).strip()
    return Span(0, len(shown), shown)


def build(ws: Workspace) -> Project:
    project = create_project(ws, "kiddie")
    import_judging_inputs(
        ws, project, topics=KIDDIE / "topics" / "kiddie-topics.jsonl", runs=[KIDDIE / "runs"]
    )
    judges = [account_for(ws, name) for name in ("ann", "bob", "cy")]
    rng = random.Random(15)

    def judge(unit: Unit, judge_id: int, quality: float, **more: object) -> None:
        save_judgment(
            ws, project, unit, judge_id=judge_id, version=0, rating=rating(rng, quality), **more
        )

    for report in list_reports(ws, project):
        quality = QUALITY[report.run_id]
        for judge_id in judges[: rng.choice((1, 2, 2, 3))]:
            judge(report_units("report", report)[0], judge_id, quality)
        for unit in report_units("citation", report):
            for judge_id in judges[: rng.choice((1, 1, 2))]:
                sentence = report.sentences[unit.sentence_idx or 0].text
                spans = [first_words(sentence, rng.choice((3, 4)))]
                judge(unit, judge_id, quality, report_spans=spans)
    for topic in {r.topic_id for r in list_reports(ws, project)}:
        for doc_id in topic_doc_ids(ws, project, topic):
            text = get_documents(ws, project, [doc_id])[doc_id].text
            relevance = rng.uniform(0.0, 3.0)
            for judge_id in judges[: rng.choice((1, 2, 3))]:
                spans = [first_words(text, rng.choice((4, 6, 9)))]
                judge(Unit.document(topic, doc_id), judge_id, relevance, spans=spans)
    return project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--all", type=Path, default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(Path(home))
        project = build(ws)
        path = f"/projects/{project.name}/judging-results"
        with serve(ws, port=8767) as base_url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            shoot(page, base_url, path, "en", "1440", args.out / "judging-results.png")
            if args.all:
                args.all.mkdir(parents=True, exist_ok=True)
                for size in SIZES:
                    for language in ("en", "de"):
                        target = args.all / f"judging-results-{language}-{size}.png"
                        shoot(page, base_url, path, language, size, target)
            browser.close()
        ws.close()


if __name__ == "__main__":
    main()
    publish()
