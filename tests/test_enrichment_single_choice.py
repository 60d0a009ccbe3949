"""A single-choice enrichment (answerability by default, or the project's
``enrichments_single``) holds one value at most: every write of an item refuses two, with an
error naming the turn, the enrichment and the values, and stores nothing. On SQLite and
PostgreSQL."""

from __future__ import annotations

import pytest

from assay.errors import InvalidInput
from assay.gold.items import create_item, editable_copy, get_item, save_item
from assay.gold.project_config import settings_view, update_settings
from assay.gold.taxonomy import single_choice_enrichments
from assay.records import Item, Turn
from assay.store.projects import create_project
from assay.store.workspace import Workspace


def conversation(**enrichments: list[str]) -> Item:
    turns = [Turn(query="Who runs the trams?", answer="Kelmtal Mobil.", enrichments=enrichments)]
    return Item(kind="conversation", turns=turns)


def test_answerability_takes_one_value_on_create_and_save(any_ws: Workspace) -> None:
    project = create_project(any_ws, "single", "en")
    assert single_choice_enrichments(project) == ["answerability"]
    with pytest.raises(InvalidInput) as refused:
        create_item(any_ws, project, conversation(answerability=["ANSWERABLE", "PARTIAL"]))
    message = str(refused.value)
    assert "turn 1" in message and "'answerability'" in message
    assert "'ANSWERABLE', 'PARTIAL'" in message and "takes one value" in message

    item = create_item(
        any_ws, project, conversation(answerability=["ANSWERABLE"], **{"Multi-Turn": ["Follow-up"]})
    )
    data = editable_copy(item)
    data.turns[0].enrichments["Answerability"] = ["PARTIAL", "UNANSWERABLE"]  # any case
    data.turns[0].enrichments.pop("answerability")
    with pytest.raises(InvalidInput, match="'Answerability' takes one value"):
        save_item(any_ws, project, item.id, data, item.version)
    stored = get_item(any_ws, project, item.id)
    assert stored.version == item.version  # nothing stored
    assert stored.turns[0].enrichments == {
        "answerability": ["ANSWERABLE"],
        "Multi-Turn": ["Follow-up"],
    }

    # multi-choice enrichments keep several values; the same value twice is one value
    data = editable_copy(stored)
    data.turns[0].enrichments["Question Type"] = ["Factoid", "Comparative"]
    data.turns[0].enrichments["answerability"] = ["PARTIAL", "PARTIAL"]
    saved = save_item(any_ws, project, item.id, data, stored.version)
    assert saved.turns[0].enrichments["Question Type"] == ["Factoid", "Comparative"]


def test_a_project_chooses_its_single_choice_enrichments(any_ws: Workspace) -> None:
    project = create_project(any_ws, "own", "en")
    twice = {"enrichments_single": ["Multi-Turn", " Multi-Turn"]}
    project = update_settings(any_ws, project, twice)
    assert settings_view(project)["enrichments_single"] == ["Multi-Turn"]
    with pytest.raises(InvalidInput, match="'Multi-Turn' takes one value"):
        create_item(any_ws, project, conversation(**{"Multi-Turn": ["Follow-up", "Correction"]}))
    both = create_item(any_ws, project, conversation(answerability=["ANSWERABLE", "PARTIAL"]))
    assert both.turns[0].enrichments["answerability"] == ["ANSWERABLE", "PARTIAL"]
    with pytest.raises(InvalidInput, match="enrichments_single"):
        update_settings(any_ws, project, {"enrichments_single": "answerability"})
    project = update_settings(any_ws, project, {"enrichments_single": []})
    assert single_choice_enrichments(project) == []
