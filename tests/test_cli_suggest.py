"""``assay suggest`` against the in-process fake OpenAI server: suggestions for every open
item or the ones named, rewrites for conversations, a failing endpoint reported per turn with
nothing stored for it, and the offline generator refused with the way to set an LLM."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from assay.cli import make_app
from assay.gold.items import create_item, set_status
from assay.gold.suggestions import list_suggestions
from assay.records import Item, Project, Turn
from assay.store.workspace import Workspace
from tests.fakes.openai_server import FakeOpenAI, Status
from tests.suggestion_sample import JUDGE, QUESTION, REWRITE, add_documents, new_item, use_fake


def suggest(ws: Workspace, *args: str) -> tuple[int, str]:
    home = ["--home", str(ws.settings.home)]
    result = CliRunner().invoke(make_app(), [*home, "suggest", "--project", "test", *args])
    return result.exit_code, result.output


def test_suggest_for_open_items_then_one_item(ws: Workspace, project: Project) -> None:
    add_documents(ws, project)
    first, second, done = (new_item(ws, project) for _ in range(3))
    set_status(ws, project, done.id, "accepted", done.version)
    code, output = suggest(ws)
    assert code == 1 and "need an LLM" in output and "assay projects settings" in output

    with FakeOpenAI([JUDGE]) as fake:
        use_fake(ws, project, fake)
        code, output = suggest(ws, "-k", "3", "--json", "--no-cache")
        assert code == 0, output
        report = json.loads(output)
        assert report["items"] == 2 and report["created"] == 6 and report["failed"] == []
        assert report["per_item"] == {first.id: 3, second.id: 3}  # not the accepted item
        assert fake.count == 2  # the same prompt twice, but --no-cache asks each time
        # asked again, every passage waits already: nothing new, no request
        code, output = suggest(ws, "--item", first.id, "-k", "3")
        assert code == 0 and "0 suggestion(s) stored for 1 item(s), 3 passage(s) left out" in output
        assert fake.count == 2
    stored = list_suggestions(ws, project, first.id)
    assert {s.model for s in stored} == {"fake-judge-1"} and len(stored) == 3
    assert all(len(s.prompt_hash) == 64 and s.params["prompt"] for s in stored)
    assert list_suggestions(ws, project, done.id) == []


def test_a_failing_endpoint_is_reported_and_stores_nothing(ws: Workspace, project: Project) -> None:
    add_documents(ws, project)
    item = new_item(ws, project)
    with FakeOpenAI([Status(500, "the model crashed")]) as fake:
        use_fake(ws, project, fake)
        code, output = suggest(ws, "--item", item.id)
    assert code == 1
    assert f"failed item {item.id} turn 1" in output and "500 server error" in output
    assert list_suggestions(ws, project, item.id) == []


def test_rewrites_for_later_conversation_turns(ws: Workspace, project: Project) -> None:
    add_documents(ws, project)
    turns = [Turn(query=QUESTION), Turn(query="And in winter?"), Turn(query="x", rewrite="y")]
    item = create_item(ws, project, Item(kind="conversation", turns=turns))
    with FakeOpenAI([REWRITE]) as fake:
        use_fake(ws, project, fake)
        code, output = suggest(ws, "--kind", "rewrite", "--json")
        assert code == 0, output
        again, _ = suggest(ws, "--kind", "rewrite", "--json")
    assert again == 0 and fake.count == 1  # the waiting rewrite is not asked for twice
    [rewrite] = list_suggestions(ws, project, item.id)
    assert rewrite.kind == "rewrite" and rewrite.turn == 2
    assert suggest(ws, "--kind", "nonsense")[0] == 1
