"""A conversation typed into ``assay chat`` carries on in the web workbench: the real CLI (a
separate process on the same workspace) saves two turns; the page shows them, streams a new
answer for the last turn, which is taken and survives a reload; a third turn is asked on the
page; the chat turns and the web turn are stored in one shape; an edited question autosaves;
the export page writes the conversation with all its turns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from assay.corpus.ingest import ingest_bytes
from assay.gold.item_lists import list_items
from assay.gold.items import get_item
from assay.gold.project_config import update_settings
from assay.records import Project
from assay.store.workspace import Workspace
from tests.conftest import LiveServer
from tests.fakes.openai_server import FakeOpenAI, Stream

pytestmark = pytest.mark.browser

DOCS = {
    "ferry.md": "The night ferry leaves at 22:40 from pier 3. It stops at the island.",
    "bikes.md": "Bikes ride free on every ferry. The night ferry carries ten bikes at most.",
    "winter.txt": "From December the night ferry leaves at 21:15 instead.",
}
ASKED = ("When does the night ferry leave?", "And from December on?")
REGENERATED = ("From December ", "the night ferry ", "leaves at 21:15 [1].")
THIRD = "How many bikes does it carry?"
EDITED = "When exactly does the night ferry leave pier 3?"

# The text of each write into the page's live answer area while a stream runs (the area is
# gone afterwards): a write adds a new text node, whose text stays as it was written.
WATCH_LIVE = """
window.__live = [];
new MutationObserver((changes) => {
  for (const change of changes) {
    if (change.target.classList && change.target.classList.contains("live-answer")) {
      window.__live.push(Array.from(change.addedNodes, (n) => n.textContent).join(""));
    }
  }
}).observe(document, { subtree: true, childList: true });
"""


def chat_in_terminal(ws: Workspace, lines: tuple[str, ...]) -> str:
    """Run ``assay chat --save`` as a user would, in its own process; returns its output."""
    home = str(ws.settings.home)
    done = subprocess.run(
        [sys.executable, "-m", "assay", "--home", home, "chat", "--project", "test", "--save"],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"({len(lines)} turns)" in done.stdout, done.stdout
    return done.stdout


def test_a_terminal_chat_is_regenerated_edited_and_exported_on_the_page(
    page: Page, ws: Workspace, project: Project, tmp_path: Path
) -> None:
    for name, text in DOCS.items():
        ingest_bytes(ws, project, name, text.encode())
    chat_in_terminal(ws, ASKED)
    (summary,) = list_items(ws, project, kind="conversation")[1]
    chatted = get_item(ws, project, summary.id)
    assert chatted.origin == "chat" and [t.query for t in chatted.turns] == list(ASKED)
    assert all(t.answer for t in chatted.turns)

    script = [Stream(pieces=REGENERATED), Stream(pieces=("It carries ten bikes [1].",))]
    with FakeOpenAI(script) as fake, LiveServer(ws) as server:
        page.add_init_script(WATCH_LIVE)
        url = f"{server.url}/projects/test/conversations/{chatted.id}"
        page.goto(url)
        expect(page.locator("#turns .turn")).to_have_count(2)
        expect(page.locator("#t0-question")).to_have_value(ASKED[0])
        expect(page.locator("#t0-answer")).to_have_value(chatted.turns[0].answer)
        expect(page.locator("#t1-answer")).to_have_value(chatted.turns[1].answer)
        second = page.locator('.turn[data-turn="1"]')
        passages = second.locator(".passage")
        expect(passages.first).to_contain_text("21:15")  # the chat's contexts, with names
        expect(passages.first.locator(".docname")).to_have_text("winter.txt")

        # regenerate the last turn from its relevant passage with an LLM: streamed into a draft
        # beside the chat's answer, taken, kept after a reload
        settings = {"kind": "openai", "base_url": fake.url, "model": "m", "retries": 0}
        update_settings(ws, project, {"generator": settings})
        passages.first.get_by_role("button", name="relevant", exact=True).click()
        second.get_by_role("button", name="Regenerate").click()
        new_answer = "".join(REGENERATED)
        expect(page.locator("#t1-draft")).to_have_text(new_answer)
        writes = page.evaluate("window.__live")  # the answer grew piece by piece
        assert writes == ["".join(REGENERATED[:n]) for n in range(1, len(REGENERATED) + 1)]
        expect(page.locator("#t1-answer")).to_have_value(chatted.turns[1].answer)
        second.get_by_role("button", name="Use this answer").click()
        expect(page.locator("#t1-answer")).to_have_value(new_answer)
        expect(page.locator("#save-state")).to_have_text("All changes saved")
        page.reload()
        expect(page.locator("#t1-answer")).to_have_value(new_answer)
        expect(page.locator("#t1-draft")).to_have_count(0)

        # a third turn asked on the page, then the first question edited and autosaved
        page.locator("#composer-q").fill(THIRD)
        page.locator("#composer-q").press("Control+Enter")
        expect(page.locator("#turns .turn")).to_have_count(3)
        expect(page.locator("#stream-state")).to_have_text("Answer stored.")
        expect(page.locator("#t2-answer")).to_have_value("It carries ten bikes [1].")
        page.locator("#t0-question").fill(EDITED)
        expect(page.locator("#save-state")).to_have_text("All changes saved")
        page.reload()
        expect(page.locator("#t0-question")).to_have_value(EDITED)

        stored = get_item(ws, project, chatted.id)
        assert [t.query for t in stored.turns] == [EDITED, ASKED[1], THIRD]
        regenerated, asked_here = stored.turns[1], stored.turns[2]
        assert regenerated.answer == regenerated.original_answer == new_answer
        assert regenerated.generation["model"] == "m"
        assert regenerated.generation["passages"] == "relevant"
        # one shape, whoever answered: the chat's untouched first turn, its regenerated second
        # turn and the turn asked on the page
        keys = {tuple(sorted(c)) for t in stored.turns for c in t.retrieved}
        assert keys == {("chunk_id", "doc_id", "end", "rank", "score", "start", "text", "title")}
        made_here = set(asked_here.generation)
        assert set(stored.turns[0].generation) == made_here
        taken = {"created_at", "taken_by", "taken_at"}  # a draft's, kept when it is taken
        assert set(regenerated.generation) == made_here | taken
        assert regenerated.generation["retrieval"] == chatted.turns[1].generation["retrieval"]
        assert stored.turns[0].generation["retrieval"]["query"] == ASKED[0]

        # the export page writes the conversation with its three turns
        page.goto(f"{server.url}/projects/test/transfer")
        page.locator("#export").get_by_label("Format").select_option("ragaphene")
        page.locator("#export").get_by_label("Draft").check()  # chat saves drafts
        page.get_by_role("button", name="Start the export").click()
        link = page.locator("#export-download")
        expect(link).to_be_visible()
        with page.expect_download() as info:
            link.click()
        exported = tmp_path / "chat.json"
        info.value.save_as(exported)

    conversation = json.loads(exported.read_text(encoding="utf-8"))
    said = [(m["speaker"], m["text"]) for m in conversation["messages"]]
    assert said == [
        ("user", EDITED),
        ("agent", stored.turns[0].answer),
        ("user", ASKED[1]),
        ("agent", new_answer),
        ("user", THIRD),
        ("agent", "It carries ten bikes [1]."),
    ]
    agents = [m for m in conversation["messages"] if m["speaker"] == "agent"]
    assert all(m["contexts"] for m in agents)
    assert any("21:15" in json.dumps(c) for c in agents[1]["contexts"])
