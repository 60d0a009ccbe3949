"""Annotators' copies of an item under overlap (assay.review.copies)."""

from __future__ import annotations

import pytest

from assay.errors import InvalidInput
from assay.gold.items import create_item, get_item
from assay.people.accounts import create_account
from assay.records import Item, Turn
from assay.review.copies import copies_of, copy_item, original_of
from assay.store.projects import create_project
from assay.store.workspace import Workspace


def test_a_copy_is_the_annotators_own_draft_of_the_original(any_ws: Workspace) -> None:
    project = create_project(any_ws, "p")
    ada = create_account(any_ws, "ada", "a long password 1").id
    bob = create_account(any_ws, "bob", "a long password 2").id
    item = Item(turns=[Turn(query="Who wrote it?", answer="Ada")], notes="check dates")
    original = create_item(any_ws, project, item)

    first = copy_item(any_ws, project, original.id, ada)
    second = copy_item(any_ws, project, original.id, bob)

    assert copies_of(any_ws, project, original.id) == [first, second]
    assert original_of(any_ws, first) == original.id
    assert original_of(any_ws, original.id) is None
    copy = get_item(any_ws, project, first)
    assert (copy.turns[0].query, copy.turns[0].answer, copy.notes) == (
        "Who wrote it?",
        "Ada",
        "check dates",
    )
    assert (copy.status, copy.version) == ("draft", 1)
    with pytest.raises(InvalidInput, match="is itself a copy"):
        copy_item(any_ws, project, first, bob)
