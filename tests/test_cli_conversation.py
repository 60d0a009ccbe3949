"""``assay chat`` and ``assay generate``: offline by default, an OpenAI-compatible endpoint
when configured; suggestions never become gold and the API key is never stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.formats import get_format
from assay.gold.conversations import draft_answers
from assay.gold.item_lists import list_items
from assay.gold.items import create_item, editable_copy, get_item, save_item
from assay.gold.project_config import retriever_settings, update_settings
from assay.llm import Generation, GeneratorSettings
from assay.llm.offline import OfflineGenerator
from assay.records import Evidence, Item, Turn
from assay.store.projects import get_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.transfer import export_bundle
from tests.fakes.openai_server import FakeOpenAI, Reply, Status

SECRET = "sk-test-never-store-me-4711"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "leave.txt").write_text(
        "Every employee has 30 days of annual leave. Leave must be requested in advance.\n"
    )
    (corpus / "travel.md").write_text(
        "# Travel\n\nTrain tickets are reimbursed in second class.\n\n"
        "Hotel costs are capped at 120 euros per night.\n"
    )
    home = tmp_path / "ws"
    assert invoke(home, "init").exit_code == 0
    result = invoke(home, "ingest", str(corpus), "--project", "handbook")
    assert result.exit_code == 0, result.output
    return home


def invoke(home: Path, *args: str, input: str | None = None, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(make_app(), ["--home", str(home), *args], input=input, env=env)


def workspace(home: Path) -> Workspace:
    return Workspace.open(Settings(home=home))


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def use_fake(home: Path, fake: FakeOpenAI) -> None:
    ws = workspace(home)
    try:
        project = get_project(ws, "handbook")
        update_settings(
            ws,
            project,
            {"generator": {"kind": "openai", "base_url": fake.url, "model": "m", "retries": 0}},
        )
    finally:
        ws.close()


def all_bytes(folder: Path) -> Iterator[tuple[Path, bytes]]:
    for path in folder.rglob("*"):
        if path.is_file():
            yield path, path.read_bytes()


def test_chat_offline_answers_with_sources_and_saves(home: Path) -> None:
    result = invoke(
        home,
        "chat",
        "--project",
        "handbook",
        "--save",
        input="How many days of annual leave do I have?\n\nWhat about hotel costs?\n",
    )
    assert result.exit_code == 0, result.output
    assert "extractive, no LLM" in result.output
    assert "30 days of annual leave" in result.output
    assert "leave.txt" in result.output and "travel.md" in result.output
    assert "Saved as draft conversation" in result.output
    ws = workspace(home)
    try:
        project = get_project(ws, "handbook")
        (summary,) = list_items(ws, project, limit=5)[1]
        item = get_item(ws, project, summary.id)
        assert item.kind == "conversation" and item.status == "draft"
        assert [t.query for t in item.turns] == [
            "How many days of annual leave do I have?",
            "What about hotel costs?",
        ]
        first = item.turns[0]
        assert first.original_answer == first.answer and "30 days" in first.answer
        assert first.generation["kind"] == "offline"
        assert len(first.generation["prompt_hash"]) == 64
        assert first.retrieved and {"doc_id", "text", "score", "title"} <= set(first.retrieved[0])
        assert "120 euros" in item.turns[1].answer
    finally:
        ws.close()


def test_chat_goes_on_after_a_generator_error(home: Path, fake: FakeOpenAI) -> None:
    use_fake(home, fake)
    fake.reset([Reply("Thirty days [1]."), Status(500, "the model crashed"), Reply("Second.")])
    result = invoke(
        home,
        "chat",
        "--project",
        "handbook",
        "--save",
        input="How much leave?\nAnd hotels?\nAnd hotels, again?\n",
        env={"ASSAY_LLM_API_KEY": SECRET},
    )
    assert result.exit_code == 0, result.output
    assert "Thirty days [1]." in result.output
    assert "The generator failed" in result.output and "500" in result.output
    assert "Second." in result.output
    assert fake.count == 3
    ws = workspace(home)
    try:
        project = get_project(ws, "handbook")
        item = get_item(ws, project, list_items(ws, project, limit=5)[1][0].id)
        assert [t.answer for t in item.turns] == ["Thirty days [1].", "", "Second."]
        assert item.turns[0].generation["model"] == "fake-model"
        assert "error" in item.turns[1].generation
        out = home / "export.json"
        get_format("ragaphene").write(export_bundle(ws, project), out)
        native = home / "export.zip"
        get_format("native").write(export_bundle(ws, project), native)
    finally:
        ws.close()
    for path, data in all_bytes(home):
        assert SECRET.encode() not in data, path


def test_chat_skips_a_question_without_visible_text(home: Path) -> None:
    result = invoke(
        home, "chat", "--project", "handbook", "--save", input="\x00\x01\x02\n\x1b\x07\n"
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("Skipped") == 2 and "control characters" in result.output
    assert "line 1" in result.output and "Nothing to save" in result.output
    mixed = invoke(home, "chat", "-p", "handbook", "--save", input="\x07\nHow much\x00 leave?\n")
    assert mixed.exit_code == 0, mixed.output
    ws = workspace(home)
    try:
        project = get_project(ws, "handbook")
        total, rows = list_items(ws, project, limit=5)
        assert total == 1  # no empty conversation from the refused lines
        assert [t.query for t in get_item(ws, project, rows[0].id).turns] == ["How much leave?"]
    finally:
        ws.close()


def seed_items(home: Path) -> dict[str, str]:
    ws = workspace(home)
    try:
        project = get_project(ws, "handbook")
        doc = next(d for d in export_bundle(ws, project).documents if d.name == "leave.txt")
        text = doc.text or ""
        start = text.index("Every")
        end = text.index("leave.") + len("leave.")
        ids = {}
        ids["with_evidence"] = create_item(
            ws,
            project,
            Item(
                turns=[
                    Turn(
                        query="How much annual leave is there?",
                        evidence=[Evidence(doc_id=doc.ref, start=start, end=end)],
                    )
                ]
            ),
        ).id
        ids["retrieve"] = create_item(
            ws, project, Item(turns=[Turn(query="Are hotel costs capped?")])
        ).id
        ids["answered"] = create_item(
            ws, project, Item(turns=[Turn(query="Trains?", answer="Second class.")])
        ).id
        return ids
    finally:
        ws.close()


def turn_of(home: Path, item_id: str) -> Any:
    ws = workspace(home)
    try:
        return get_item(ws, get_project(ws, "handbook"), item_id).turns[0]
    finally:
        ws.close()


def test_generate_stores_suggestions_never_gold(home: Path) -> None:
    ids = seed_items(home)
    result = invoke(home, "generate", "--project", "handbook", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["drafted"] == 2 and summary["items"] == 2 and summary["failed"] == 0
    assert summary["generator"] == "extractive, no LLM"
    with_evidence = turn_of(home, ids["with_evidence"])
    assert with_evidence.answer == ""
    assert "30 days" in with_evidence.original_answer
    assert set(with_evidence.generation) >= {"model", "prompt_hash", "params", "kind"}
    assert with_evidence.generation["passages"][0]["from"] == "evidence"
    retrieved = turn_of(home, ids["retrieve"])
    assert retrieved.answer == "" and "120 euros" in retrieved.original_answer
    assert retrieved.generation["passages"][0]["from"] == "retrieved"
    assert turn_of(home, ids["answered"]).original_answer == ""
    again = json.loads(invoke(home, "generate", "-p", "handbook", "--json").output)
    assert again["drafted"] == 0
    forced = json.loads(
        invoke(home, "generate", "-p", "handbook", "--json", "--overwrite", "--limit", "1").output
    )
    assert forced["drafted"] == 1 and forced["items"] == 1


def test_generate_with_an_endpoint_reports_failures(home: Path, fake: FakeOpenAI) -> None:
    ids = seed_items(home)
    use_fake(home, fake)
    fake.reset([Reply("Capped at 120 euros [1]."), Status(401, "bad key")])
    result = invoke(home, "generate", "-p", "handbook", "--json", env={"ASSAY_LLM_API_KEY": SECRET})
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["drafted"] == 1 and summary["failed"] == 1
    assert "401" in summary["errors"][0]
    drafted = [turn_of(home, i) for i in (ids["with_evidence"], ids["retrieve"])]
    assert [t.answer for t in drafted] == ["", ""]
    assert sorted(t.original_answer for t in drafted) == ["", "Capped at 120 euros [1]."]
    fake.reset([Status(500)])
    failed = invoke(home, "generate", "-p", "handbook", env={"ASSAY_LLM_API_KEY": SECRET})
    assert failed.exit_code == 1 and "failed" in failed.output
    for path, data in all_bytes(home):
        assert SECRET.encode() not in data, path


def test_generate_never_overwrites_an_answer_saved_meanwhile(home: Path) -> None:
    ids = seed_items(home)
    ws = workspace(home)
    try:
        project = get_project(ws, "handbook")

        class PersonTypesMeanwhile(OfflineGenerator):
            """Extractive answers; while drafting one item, a person answers it."""

            def answer(self, question: str, passages: Any, **kw: Any) -> Generation:
                item = get_item(ws, project, ids["retrieve"])
                if question == item.turns[0].query and not item.turns[0].answer:
                    data = editable_copy(item)
                    data.turns[0].answer = "A person wrote this."
                    save_item(ws, project, item.id, data, item.version)
                return super().answer(question, passages, **kw)

        report = draft_answers(
            ws, project, PersonTypesMeanwhile(), GeneratorSettings(), retriever_settings(project)
        )
        assert report.drafted == 1 and report.failed == 1
        assert "changed while drafting" in report.errors[0]
        turn = get_item(ws, project, ids["retrieve"]).turns[0]
        assert turn.answer == "A person wrote this." and turn.original_answer == ""
    finally:
        ws.close()


def test_generate_refuses_an_unknown_status(home: Path) -> None:
    result = invoke(home, "generate", "-p", "handbook", "--status", "done")
    assert result.exit_code != 0 and "choose one of" in result.output
