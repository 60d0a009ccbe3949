"""``answered_turn`` (``assay chat``) stores a turn in the shape the web workbench's stream
stores it: the same contexts, the same generation record with how the passages were
retrieved, and the same failure record."""

from __future__ import annotations

from typing import Any

import pytest

from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item, get_item
from assay.gold.project_config import generator_settings, update_settings
from assay.gold.turn_answers import answer_events, answered_turn, retrieve
from assay.llm import make_generator
from assay.people.actors import acting_account
from assay.records import Item, Project, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.fakes.openai_server import FakeOpenAI, Reply, Status

QUESTION = "When does the night ferry leave?"


@pytest.fixture
def ferry(any_ws: Workspace) -> Project:
    project = create_project(any_ws, "ferry", "en")
    ingest_bytes(any_ws, project, "ferry.md", b"The night ferry leaves at 22:40 from pier 3.")
    ingest_bytes(any_ws, project, "winter.txt", b"From December the night ferry leaves at 21:15.")
    return project


def asked_on_the_web(ws: Workspace, project: Project, query: str) -> Item:
    """A first turn the way the workbench makes it: retrieve, store, stream the answer."""
    retrieved, how = retrieve(ws, project, [query], "", {})
    turn = Turn(query=query, retrieved=retrieved, generation={"retrieval": how})
    item = create_item(ws, project, Item(kind="conversation", turns=[turn]))
    events = list(
        answer_events(
            ws, project, item, 0, source="retrieved", actor=acting_account(ws), first=True
        )
    )
    assert events[-1]["type"] in ("done", "error")
    return get_item(ws, project, item.id)


def chatted(ws: Workspace, project: Project, query: str) -> Turn:
    settings = generator_settings(project)
    turn, _generation = answered_turn(ws, project, make_generator(settings), settings, [], query)
    return turn


def shape(generation: dict[str, Any]) -> set[str]:
    return set(generation) | set(generation.get("retrieval", {}))


def test_a_chat_turn_is_stored_like_a_web_turn(any_ws: Workspace, ferry: Project) -> None:
    web = asked_on_the_web(any_ws, ferry, QUESTION).turns[0]
    chat = chatted(any_ws, ferry, QUESTION)
    assert chat.answer == chat.original_answer == web.answer and "22:40" in chat.answer
    assert chat.retrieved == list(web.retrieved)
    assert chat.generation == dict(web.generation)  # offline: the very same record
    assert chat.generation["retrieval"]["query"] == QUESTION
    assert chat.generation["passages"] == "retrieved" and chat.generation["passage_count"] == 2


def test_a_failed_chat_turn_is_stored_like_a_failed_web_turn(
    any_ws: Workspace, ferry: Project
) -> None:
    with FakeOpenAI([Status(500, "the model crashed")]) as fake:
        settings = {"kind": "openai", "base_url": fake.url, "model": "m", "retries": 0}
        project = update_settings(any_ws, ferry, {"generator": settings})
        web = asked_on_the_web(any_ws, project, QUESTION).turns[0]
        chat = chatted(any_ws, project, QUESTION)
    assert chat.answer == web.answer == "" and chat.original_answer == ""
    assert "the model crashed" in chat.generation["error"]
    assert shape(chat.generation) == shape(web.generation)


def test_a_chat_turn_keeps_the_model_that_answered(any_ws: Workspace, ferry: Project) -> None:
    with FakeOpenAI([Reply("At 22:40 [1].")]) as fake:
        settings = {"kind": "openai", "base_url": fake.url, "model": "m", "retries": 0}
        project = update_settings(any_ws, ferry, {"generator": settings})
        chat = chatted(any_ws, project, QUESTION)
    assert chat.answer == "At 22:40 [1]."
    assert chat.generation["model"] == "fake-model"  # as the server named itself
    assert chat.generation["params"] == {"temperature": 0.0, "max_tokens": 512}


def test_a_chat_searches_its_last_question_when_the_project_wants_a_rewrite(
    any_ws: Workspace, ferry: Project
) -> None:
    project = update_settings(any_ws, ferry, {"retriever": {"query_from": "rewrite"}})
    chat = chatted(any_ws, project, "And from December on?")
    assert chat.generation["retrieval"]["query"] == "And from December on?"
    assert chat.generation["retrieval"]["settings"]["query_from"] == "last_turn"
    assert "21:15" in chat.answer
