"""Adjudication (assay.review.adjudication) on SQLite and PostgreSQL: the versions side by
side with their differences, a field-by-field and passage-by-passage merge into the gold,
the waiting list, and a stale merge refused with nothing lost."""

from __future__ import annotations

import pytest

from assay.errors import InvalidInput
from assay.gold.items import StaleItem, create_item, get_item, item_events, save_item
from assay.records import Item, Turn
from assay.review.adjudication import (
    Choices,
    PassageChoice,
    TurnChoice,
    adjudicate,
    differences,
    pick_all,
    versions,
    waiting_for_adjudication,
)
from assay.review.agreement import agreement_report
from assay.review.copies import copy_item
from assay.store.workspace import Workspace
from tests.test_review_agreement import SENTENCES, hand_in, setup, turn


def test_merge_field_by_field_and_passage_by_passage(any_ws: Workspace) -> None:
    project, doc, who = setup(any_ws, ["ada", "bob", "cy"])
    original = create_item(any_ws, project, Item(turns=[Turn(query="What is refunded?")]))
    ada = copy_item(any_ws, project, original.id, who["ada"])
    bob = copy_item(any_ws, project, original.id, who["bob"])
    hand_in(any_ws, project, ada, turn(doc, "fact_single", {0: 1, 1: 1}, "Hotels."), who["ada"])
    assert waiting_for_adjudication(any_ws, project) == []  # bob has not handed in yet
    hand_in(
        any_ws, project, bob, turn(doc, "summary", {1: 4, 2: None}, "Hotel nights."), who["bob"]
    )
    cy = copy_item(any_ws, project, original.id, who["cy"])  # a third copy, still a draft
    assert waiting_for_adjudication(any_ws, project) == []
    hand_in(any_ws, project, cy, turn(doc, "summary", {2: None}, "Nights."), who["cy"])
    [waiting] = waiting_for_adjudication(any_ws, project)
    assert (waiting.id, waiting.annotators) == (original.id, ["ada", "bob", "cy"])

    sides = versions(any_ws, project, original.id)
    assert [v.annotator for v in sides] == ["gold", "ada", "bob", "cy"]
    [first] = differences(sides)
    assert first["fields"]["query"]["differs"] is False
    assert first["fields"]["query_type"]["differs"] is True
    assert first["fields"]["query_type"]["values"][bob] == "summary"
    passages = {p["text"]: p for p in first["passages"]}
    assert passages[SENTENCES[1]]["differs"] is True  # cy did not mark it
    assert set(passages[SENTENCES[1]]["marks"]) == {ada, bob}
    assert passages[SENTENCES[1]]["marks"][bob]["group"] == 4

    # type and answer from bob, passage 0 from ada, passage 1 (sentence 2) from bob, and
    # ada's sentence 1 as distracting
    choices = Choices(
        ada,
        [
            TurnChoice(
                ada,
                bob,
                bob,
                [
                    PassageChoice(ada, 0),
                    PassageChoice(bob, 1),
                    PassageChoice(ada, 1, label="distracting", group=None),
                ],
            )
        ],
    )
    gold = adjudicate(any_ws, project, original.id, choices, original.version)
    assert gold.status == "accepted"
    [t] = gold.turns
    assert (t.query_type, t.answer) == ("summary", "Hotel nights.")
    assert [(e.text, e.label) for e in t.evidence] == [
        (SENTENCES[0], "relevant"),
        (SENTENCES[2], "relevant"),
        (SENTENCES[1], "distracting"),
    ]
    # ada's group and bob's are renumbered apart: both passages are needed
    assert t.evidence[0].group != t.evidence[1].group
    assert all(e.anchor == "ok" for e in t.evidence)
    actions = [e["action"] for e in item_events(any_ws, project, original.id)]
    assert actions[-2:] == ["adjudicate", "status"]
    assert waiting_for_adjudication(any_ws, project) == []
    report = agreement_report(any_ws, project)
    assert report.adjudicated == 1
    assert {row.name for row in report.gold} == {"ada", "bob", "cy"}


def test_a_stale_merge_is_refused_and_loses_nothing(any_ws: Workspace) -> None:
    project, doc, who = setup(any_ws, ["ada", "bob"])
    original = create_item(any_ws, project, Item(turns=[Turn(query="What is refunded?")]))
    copies = [copy_item(any_ws, project, original.id, who[n]) for n in ("ada", "bob")]
    for copy_id, name in zip(copies, ("ada", "bob"), strict=True):
        hand_in(any_ws, project, copy_id, turn(doc, "fact_single", {0: None}, name), who[name])
    read = versions(any_ws, project, original.id)
    # meanwhile someone else changes the original
    edited = Item(turns=[Turn(query="What is refunded?", answer="changed meanwhile")])
    save_item(any_ws, project, original.id, edited, original.version)
    with pytest.raises(StaleItem, match="was changed elsewhere") as stale:
        adjudicate(any_ws, project, original.id, pick_all(read, copies[0]), original.version)
    assert stale.value.current.turns[0].answer == "changed meanwhile"
    stored = get_item(any_ws, project, original.id)
    assert (stored.status, stored.turns[0].answer) == ("draft", "changed meanwhile")
    gold = adjudicate(any_ws, project, original.id, pick_all(read, copies[1]), stored.version)
    assert (gold.turns[0].answer, gold.status) == ("bob", "accepted")


def test_bad_choices_and_items_are_refused_with_what_is_wrong(any_ws: Workspace) -> None:
    project, _, who = setup(any_ws, ["ada", "bob"])
    original = create_item(any_ws, project, Item(turns=[Turn(query="Q?")]))
    ada = copy_item(any_ws, project, original.id, who["ada"])
    with pytest.raises(InvalidInput, match="has 1 annotator copy"):
        versions(any_ws, project, original.id)
    with pytest.raises(InvalidInput, match="is an annotator's copy"):
        versions(any_ws, project, ada)
    copy_item(any_ws, project, original.id, who["bob"])
    sides = versions(any_ws, project, original.id)
    v = original.version
    with pytest.raises(InvalidInput, match="turn 1, answer: 'nope' is not one of"):
        adjudicate(any_ws, project, original.id, Choices(ada, [TurnChoice(ada, ada, "nope")]), v)
    bad_passage = Choices(ada, [TurnChoice(ada, ada, ada, [PassageChoice(ada, 3)])])
    with pytest.raises(InvalidInput, match="has no passage 3"):
        adjudicate(any_ws, project, original.id, bad_passage, v)
    with pytest.raises(InvalidInput, match="has no such turn"):
        two = Choices(ada, [TurnChoice(ada, ada, ada), TurnChoice(ada, ada, ada)])
        adjudicate(any_ws, project, original.id, two, v)
    assert get_item(any_ws, project, original.id).version == v  # nothing written
    assert len(sides) == 3
