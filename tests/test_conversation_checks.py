"""RAGAPHENE's conversation warnings over our turn model."""

from __future__ import annotations

from datetime import UTC, datetime

from assay.gold.conversations import (
    conversation_checks,
    diversity_needed,
    message_count,
    unique_relevant,
    unrated_contexts,
)
from assay.records import Context, Evidence, Item, Project, Turn

NOW = datetime(2024, 1, 1, tzinfo=UTC)
PROJECT = Project(1, "p", "en", {}, NOW, NOW)


def ev(text: str, label: str = "relevant", doc: str = "d1") -> Evidence:
    return Evidence(doc, 0, len(text), text, label, None, 1, "retrieved", "ok", "ann", NOW)


def turn(
    n: int,
    *,
    evidence: tuple[Evidence, ...] = (),
    retrieved: tuple[Context, ...] = (),
    enrichments: dict[str, list[str]] | None = None,
    query: str = "a question",
    answer: str = "the passage says alpha",
) -> Turn:
    del n  # turns are numbered by their place in the item; ``n`` only names them in the tests
    return Turn(
        query=query,
        enrichments={"answerability": ["ANSWERABLE"]} if enrichments is None else enrichments,
        answer=answer,
        retrieved=list(retrieved),
        evidence=list(evidence),
    )


def item(*turns: Turn) -> Item:
    return Item(
        id="i1",
        kind="conversation",
        author="ann",
        created_at=NOW,
        updated_at=NOW,
        turns=list(turns),
    )


def codes(conversation: Item) -> list[tuple[str, int | None]]:
    return [(f.code, f.turn) for f in conversation_checks(conversation, PROJECT)]


def test_clean_conversation_has_no_findings() -> None:
    turns = [
        turn(i, evidence=(ev(f"passage {i} a"), ev(f"passage {i} b")), retrieved=())
        for i in range(3)
    ]
    assert codes(item(*turns)) == []


def test_unrated_contexts_are_reported_with_their_positions() -> None:
    t = turn(
        0,
        evidence=(ev("alpha beta", "relevant"), ev("gamma", "irrelevant")),
        retrieved=(
            {"document_id": "d1", "text": "alpha  beta"},
            {"document_id": "d1", "text": "gamma"},
            {"document_id": "d2", "text": "delta"},
        ),
    )
    assert unrated_contexts(t) == [3]
    finding = next(f for f in conversation_checks(item(t), PROJECT) if f.turn == 1)
    assert finding.code == "passages_unrated"
    assert finding.params == {"count": 1, "positions": [3]}


def test_turn_without_enrichments_is_warned() -> None:
    t = turn(0, evidence=(ev("x"),), enrichments={"answerability": []})
    assert ("enrichments_missing", 1) in codes(item(t))


def test_answerable_without_relevant_is_ignored_on_the_last_turn() -> None:
    first = turn(0, evidence=(ev("x", "irrelevant"),))
    last = turn(1, evidence=())
    found = codes(item(first, last))
    assert ("answerable_without_relevant", 1) in found
    assert ("answerable_without_relevant", 2) not in found


def test_partial_also_needs_a_relevant_passage() -> None:
    first = turn(0, enrichments={"Answerability": ["partial"]})
    assert ("answerable_without_relevant", 1) in codes(item(first, turn(1, evidence=(ev("y"),))))


def test_unanswerable_with_relevant_is_warned_even_on_the_last_turn() -> None:
    t = turn(0, evidence=(ev("x"),), enrichments={"answerability": ["UNANSWERABLE"]})
    found = conversation_checks(item(t), PROJECT)
    hit = [f for f in found if f.code == "unanswerable_with_relevant"]
    assert len(hit) == 1 and hit[0].params == {"count": 1}


def test_diversity_rule_follows_ragaphene_formula() -> None:
    assert [diversity_needed(m) for m in (0, 2, 3, 4, 6, 8)] == [0, 0, 0, 1, 3, 5]
    # three turns, six messages: three unique relevant passages are needed
    same = ev("the same passage")
    turns = [turn(i, evidence=(same,)) for i in range(3)]
    conversation = item(*turns)
    assert message_count(conversation) == 6
    assert unique_relevant(conversation) == 1
    finding = next(f for f in conversation_checks(conversation, PROJECT) if f.turn is None)
    assert finding.code == "diversity_low"
    assert finding.params == {"have": 1, "needed": 3}


def test_single_turn_errors_are_included_but_not_query_types() -> None:
    t = Turn(query_type="not-a-type", enrichments={"x": ["y"]})
    found = codes(item(t))
    assert ("query_required", 1) in found
    assert ("answer_required", 1) in found
    assert all(code != "unknown_query_type" for code, _ in found)
