"""Screenshots of an experiment page and the page comparing two experiments, for
docs/screenshots/.

Run: python scripts/screenshots_experiments.py [--out build/screenshots]

Starts the app on the demo project in a temporary workspace (as scripts/screenshots.py
does), accepts a dozen demo items, runs two RAG experiments with an LLM judge (the test
suite's fake OpenAI-compatible server answers as the judge, deterministically), and saves
at 1440×900 and 1280×720, in English and German: experiment*.png (the page of one
experiment: means with their n, the judge against people) and compare-experiments*.png,
plus experiments-form*.png (the metric list of the form).
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from assay import open_workspace
from assay.demo import open_demo
from assay.experiments import create_experiment, run_experiment
from assay.gold.item_lists import list_items
from assay.gold.items import set_status

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from screenshot_docs import OUT_DIR, publish
from screenshot_gold import write_items
from screenshots import CHROMIUM, CHROMIUM_ARGS, ROOT, serve
from tests.fakes.openai_server import FakeOpenAI, Reply

SIZES = {"": (1440, 900), "-1280": (1280, 720)}
VERDICTS = ["yes", "yes", "no", "yes", "no", "yes", "yes", "yes", "no", "yes", "no", "yes"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def judge(url: str) -> dict[str, object]:
    return {
        "kind": "judge",
        "name": "answerable",
        "values": ["yes", "no"],
        "instruction": "Say whether the documents answer the question.",
        "generator": {"kind": "openai", "base_url": url, "model": "judge"},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    replies = [Reply(f"<verdict>{v}</verdict>") for v in VERDICTS * 8]
    with tempfile.TemporaryDirectory() as home, FakeOpenAI(replies) as fake:
        ws = open_workspace(Path(home))
        project, _ = open_demo(ws)
        with serve(ws, free_port()) as base_url, sync_playwright() as playwright:
            write_items(ws, project, base_url)
            for row in list_items(ws, project, limit=100)[1]:
                if row.status != "accepted":
                    set_status(ws, project, row.id, "accepted", row.version)
            metrics = ["retrieval_recall", "nDCG@10", "R@5", "token_f1", "rouge_l", judge(fake.url)]
            hybrid = {"name": "hybrid", "retriever": {"kind": "hybrid", "embedder": "hashing"}}
            first = create_experiment(
                ws, project, "baseline", pipelines=["keyword", hybrid], mode="rag", metrics=metrics
            )
            run_experiment(ws, project, first.id)
            fake.reset(list(reversed(replies)))
            tuned = {
                "name": "hybrid-k5",
                "retriever": {"kind": "hybrid", "embedder": "hashing", "k": 5},
            }
            second = create_experiment(
                ws, project, "hybrid, 5 passages", pipelines=[tuned], mode="rag", metrics=metrics
            )
            run_experiment(ws, project, second.id)

            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for language in ("en", "de"):
                for size, (width, height) in SIZES.items():
                    context = browser.new_context(viewport={"width": width, "height": height})
                    page = context.new_page()
                    page.goto(f"{base_url}/language/{language}?next=/")
                    tag = ("" if language == "en" else f"-{language}") + size
                    page.goto(f"{base_url}/projects/demo/experiments/{first.id}")
                    page.screenshot(path=str(args.out / f"experiment{tag}.png"), full_page=True)
                    page.goto(
                        f"{base_url}/projects/demo/compare-experiments"
                        f"?a={first.id}&pa=keyword&b={second.id}"
                    )
                    page.screenshot(
                        path=str(args.out / f"compare-experiments{tag}.png"), full_page=True
                    )
                    page.goto(f"{base_url}/projects/demo/experiments")
                    page.locator("#metric-picker").scroll_into_view_if_needed()
                    page.screenshot(path=str(args.out / f"experiments-form{tag}.png"))
                    context.close()
            browser.close()
        ws.close()
    for png in sorted(args.out.glob("*experiment*.png")):
        print(png.relative_to(ROOT) if png.is_relative_to(ROOT) else png)


if __name__ == "__main__":
    main()
    publish()
