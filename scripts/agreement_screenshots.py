"""Screenshots of the agreement page and the adjudication view for docs/screenshots/.

Run: python scripts/agreement_screenshots.py [--out build/screenshots] [--all-sizes DIR]

Builds the demo project in a temporary workspace, gives ten demo questions to three
annotators (copies, as overlap does), each handing in a version that differs a little
(query type, answer, passages, groups), adjudicates three, and saves agreement.png and
adjudication.png (1440x900, English). ``--all-sizes DIR`` also writes both pages at
1280x720 and 1440x900 in English and German into DIR, to look at.
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

from assay import open_workspace  # noqa: E402
from assay.corpus.documents import get_document_by_name  # noqa: E402
from assay.demo import gold_items, open_demo  # noqa: E402
from assay.gold.items import (  # noqa: E402
    create_item,
    get_item,
    save_item,
    set_status,
)
from assay.people.accounts import create_account  # noqa: E402
from assay.records import Evidence, Item, Project, Turn  # noqa: E402
from assay.review.adjudication import adjudicate, pick_all, versions  # noqa: E402
from assay.review.copies import copy_item  # noqa: E402
from assay.store.workspace import Workspace  # noqa: E402

TYPES = ["fact_single", "summary", "reasoning", "unanswerable"]


def version(ws: Workspace, project: Project, gold: dict[str, object], rng: random.Random) -> Turn:
    """One annotator's take on a demo question: mostly the demo gold, sometimes not."""
    evidence = [
        Evidence(
            doc_id=get_document_by_name(ws, project, ev["document"]).id,
            text=ev["text"],
            group=ev.get("group") if rng.random() < 0.7 else None,
            label=ev.get("label", "relevant") if rng.random() < 0.85 else "distracting",
        )
        for ev in gold["evidence"]  # type: ignore[attr-defined]
        if rng.random() < 0.85
    ]
    query_type = str(gold.get("query_type", "fact_single"))
    if rng.random() < 0.25:
        query_type = rng.choice(TYPES)
    answer = str(gold.get("answer", ""))
    if rng.random() < 0.4:
        answer = " ".join(answer.split()[: max(3, len(answer.split()) // 2)])
    return Turn(query=str(gold["query"]), query_type=query_type, answer=answer, evidence=evidence)


def build(ws: Workspace) -> tuple[Project, str]:
    project, _ = open_demo(ws)
    names = ["ada", "bob", "cy"]
    who = {n: create_account(ws, n, f"a long password of {n}").id for n in names}
    rng = random.Random(14)
    shown = ""
    for n, gold in enumerate(gold_items()[:10]):
        original = create_item(ws, project, Item(turns=[Turn(query=gold["query"])]))
        for name in names:
            copy_id = copy_item(ws, project, original.id, who[name])
            stored = get_item(ws, project, copy_id)
            turn = version(ws, project, gold, rng)
            saved = save_item(
                ws, project, copy_id, Item(turns=[turn]), stored.version, author=who[name]
            )
            set_status(ws, project, copy_id, "submitted", saved.version, actor=who[name])
        sides = versions(ws, project, original.id)
        if n < 3:
            adjudicate(ws, project, original.id, pick_all(sides, sides[1].id), original.version)
        elif not shown and len({str(s.item.turns[0].evidence) for s in sides[1:]}) > 1:
            shown = original.id
    return project, shown or original.id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--all-sizes", type=Path, default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        ws = open_workspace(home)
        project, item_id = build(ws)
        pages = {
            "agreement": f"/projects/{project.name}/agreement",
            "adjudication": f"/projects/{project.name}/adjudication/{item_id}",
        }
        with serve(ws, port=8766) as base_url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            shots = [(args.out, "en", {"width": 1440, "height": 900}, "")]
            if args.all_sizes:
                args.all_sizes.mkdir(parents=True, exist_ok=True)
                for lang in ("en", "de"):
                    for w, h in ((1280, 720), (1440, 900)):
                        shots.append(
                            (args.all_sizes, lang, {"width": w, "height": h}, f"-{lang}-{w}")
                        )
            for folder, lang, size, suffix in shots:
                page = browser.new_page(
                    viewport=size, locale=lang, extra_http_headers={"Accept-Language": lang}
                )
                for name, path in pages.items():
                    page.goto(base_url + path)
                    page.wait_for_load_state("networkidle")
                    page.screenshot(path=str(folder / f"{name}{suffix}.png"))
                page.close()
            browser.close()
        ws.close()


if __name__ == "__main__":
    main()
    publish()
