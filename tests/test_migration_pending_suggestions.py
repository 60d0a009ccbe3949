"""Migration 0019 on a workspace that already holds duplicate pending suggestions (stored by
two requests at once before it): nothing is deleted; the oldest relevance suggestion of a
passage and the newest rewrite of a turn stay pending, the others become ``replaced``, and
the unique indexes then hold. SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command

from assay.gold.items import create_item
from assay.gold.suggesting import Passage, suggest_relevance, suggest_rewrite
from assay.gold.suggestions import list_suggestions
from assay.people.actors import acting_account
from assay.records import Item, Turn
from assay.store.db import _alembic_config, migrate
from assay.store.projects import create_project
from assay.store.suggestion_schema import suggestions
from assay.store.workspace import Workspace
from tests.fakes.openai_server import FakeOpenAI
from tests.suggestion_sample import DOCS, JUDGE, QUESTION, REWRITE, add_documents, use_fake

COPIED = [c.name for c in suggestions.c if c.name != "id"]


def test_duplicates_stored_before_become_replaced(any_ws: Workspace) -> None:
    project = create_project(any_ws, "test", "en")
    ids = add_documents(any_ws, project)
    actor = acting_account(any_ws)
    single = create_item(any_ws, project, Item(turns=[Turn(query=QUESTION)]))
    turns = [Turn(query=QUESTION, answer="At 22:40."), Turn(query="And in winter?")]
    chat = create_item(any_ws, project, Item(kind="conversation", turns=turns))
    passages = [Passage(ids[n], 0, len(DOCS[n])) for n in ("ferry.md", "cake.md")]
    with FakeOpenAI([JUDGE, REWRITE]) as fake:
        project = use_fake(any_ws, project, fake)
        first = suggest_relevance(any_ws, project, single.id, actor=actor, passages=passages)
        rewrite = suggest_rewrite(any_ws, project, chat.id, actor=actor, turn=2)
    with any_ws.engine.begin() as conn:
        command.downgrade(_alembic_config(conn), "0018")
        columns = ", ".join(f'"{c}"' for c in COPIED)
        conn.execute(
            sa.text(f"INSERT INTO suggestions ({columns}) SELECT {columns} FROM suggestions")
        )
    migrate(any_ws.engine)

    relevance = list_suggestions(any_ws, project, single.id)
    assert len(relevance) == 4  # nothing deleted
    waiting = [s.id for s in relevance if s.state == "pending"]
    assert sorted(waiting) == sorted(s.id for s in first.created)  # the oldest of each
    assert sorted(s.state for s in relevance) == ["pending", "pending", "replaced", "replaced"]
    rewrites = list_suggestions(any_ws, project, chat.id, kind="rewrite")
    assert [(s.id == rewrite.id, s.state) for s in rewrites] == [
        (True, "replaced"),
        (False, "pending"),  # the newest
    ]
    with pytest.raises(sa.exc.IntegrityError), any_ws.engine.begin() as conn:
        conn.execute(
            sa.text(
                f"INSERT INTO suggestions ({columns}) SELECT {columns} FROM suggestions "
                "WHERE state = 'pending'"
            )
        )
