"""Two suggestion requests for the same turn at once (two tabs, two annotators): both ask
the LLM (the fake holds each reply until both requests are in, so both have passed the
"already pending?" check), and still one set of suggestions waits: one per passage, one
rewrite per turn. Real threads, the in-process fake OpenAI server; SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
from fastapi.testclient import TestClient

from assay.gold.items import create_item
from assay.gold.suggesting import Passage, suggest_relevance, suggest_rewrite
from assay.gold.suggestions import accept_suggestions, acceptance_rates, list_suggestions
from assay.people.actors import account_for, acting_account
from assay.records import Item, Project, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.fakes.openai_server import FakeOpenAI, Together
from tests.suggestion_sample import DOCS, JUDGE, QUESTION, REWRITE, add_documents, use_fake

T = TypeVar("T")
NAMES = ["ferry.md", "bikes.md", "cake.md"]


@pytest.fixture
def any_project(any_ws: Workspace) -> Project:
    return create_project(any_ws, "test", "en")


def at_once(work: Callable[[], T]) -> list[T]:
    """``work`` run twice, in two threads at the same time."""
    with ThreadPoolExecutor(2) as pool:
        return [f.result() for f in [pool.submit(work), pool.submit(work)]]


def conversation(ws: Workspace, project: Project) -> Item:
    turns = [Turn(query=QUESTION, answer="At 22:40 from pier 3."), Turn(query="And in winter?")]
    return create_item(ws, project, Item(kind="conversation", turns=turns))


def test_two_relevance_requests_at_once_store_one_set(
    any_ws: Workspace, any_project: Project
) -> None:
    ids = add_documents(any_ws, any_project)
    item = create_item(any_ws, any_project, Item(turns=[Turn(query=QUESTION)]))
    actor = acting_account(any_ws)
    passages = [Passage(ids[n], 0, len(DOCS[n])) for n in NAMES]
    with FakeOpenAI([Together(JUDGE)]) as fake:
        project = use_fake(any_ws, any_project, fake)
        reports = at_once(
            lambda: suggest_relevance(any_ws, project, item.id, actor=actor, passages=passages)
        )
    assert fake.count == 2  # both asked: both had found nothing pending
    made = sorted(reports, key=lambda r: len(r.created))
    assert [len(r.created) for r in made] == [0, 3]
    late = made[0]
    assert [(s["doc_id"], s["reason"]) for s in late.skipped] == [
        (ids[n], "a suggestion for it is pending") for n in NAMES
    ]
    waiting = list_suggestions(any_ws, project, item.id, state="pending")
    assert sorted((s.doc_id, s.start, s.end) for s in waiting) == sorted(
        (p.doc_id, p.start, p.end) for p in passages
    )
    assert [s.id for s in waiting] == [s.id for s in made[1].created]


def test_two_rewrite_requests_at_once_leave_one_waiting(
    any_ws: Workspace, any_project: Project
) -> None:
    item = conversation(any_ws, any_project)
    actor = acting_account(any_ws)
    with FakeOpenAI([Together(REWRITE)]) as fake:
        project = use_fake(any_ws, any_project, fake)
        made = at_once(lambda: suggest_rewrite(any_ws, project, item.id, actor=actor, turn=2))
    assert fake.count == 2
    stored = list_suggestions(any_ws, project, item.id, kind="rewrite")
    assert sorted(s.id for s in stored) == sorted(s.id for s in made)
    assert sorted(s.state for s in stored) == ["pending", "replaced"]
    # the replaced one is a record, not a decision: it cannot be accepted nor is it counted
    replaced = next(s for s in stored if s.state == "replaced")
    with pytest.raises(Exception, match="decided already"):
        accept_suggestions(any_ws, project, item.id, [replaced.id], item.version, actor=actor)
    assert acceptance_rates(any_ws, project)["rewrite_by_model"][0]["total"] == 1


def test_asking_again_for_a_rewrite_replaces_the_waiting_one(
    any_ws: Workspace, any_project: Project
) -> None:
    item = conversation(any_ws, any_project)
    actor = acting_account(any_ws)
    with FakeOpenAI([REWRITE]) as fake:
        project = use_fake(any_ws, any_project, fake)
        first = suggest_rewrite(any_ws, project, item.id, actor=actor, turn=2)
        second = suggest_rewrite(any_ws, project, item.id, actor=actor, turn=2)
    stored = {s.id: s.state for s in list_suggestions(any_ws, project, item.id, turn=2)}
    assert stored == {first.id: "replaced", second.id: "pending"}
    assert [s.id for s in list_suggestions(any_ws, project, item.id, state="replaced")] == [
        first.id
    ]


def test_two_suggest_requests_at_once_through_the_api(
    any_ws: Workspace, any_project: Project
) -> None:
    ids = add_documents(any_ws, any_project)
    item = create_item(any_ws, any_project, Item(turns=[Turn(query=QUESTION)]))
    client = TestClient(create_app(any_ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    client.cookies.set("assay_author", "Ada")
    account_for(any_ws, "Ada")  # made by the first request otherwise: not what is tested here
    body = {
        "kind": "relevance",
        "turn": 1,
        "passages": [{"doc_id": ids[n], "start": 0, "end": len(DOCS[n])} for n in NAMES],
    }
    path = f"/api/projects/test/items/{item.id}/suggestions"
    with FakeOpenAI([Together(JUDGE)]) as fake:
        use_fake(any_ws, any_project, fake)
        answers = at_once(lambda: client.post(path, json=body))
    assert [a.status_code for a in answers] == [201, 201], [a.text for a in answers]
    made: list[dict[str, Any]] = sorted(
        (a.json() for a in answers), key=lambda j: len(j["created"])
    )
    assert [len(j["created"]) for j in made] == [0, 3]
    assert {s["reason"] for s in made[0]["skipped"]} == {"a suggestion for it is pending"}
    listed = client.get(path, params={"state": "pending"}).json()["suggestions"]
    assert sorted(s["id"] for s in listed) == sorted(s["id"] for s in made[1]["created"])
