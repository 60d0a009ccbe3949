"""The text the store writes its JSON columns with (assay.store.json_columns) reads back as the
values ``to_json`` gives, whichever encoder wrote it."""

from __future__ import annotations

import json
from collections import namedtuple
from datetime import UTC, datetime, timedelta, timezone
from pathlib import PurePosixPath

import pytest
import sqlalchemy as sa

from assay.people.actors import acting_account
from assay.records import Evidence, Item, Turn, to_json
from assay.store.json_columns import json_text
from assay.store.projects import create_project
from assay.store.schema import events

Pair = namedtuple("Pair", "left right")

VALUES = [
    None,
    {},
    [],
    'Grüße — 東京 \u2028 "quoted" \\ back',
    {"nested": {"list": [1, 2.5, True, None], "empty": {}}},
    datetime(2026, 11, 29, 3, 4, 5, 678901, tzinfo=UTC),
    datetime(2026, 11, 29, 3, 4, 5),  # naive, no microseconds
    datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=1))),
    PurePosixPath("/data/a.txt"),
    {1: "an int key", 2.5: "a float key"},  # the standard library's encoder takes these
    2**70,  # beyond 64 bits: likewise
    Pair(1, "two"),  # a named tuple: a list, as json.dumps writes it
    Item(
        id="i1",
        kind="qa",
        turns=[
            Turn(
                query="Was steht über Äpfel?",
                answer="Viel.",
                evidence=[Evidence(doc_id="d1", start=0, end=5, text="Äpfel", label="relevant")],
            )
        ],
        extra={"source_id": "task-1"},
        created_at=datetime(2026, 11, 29, tzinfo=UTC),
    ),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_json_text_reads_back_as_to_json(value):
    expected = json.loads(json.dumps(to_json(value)))
    assert json.loads(json_text(value)) == expected


def test_json_text_refuses_what_is_not_json():
    with pytest.raises(TypeError, match="set is not a JSON value"):
        json_text({"tags": {"a", "b"}})


def test_stored_json_reads_back_through_the_database(ws):
    """What the engine writes with json_text is what a JSON column gives back (PostgreSQL's
    ``json`` type parses the text too)."""
    item = VALUES[-1]
    project = create_project(ws, "json-text")
    with ws.engine.begin() as conn:
        row = {
            "project_id": project.id,
            "item_id": None,
            "actor_id": acting_account(ws, conn=conn),
            "action": "create",
            "before": None,
            "after": item,
            "at": datetime(2026, 11, 29, tzinfo=UTC),
        }
        row_id = conn.execute(events.insert().returning(events.c.id), row).scalar_one()
        stored = conn.execute(sa.select(events.c.after).where(events.c.id == row_id)).scalar()
    assert stored == json.loads(json.dumps(to_json(item)))
    assert stored["turns"][0]["evidence"][0]["text"] == "Äpfel"
