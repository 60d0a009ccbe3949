"""LLM suggestions in the store (SQLite and PostgreSQL): asked of a real OpenAI-compatible
server (the in-process fake), recorded with model, prompt hash and parameters, accepted into
evidence of origin llm-suggestion through the normal save, rejected as kept records, counted
in acceptance rates; failures and garbage replies store nothing."""

from __future__ import annotations

import json

import pytest

from assay.errors import Conflict, InvalidInput
from assay.gold.items import StaleItem, create_item, get_item, item_events, save_item
from assay.gold.suggesting import NeedsLLM, Passage, suggest_relevance, suggest_rewrite
from assay.gold.suggestions import (
    accept_suggestions,
    acceptance_rates,
    list_suggestions,
    reject_suggestions,
)
from assay.llm import GeneratorError, Message, prompt_hash
from assay.llm.prompts import RELEVANCE_PROMPT_VERSION, relevance_prompt
from assay.llm.suggestion_replies import ReplyError, parse_judgments, parse_rewrite
from assay.people.actors import acting_account
from assay.records import Evidence, Item, Project, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.fakes.openai_server import Behaviour, FakeOpenAI, Raw, Reply, Slow, Status
from tests.suggestion_sample import (
    DOCS,
    JUDGE,
    QUESTION,
    REWRITE,
    add_documents,
    new_item,
    passages_asked,
    use_fake,
)


@pytest.fixture
def any_project(any_ws: Workspace) -> Project:
    project = create_project(any_ws, "test", "en")
    add_documents(any_ws, project)
    return project


def whole(ws: Workspace, project: Project, names: list[str]) -> list[Passage]:
    ids = add_documents(ws, project)  # the same bytes: the stored documents come back
    return [Passage(ids[n], 0, len(DOCS[n])) for n in names]


# ---------------------------------------------------------------- parsing, without a server


def test_replies_are_read_strictly() -> None:
    good = {"judgments": [{"passage": 2, "label": "Irrelevant", "reason": " off  topic "}]}
    good["judgments"].insert(0, {"passage": 1, "label": "relevant", "reason": "says 22:40"})
    found = parse_judgments("```json\n" + json.dumps(good) + "\n```", 2)
    assert [(j.passage, j.label, j.reason) for j in found] == [
        (0, "relevant", "says 22:40"),
        (1, "irrelevant", "off topic"),
    ]
    assert [j.label for j in parse_judgments(json.dumps(good["judgments"]), 2)] == [
        "relevant",
        "irrelevant",
    ]
    bad = {
        "prose around it": ("Sure! " + json.dumps(good), "not one JSON object"),
        "missing passage": (json.dumps({"judgments": good["judgments"][:1]}), "passage(s) 2"),
        "twice": (json.dumps({"judgments": [good["judgments"][0]] * 2}), "judged twice"),
        "out of range": (
            json.dumps({"judgments": [{"passage": 3, "label": "relevant", "reason": "x"}]}),
            "no passage 3",
        ),
        "unknown label": (
            json.dumps({"judgments": [{"passage": 1, "label": "maybe", "reason": "x"}]}),
            "label",
        ),
        "no reason": (
            json.dumps({"judgments": [{"passage": 1, "label": "relevant", "reason": ""}]}),
            "reason",
        ),
        "no list": (json.dumps({"answer": "relevant"}), '"judgments"'),
        "empty": ("   ", "empty"),
    }
    for name, (reply, words) in bad.items():
        with pytest.raises(ReplyError, match=words.replace("(", r"\(").replace(")", r"\)")):
            parse_judgments(reply, 2)
            pytest.fail(name)
    assert parse_rewrite('{"rewrite": "  When does\\n the ferry leave? "}') == (
        "When does the ferry leave?"
    )
    for reply in ('{"rewrite": ""}', '"When?"', "When does it leave?", '{"text": "x"}'):
        with pytest.raises(ReplyError):
            parse_rewrite(reply)


def test_the_relevance_prompt_numbers_the_passages_and_names_the_language() -> None:
    messages = relevance_prompt("Wann fährt die Fähre?", ["A", "B " * 2000], ["Erste?"], "de")
    assert messages[0].role == "system" and "German" in messages[0].content
    user = messages[1].content
    assert "[1]\nA" in user and "[2]\nB" in user and user.endswith("[…]")
    assert "Earlier questions" in user and "- Erste?" in user
    with pytest.raises(InvalidInput):
        relevance_prompt(" ", ["A"])
    with pytest.raises(InvalidInput):
        relevance_prompt("Q?", [])


# ---------------------------------------------------------------- suggesting and deciding


def test_suggestions_are_recorded_then_accepted_and_rejected(
    any_ws: Workspace, any_project: Project
) -> None:
    item = new_item(any_ws, any_project)
    actor = acting_account(any_ws)
    passages = whole(any_ws, any_project, ["ferry.md", "bikes.md", "cake.md"])
    with FakeOpenAI([JUDGE]) as fake:
        project = use_fake(any_ws, any_project, fake, temperature=0.3)
        report = suggest_relevance(any_ws, project, item.id, actor=actor, passages=passages)
    assert fake.count == 1
    request = fake.requests[0]
    assert request["response_format"] == {"type": "json_object"}  # JSON mode for a JSON reply
    assert passages_asked(request) == [DOCS["ferry.md"], DOCS["bikes.md"], DOCS["cake.md"]]
    asked = [Message(m["role"], m["content"]) for m in request["messages"]]
    created = report.created
    assert [s.label for s in created] == ["relevant", "distracting", "irrelevant"]
    assert all(s.state == "pending" and s.kind == "relevance" for s in created)
    first = created[0]
    assert first.model == "fake-judge-1" and report.model == "fake-judge-1"
    assert first.prompt_hash == prompt_hash(asked)
    assert first.params["temperature"] == 0.3 and first.params["max_tokens"] >= 1024
    assert first.params["prompt"] == RELEVANCE_PROMPT_VERSION and first.params["json_mode"]
    assert "api_key" not in first.params
    assert (first.doc_id, first.start, first.end) == (passages[0].doc_id, 0, len(DOCS["ferry.md"]))
    assert first.text == DOCS["ferry.md"] and first.reason == "Fake reason 1: relevant."
    assert first.created_by and first.decided_by is None
    # a suggestion is not evidence
    assert get_item(any_ws, project, item.id).turns[0].evidence == []

    # accepting two needs the version the person saw, and writes evidence through a save
    with pytest.raises(StaleItem):
        accept_suggestions(any_ws, project, item.id, [first.id], 99, actor=actor)
    done = accept_suggestions(
        any_ws, project, item.id, [created[0].id, created[1].id], item.version, actor=actor
    )
    assert done.item is not None and done.item.version == item.version + 1
    evidence = done.item.turns[0].evidence
    assert [(e.label, e.origin, e.anchor) for e in evidence] == [
        ("relevant", "llm-suggestion", "ok"),
        ("distracting", "llm-suggestion", "ok"),
    ]
    assert evidence[0].text == DOCS["ferry.md"] and evidence[0].group == 1
    assert [e["action"] for e in item_events(any_ws, project, item.id)][-1] == "accept-suggestion"
    assert [s.state for s in done.suggestions] == ["accepted", "accepted"]
    assert all(s.decided_by and s.decided_at for s in done.suggestions)

    # rejecting keeps the record and changes no item
    rejected = reject_suggestions(any_ws, project, item.id, [created[2].id], actor=actor)
    assert rejected.item is None and rejected.suggestions[0].state == "rejected"
    stored = list_suggestions(any_ws, project, item.id)
    assert [s.state for s in stored] == ["accepted", "accepted", "rejected"]
    assert get_item(any_ws, project, item.id).version == item.version + 1
    with pytest.raises(Conflict, match="decided already"):
        reject_suggestions(any_ws, project, item.id, [created[0].id], actor=actor)

    # a second request leaves out the passages marked already and asks nothing
    with FakeOpenAI([JUDGE]) as fake:
        project = use_fake(any_ws, project, fake)
        again = suggest_relevance(any_ws, project, item.id, actor=actor, passages=passages[:2])
    assert fake.count == 0 and again.created == []
    assert {s["reason"] for s in again.skipped} == {"marked in this turn already"}

    rates = acceptance_rates(any_ws, project)
    by_label = {r["label"]: r for r in rates["relevance_by_label"]}
    assert by_label["relevant"]["accepted"] == 1 and by_label["relevant"]["acceptance_rate"] == 1
    assert by_label["irrelevant"]["rejected"] == 1
    assert by_label["irrelevant"]["acceptance_rate"] == 0
    assert rates["relevance_by_model"] == [
        {"model": "fake-judge-1", "pending": 0, "accepted": 2, "rejected": 1, "total": 3}
        | {"acceptance_rate": round(2 / 3, 4)}
    ]
    assert rates["overall"]["total"] == 3


def test_accepting_checks_the_turn_and_the_anchor(any_ws: Workspace, any_project: Project) -> None:
    item = new_item(any_ws, any_project)
    actor = acting_account(any_ws)
    passages = whole(any_ws, any_project, ["ferry.md", "bikes.md", "winter.txt"])
    with FakeOpenAI([JUDGE]) as fake:
        project = use_fake(any_ws, any_project, fake)
        created = suggest_relevance(
            any_ws, project, item.id, actor=actor, passages=passages
        ).created
    # the person marked the bikes passage relevant meanwhile: accepting "distracting" would
    # overrule them, so it is refused (alone) or left pending (accept all)
    data = get_item(any_ws, project, item.id)
    bikes = passages[1]
    marked = Evidence(doc_id=bikes.doc_id, start=0, end=bikes.end, label="relevant")
    data.turns[0].evidence.append(marked)
    saved = save_item(any_ws, project, item.id, data, data.version, author=actor)
    with pytest.raises(InvalidInput, match="already marked relevant"):
        accept_suggestions(any_ws, project, item.id, [created[1].id], saved.version, actor=actor)
    ids = [s.id for s in created]
    done = accept_suggestions(
        any_ws, project, item.id, ids, saved.version, actor=actor, skip_disagreeing=True
    )
    assert [s.state for s in done.suggestions] == ["accepted", "pending", "accepted"]
    assert [sid for sid, _ in done.skipped] == [created[1].id]
    assert done.item is not None and len(done.item.turns[0].evidence) == 3

    # an unanswerable turn takes no relevant passage
    other = new_item(any_ws, project, "When does the ferry to the moon leave?")
    with FakeOpenAI([JUDGE]) as fake:
        project = use_fake(any_ws, project, fake)
        first = suggest_relevance(any_ws, project, other.id, actor=actor, passages=passages[:1])
    data = get_item(any_ws, project, other.id)
    data.turns[0].query_type = "unanswerable"
    saved = save_item(any_ws, project, other.id, data, data.version, author=actor)
    with pytest.raises(InvalidInput, match="unanswerable"):
        accept_suggestions(
            any_ws, project, other.id, [first.created[0].id], saved.version, actor=actor
        )
    assert list_suggestions(any_ws, project, other.id)[0].state == "pending"


FAILURES: dict[str, list[Behaviour]] = {
    "server-error": [Status(500, "the model crashed")],
    "refused": [Status(401, "bad key")],
    "timeout": [Slow(5.0)],
    "not-json": [Raw("{this is not json")],
    "prose": [Reply("Passage 1 is relevant, the others are not.")],
    "wrong-shape": [Reply(json.dumps({"judgments": [{"passage": 1, "label": "relevant"}]}))],
    # the first batch is fine, the second is garbage: nothing of either is stored
    "second-batch": [JUDGE, Reply('{"judgments": []}')],
}


@pytest.mark.parametrize("script", FAILURES.values(), ids=FAILURES.keys())
def test_a_failure_stores_nothing(
    any_ws: Workspace, any_project: Project, script: list[Behaviour]
) -> None:
    item = new_item(any_ws, any_project)
    actor = acting_account(any_ws)
    ids = add_documents(any_ws, any_project)
    text = DOCS["ferry.md"]
    many = [Passage(ids["ferry.md"], i, i + 10) for i in range(0, len(text) - 10, 6)]
    assert len(many) > 6  # two batches
    with FakeOpenAI(script) as fake:
        project = use_fake(any_ws, any_project, fake, timeout_s=0.5)
        with pytest.raises((GeneratorError, ReplyError)) as caught:
            suggest_relevance(any_ws, project, item.id, actor=actor, passages=many)
    message = str(caught.value)
    assert message and ("LLM endpoint" in message or "the model's" in message)
    assert list_suggestions(any_ws, project, item.id) == []
    assert get_item(any_ws, project, item.id) == item


def test_without_an_llm_suggestions_say_so(any_ws: Workspace, any_project: Project) -> None:
    item = new_item(any_ws, any_project)
    with pytest.raises(NeedsLLM, match="need an LLM"):
        suggest_relevance(any_ws, any_project, item.id, actor=acting_account(any_ws))
    with pytest.raises(NeedsLLM, match="assay projects settings"):
        suggest_rewrite(any_ws, any_project, item.id, actor=acting_account(any_ws), turn=1)


def test_passages_default_to_retrieved_then_searched(
    any_ws: Workspace, any_project: Project
) -> None:
    actor = acting_account(any_ws)
    ids = add_documents(any_ws, any_project)
    retrieved = {"doc_id": ids["winter.txt"], "start": 0, "end": len(DOCS["winter.txt"])}
    with_contexts = new_item(any_ws, any_project)
    data = get_item(any_ws, any_project, with_contexts.id)
    data.turns[0].retrieved = [retrieved | {"text": DOCS["winter.txt"], "rank": 1}]
    save_item(any_ws, any_project, with_contexts.id, data, data.version, author=actor)
    searched = new_item(any_ws, any_project)
    with FakeOpenAI([JUDGE]) as fake:
        project = use_fake(any_ws, any_project, fake)
        from_contexts = suggest_relevance(any_ws, project, with_contexts.id, actor=actor)
        from_search = suggest_relevance(any_ws, project, searched.id, actor=actor, k=3)
    assert [s.doc_id for s in from_contexts.created] == [ids["winter.txt"]]
    assert len(from_search.created) == 3  # the retriever's top 3 for the question
    assert {s.doc_id for s in from_search.created} <= set(ids.values())
    assert any(s.label == "relevant" for s in from_search.created)


def test_a_rewrite_is_drafted_from_the_conversation_and_accepted_edited(
    any_ws: Workspace, any_project: Project
) -> None:
    actor = acting_account(any_ws)
    conversation = Item(
        kind="conversation",
        turns=[
            Turn(query=QUESTION, answer="At 22:40 from pier 3."),
            Turn(query="And in winter?"),
        ],
    )
    item = create_item(any_ws, any_project, conversation)
    with FakeOpenAI([REWRITE]) as fake:
        project = use_fake(any_ws, any_project, fake)
        suggestion = suggest_rewrite(any_ws, project, item.id, actor=actor, turn=2)
    prompt = fake.requests[0]["messages"][-1]["content"]
    assert f"User: {QUESTION}" in prompt and "Assistant: At 22:40" in prompt
    assert prompt.endswith("Last question: And in winter?")
    assert suggestion.kind == "rewrite" and suggestion.turn == 2 and suggestion.state == "pending"
    assert suggestion.text == "When does the night ferry leave in winter?"
    assert suggestion.model == "fake-judge-1" and len(suggestion.prompt_hash) == 64
    edited = "When does the night ferry leave from December on?"
    done = accept_suggestions(
        any_ws, project, item.id, [suggestion.id], item.version, actor=actor, rewrite=edited
    )
    assert done.item is not None and done.item.turns[1].rewrite == edited
    assert done.suggestions[0].final_text == edited and done.suggestions[0].state == "accepted"
    rates = acceptance_rates(any_ws, project)
    assert rates["rewrite_by_model"][0]["accepted"] == 1
    assert all(r["total"] == 0 for r in rates["relevance_by_label"])
