"""A small project for suggestion tests and the fake model's judgments of its passages.

The fake judges like a careful reader would here: a passage that gives the 22:40 departure is
relevant, one about ferries otherwise is distracting, the rest irrelevant. Its replies are
made from the prompt it receives, so they fit whatever passages a test asks about.
"""

from __future__ import annotations

import json
import re
from typing import Any

from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item
from assay.gold.project_config import update_settings
from assay.records import Item, Project, Turn
from assay.store.workspace import Workspace
from tests.fakes.openai_server import Computed, FakeOpenAI

DOCS = {
    "ferry.md": "The night ferry leaves at 22:40 from pier 3. It stops at the island.",
    "bikes.md": "Bikes ride free on every ferry. The night ferry carries ten bikes at most.",
    "winter.txt": "From December the night ferry leaves at 21:15 instead.",
    "cake.md": "Our bakery sells lemon cake on Sundays and the ferry café sells none.",
}
QUESTION = "When does the night ferry leave?"
_PASSAGE = re.compile(r"^\[(\d+)\]\n(.*?)(?=\n\n\[\d+\]\n|\Z)", re.MULTILINE | re.DOTALL)


def add_documents(ws: Workspace, project: Project) -> dict[str, str]:
    """The documents, ingested; their ids by name."""
    return {name: ingest_bytes(ws, project, name, text.encode()).id for name, text in DOCS.items()}


def new_item(ws: Workspace, project: Project, query: str = QUESTION) -> Item:
    return create_item(ws, project, Item(turns=[Turn(query=query)]))


def use_fake(ws: Workspace, project: Project, fake: FakeOpenAI, **extra: Any) -> Project:
    settings = {"kind": "openai", "base_url": fake.url, "model": "m", "retries": 0}
    return update_settings(ws, project, {"generator": settings | {"timeout_s": 2.0} | extra})


def label_of(text: str) -> str:
    if "22:40" in text:
        return "relevant"
    return "distracting" if "ferry" in text.lower() and "bakery" not in text else "irrelevant"


def passages_asked(body: dict[str, Any]) -> list[str]:
    """The passages of a relevance prompt, in order."""
    prompt = body["messages"][-1]["content"]
    part = prompt.split("Passages:\n", 1)[1]
    return [m.group(2).strip() for m in _PASSAGE.finditer(part.strip("\n"))]


def judge(body: dict[str, Any]) -> str:
    judgments = [
        {"passage": n, "label": label_of(text), "reason": f"Fake reason {n}: {label_of(text)}."}
        for n, text in enumerate(passages_asked(body), start=1)
    ]
    return json.dumps({"judgments": judgments})


def rewrite(body: dict[str, Any]) -> str:
    return json.dumps({"rewrite": "When does the night ferry leave in winter?"})


JUDGE = Computed(judge, model="fake-judge-1")
REWRITE = Computed(rewrite, model="fake-judge-1")
