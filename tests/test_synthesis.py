"""QA drafts: sampling, the offline stand-in, LLM replies (scripted server), the CLI, and the
acceptance table on the project home."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from assay.cli import make_app
from assay.corpus.chunkings import create_chunking
from assay.corpus.documents import get_document
from assay.corpus.ingest import ingest_bytes
from assay.errors import InvalidInput
from assay.gold.item_lists import iter_items
from assay.gold.items import get_item, set_status
from assay.gold.project_config import update_settings
from assay.gold.synthesis import (
    acceptance_rates,
    key_phrase,
    parse_draft,
    sample_chunks,
    synthesize,
)
from assay.llm.openai_compat import OpenAICompatGenerator
from assay.records import Item, Project
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.fakes.openai_server import FakeOpenAI, Raw, Reply

TEXTS = {
    "travel.txt": "Train tickets are reimbursed in second class. Hotel costs are capped at "
    "120 euros per night. Taxi rides need a receipt. Meals abroad follow the federal table.",
    "leave.txt": "Every employee has 30 days of annual leave. Unused leave expires in March. "
    "Sick days do not count as leave. Parental leave is handled by HR.",
    "it.txt": "Laptops are replaced every four years. Passwords must have twelve characters. "
    "Lost badges are reported to the front desk.",
}


@pytest.fixture
def corpus(ws: Workspace, project: Project) -> Project:
    for name, text in TEXTS.items():
        ingest_bytes(ws, project, name, text.encode())
    create_chunking(ws, project, "sent", "sentences", {"sentences": 1})
    return project


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def _drafts(ws: Workspace, project: Project) -> list[Item]:
    return [i for i in iter_items(ws, project) if i.origin == "llm-suggestion"]


def _use_fake(ws: Workspace, project: Project, fake: FakeOpenAI) -> Project:
    return update_settings(
        ws,
        project,
        {"generator": {"kind": "openai", "base_url": fake.url, "model": "asked-model"}},
    )


def test_offline_drafts_are_deterministic_anchored_drafts(ws: Workspace, corpus: Project) -> None:
    first = synthesize(ws, corpus, n=8, types=["fact_single", "summary"], seed=7, chunking="sent")
    assert len(first.created) == 8 and first.skipped == []
    assert first.per_type == {
        "fact_single": {"created": 4, "skipped": 0},
        "summary": {"created": 4, "skipped": 0},
    }
    drafts = [get_item(ws, corpus, item_id) for item_id in first.created]
    for item in drafts:
        assert item.status == "draft" and item.origin == "llm-suggestion"
        turn = item.turns[0]
        assert turn.query and turn.answer and turn.answer == turn.original_answer
        assert turn.generation["model"] == "offline-extractive"
        assert turn.generation["kind"] == "offline"
        assert turn.generation["params"] == {"kind": "offline", "note": "extractive, no LLM"}
        assert len(turn.generation["prompt_hash"]) == 64
        [evidence] = turn.evidence
        assert evidence.label == "relevant" and evidence.origin == "llm-suggestion"
        text = get_document(ws, corpus, evidence.doc_id or "").text
        assert evidence.start is not None and evidence.end is not None
        assert text[evidence.start : evidence.end] == evidence.text
        assert turn.answer.split()[0] in evidence.text  # extractive: it quotes the chunk
    # spread over documents: 8 chunks from 3 documents touch all of them
    assert len({d.turns[0].evidence[0].doc_id for d in drafts}) == 3

    again = synthesize(ws, corpus, n=8, types=["fact_single", "summary"], seed=7, chunking="sent")
    redrafted = [get_item(ws, corpus, item_id) for item_id in again.created]
    assert [
        (d.turns[0].query, d.turns[0].answer, d.turns[0].evidence[0].start) for d in drafts
    ] == [(d.turns[0].query, d.turns[0].answer, d.turns[0].evidence[0].start) for d in redrafted]
    other = sample_chunks(ws, corpus, 8, seed=8, chunking="sent")
    assert [c.chunk_id for c in other] != [d.extra["synthesis"]["chunk_id"] for d in drafts]


def test_sampling_takes_what_there_is_and_checks_types(ws: Workspace, corpus: Project) -> None:
    chunks = sample_chunks(ws, corpus, 100, seed=0, chunking="sent")
    assert len(chunks) == 11 and len({c.chunk_id for c in chunks}) == 11
    # round one visits every document before any document gives a second chunk
    assert len({c.doc_id for c in chunks[:3]}) == 3
    with pytest.raises(InvalidInput, match="unknown query type"):
        synthesize(ws, corpus, n=2, types=["nonsense"])


def test_offline_unanswerable_points_at_a_distractor(ws: Workspace, corpus: Project) -> None:
    report = synthesize(ws, corpus, n=2, types=["unanswerable"], seed=1, chunking="sent")
    for item_id in report.created:
        turn = get_item(ws, corpus, item_id).turns[0]
        assert turn.query_type == "unanswerable"
        assert [e.label for e in turn.evidence] == ["distracting"]
        assert "do not say" in turn.answer


def test_key_phrase_picks_content_words() -> None:
    assert key_phrase("Hotel costs are capped at 120 euros per night.") == "Hotel costs"
    assert key_phrase("Every employee has 30 days of annual leave.") == "Every employee"


def test_parse_draft_is_lenient_but_never_guesses() -> None:
    assert parse_draft('{"question": "Q?", "answer": "A."}') == ("Q?", "A.")
    wrapped = 'Sure! Here it is:\n```json\n{"question": " Q? ", "answer": "A."}\n```'
    assert parse_draft(wrapped) == ("Q?", "A.")
    assert parse_draft('{"draft": {"question": "Q?", "answer": "A."}}') == ("Q?", "A.")
    with pytest.raises(InvalidInput, match="no JSON object"):
        parse_draft("I cannot help with that.")
    with pytest.raises(InvalidInput, match="non-empty question and answer"):
        parse_draft('{"question": "Q?", "answer": ""}')


def test_llm_replies_become_drafts_with_the_model_recorded(
    ws: Workspace, corpus: Project, fake_server: FakeOpenAI
) -> None:
    project = _use_fake(ws, corpus, fake_server)
    fake_server.reset(
        [
            Reply(
                '{"question": "How are trains reimbursed?", "answer": "Second class."}',
                model="qa-model-1",
            ),
            Raw("this is not a chat completion"),
            Reply("no JSON here, sorry", model="qa-model-1"),
            Reply('{"question": "What about it?"}', model="qa-model-1"),
        ]
    )
    report = synthesize(ws, project, n=4, types=["fact_single"], seed=3, chunking="sent")
    assert fake_server.count == 4
    assert fake_server.requests[0]["response_format"] == {"type": "json_object"}
    prompt = fake_server.requests[0]["messages"][-1]["content"]
    assert "fact_single" in prompt and "one piece of information" in prompt
    assert len(report.created) == 1 and len(report.skipped) == 3
    reasons = [s.reason for s in report.skipped]
    assert all(reason for reason in reasons)
    assert any("not JSON" in reason for reason in reasons)
    assert report.per_type["fact_single"] == {"created": 1, "skipped": 3}
    turn = get_item(ws, project, report.created[0]).turns[0]
    assert turn.query == "How are trains reimbursed?"
    assert turn.answer == turn.original_answer == "Second class."
    assert turn.generation["model"] == "qa-model-1"
    assert turn.generation["kind"] == "openai"
    assert turn.generation["params"]["json_mode"] is True
    [evidence] = turn.evidence
    assert evidence.label == "relevant" and evidence.origin == "llm-suggestion"


def test_llm_unanswerable_keeps_only_a_distracting_passage(
    ws: Workspace, corpus: Project, fake_server: FakeOpenAI
) -> None:
    fake_server.reset(
        [
            Reply(
                'Here you go: {"question": "Who founded the company?", '
                '"answer": "The documents do not say who founded it."}',
                model="qa-model-2",
            )
        ]
    )
    generator = OpenAICompatGenerator(base_url=fake_server.url, model="m", json_mode=False)
    report = synthesize(
        ws, corpus, n=2, types=["unanswerable"], seed=0, chunking="sent", generator=generator
    )
    assert len(report.created) == 2
    for item_id in report.created:
        item = get_item(ws, corpus, item_id)
        turn = item.turns[0]
        assert turn.query == "Who founded the company?"
        assert [(e.label, e.origin) for e in turn.evidence] == [("distracting", "llm-suggestion")]
        assert turn.generation["model"] == "qa-model-2"
        assert item.status == "draft"
    assert "does not answer" in fake_server.requests[0]["messages"][-1]["content"]


def test_cli_synthesize_json(ws: Workspace, corpus: Project) -> None:
    result = CliRunner().invoke(
        make_app(),
        [
            "--home",
            str(ws.settings.home),
            "synthesize",
            "--project",
            "test",
            "--n",
            "5",
            "--types",
            "fact_single,unanswerable",
            "--seed",
            "2",
            "--chunking",
            "sent",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert len(report["created"]) == 5 and report["skipped"] == []
    assert report["per_type"] == {
        "fact_single": {"created": 3, "skipped": 0},
        "unanswerable": {"created": 2, "skipped": 0},
    }
    assert report["chunking"] == "sent" and report["sampled"] == 5
    bad = CliRunner().invoke(
        make_app(), ["--home", str(ws.settings.home), "synthesize", "--types", "nope"]
    )
    assert bad.exit_code == 1 and "unknown query type" in bad.output


def test_acceptance_rates_and_the_project_home(ws: Workspace, corpus: Project) -> None:
    client = TestClient(create_app(ws))
    assert "No LLM drafts yet" in client.get("/projects/test").text
    report = synthesize(ws, corpus, n=6, types=["fact_single", "summary"], seed=0, chunking="sent")
    by_type: dict[str, list[str]] = {}
    for item_id in report.created:
        by_type.setdefault(get_item(ws, corpus, item_id).turns[0].query_type, []).append(item_id)
    facts = by_type["fact_single"]
    set_status(ws, corpus, facts[0], "accepted", 1)
    set_status(ws, corpus, facts[1], "accepted", 1)
    set_status(ws, corpus, facts[2], "rejected", 1)
    set_status(ws, corpus, by_type["summary"][0], "submitted", 1)

    rates = acceptance_rates(ws, corpus)
    assert rates == [
        {
            "model": "offline-extractive",
            "query_type": "fact_single",
            "total": 3,
            "accepted": 2,
            "rejected": 1,
            "pending": 0,
            "acceptance_rate": pytest.approx(2 / 3),
        },
        {
            "model": "offline-extractive",
            "query_type": "summary",
            "total": 3,
            "accepted": 0,
            "rejected": 0,
            "pending": 3,
            "acceptance_rate": 0.0,
        },
    ]
    overview = client.get("/api/projects/test").json()
    assert overview["llm_drafts"][0]["accepted"] == 2
    page = client.get("/projects/test")
    assert page.status_code == 200
    assert "LLM drafts: acceptance" in page.text
    assert "offline-extractive" in page.text
    assert "<td>67%</td>" in page.text and "<td>0%</td>" in page.text  # English: no space
    client.get("/language/de")
    german = client.get("/projects/test")
    assert german.status_code == 200 and "LLM-Entwürfe: Annahme" in german.text
