"""The dashboard's figures (assay.review.dashboard) on a small project whose every figure is
worked out by hand below, on SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from assay.corpus.ingest import ingest_bytes
from assay.errors import InvalidInput
from assay.gold.items import create_item
from assay.people.accounts import create_account
from assay.records import Evidence, Item, Project, Turn
from assay.review.copies import copy_item
from assay.review.dashboard import dashboard
from assay.store.projects import create_project
from assay.store.review_schema import reviews
from assay.store.schema import events, evidence, items, turns
from assay.store.workspace import Workspace

NOW = datetime(2026, 3, 12, 12, 0, tzinfo=UTC)  # a Thursday; its ISO week starts 2026-03-09
TODAY = datetime(2026, 3, 12, tzinfo=UTC)
YESTERDAY = TODAY - timedelta(days=1)


def _item(query_type: str, doc_id: str | None = None, origin: str = "human") -> Item:
    cited = [Evidence(doc_id=doc_id, start=0, end=5, origin=_ev_origin(origin))] if doc_id else []
    turn = Turn(query=f"A {query_type} question?", query_type=query_type, evidence=cited)
    return Item(origin=origin, turns=[turn])


def _ev_origin(item_origin: str) -> str:
    return "llm-suggestion" if item_origin == "llm-suggestion" else "selected"


def _event(
    project: Project, item_id: str, actor: int, action: str, at: datetime, **after: Any
) -> dict[str, Any]:
    return {
        "project_id": project.id,
        "item_id": item_id,
        "actor_id": actor,
        "action": action,
        "before": None,
        "after": after or {"question": "edited"},
        "at": at,
    }


def _submit(project: Project, item_id: str, actor: int, at: datetime) -> dict[str, Any]:
    return _event(project, item_id, actor, "status", at, status="submitted")


def _seed(ws: Workspace) -> tuple[Project, dict[str, Any]]:
    """Six gold items, four copies, three documents; events and reviews at known times."""
    project = create_project(ws, "dash")
    ada = create_account(ws, "ada", "a long password 1", display_name="Ada L.").id
    bob = create_account(ws, "bob", "a long password 2").id
    d1 = ingest_bytes(ws, project, "d1.txt", b"Alpha text one.").id
    d2 = ingest_bytes(ws, project, "d2.txt", b"Bravo text two.").id
    d3 = ingest_bytes(ws, project, "d3.txt", b"Charlie three.").id
    made = {
        "i1": (create_item(ws, project, _item("fact_single", d1), author=ada), "accepted"),
        "i2": (create_item(ws, project, _item("summary", d1), author=ada), "submitted"),
        "i3": (create_item(ws, project, _item("fact_single"), author=bob), "draft"),
        "i4": (create_item(ws, project, _item("reasoning"), author=bob), "rejected"),
        "i5": (
            create_item(ws, project, _item("fact_single", d2, "llm-suggestion"), author=ada),
            "accepted",
        ),
        "i6": (create_item(ws, project, _item("summary", d2, "llm-suggestion")), "draft"),
    }
    ids = {key: item.id for key, (item, _status) in made.items()}
    c1a = copy_item(ws, project, ids["i1"], ada)
    c1b = copy_item(ws, project, ids["i1"], bob)
    c2a = copy_item(ws, project, ids["i2"], ada)
    c2b = copy_item(ws, project, ids["i2"], bob)
    with ws.engine.begin() as conn:
        for key, (_item_row, status) in made.items():
            conn.execute(items.update().where(items.c.id == ids[key]).values(status=status))
        finished = TODAY + timedelta(hours=8)
        for copy_id, query_type in (
            (c1a, "fact_single"),
            (c1b, "summary"),  # the two disagree on i1's type
            (c2a, "summary"),
            (c2b, "summary"),
        ):
            conn.execute(
                items.update()
                .where(items.c.id == copy_id)
                .values(status="submitted", query_type=query_type, updated_at=finished)
            )
        # a copy citing d3 leaves d3 uncovered: copies are not gold
        c2b_turn = conn.scalar(sa.select(turns.c.id).where(turns.c.item_id == c2b))
        conn.execute(
            evidence.insert().values(
                turn_id=c2b_turn, ordinal=0, doc_id=d3, start=0, end=5, text="Charl",
                label="relevant", group_no=1, origin="selected", anchor="ok", author_id=bob,
                created_at=NOW,
            )
        )  # fmt: skip
        conn.execute(events.delete().where(events.c.project_id == project.id))
        h = timedelta(hours=1)
        conn.execute(
            events.insert(),
            [
                # ada: i1 60 min, i2 30 min, her copy of i1 10 min → median 30 min
                _event(project, ids["i1"], ada, "create", YESTERDAY + 9 * h),
                _event(project, ids["i1"], ada, "save", YESTERDAY + 9.5 * h),
                _submit(project, ids["i1"], ada, YESTERDAY + 10 * h),
                _event(project, ids["i1"], bob, "status", YESTERDAY + 11 * h, status="accepted"),
                _event(project, ids["i2"], ada, "create", TODAY + 8.5 * h),
                _submit(project, ids["i2"], ada, TODAY + 9 * h),
                _event(project, c1a, ada, "save", TODAY + 7 * h),
                _submit(project, c1a, ada, TODAY + 7 * h + h / 6),
                # bob: two copies, 100 s and 300 s → median 200 s; a resubmit counts for
                # throughput, not again for time
                _event(project, c1b, bob, "save", TODAY + 6 * h),
                _submit(project, c1b, bob, TODAY + 6 * h + timedelta(seconds=100)),
                _event(project, c2b, bob, "save", YESTERDAY + 6 * h),
                _submit(project, c2b, bob, YESTERDAY + 6 * h + timedelta(seconds=300)),
                _submit(project, c2b, bob, YESTERDAY + 7 * h),
                # submitted 20 days ago, before a 7-day window: neither counted nor timed
                _event(project, c2a, bob, "status", TODAY - timedelta(days=20), status="draft"),
                _event(project, ids["i4"], bob, "create", TODAY - timedelta(days=20)),
                _submit(project, ids["i4"], bob, TODAY - timedelta(days=20) + h / 6),
                # an import's history: the status event is older than the create → not timed
                _event(project, ids["i5"], ada, "create", TODAY),
                _submit(project, ids["i5"], ada, TODAY - timedelta(days=30)),
            ],
        )
        reviewer = {"reviewer_id": bob, "reason": "", "submitted_version": 2, "changes": []}
        conn.execute(
            reviews.insert(),
            [
                {"project_id": project.id, "item_id": ids["i1"], "verdict": "accept",
                 "at": YESTERDAY, **reviewer},
                {"project_id": project.id, "item_id": ids["i5"], "verdict": "accept_edited",
                 "at": TODAY, **reviewer},
                {"project_id": project.id, "item_id": ids["i4"], "verdict": "reject",
                 "at": TODAY - timedelta(days=7), **reviewer},
            ],
        )  # fmt: skip
    return project, {"docs": (d1, d2, d3)}


def test_the_figures_equal_those_worked_out_by_hand(any_ws: Workspace) -> None:
    project, seeded = _seed(any_ws)
    figures = dashboard(any_ws, project, days=7, now=NOW)

    assert figures["funnel"] == {
        "draft": 2,
        "submitted": 1,
        "accepted": 2,
        "rejected": 1,
        "total": 6,
        "reached_submitted": 4,
        "reached_review": 3,
        "copies": 4,
    }
    assert [(r["query_type"], r["total"], r["by_status"]) for r in figures["query_types"]] == [
        ("fact_single", 3, {"draft": 1, "submitted": 0, "accepted": 2, "rejected": 0}),
        ("summary", 2, {"draft": 1, "submitted": 1, "accepted": 0, "rejected": 0}),
        ("reasoning", 1, {"draft": 0, "submitted": 0, "accepted": 0, "rejected": 1}),
    ]

    d3 = seeded["docs"][2]
    assert figures["coverage"] == {
        "documents": 3,
        "covered": 2,
        "uncovered": 1,
        "uncovered_documents": [{"doc_id": d3, "name": "d3.txt"}],
    }

    throughput = figures["throughput"]
    assert throughput["days"] == [f"2026-03-{d:02d}" for d in range(6, 13)]
    assert [(a["username"], a["name"], a["per_day"], a["total"]) for a in
            throughput["annotators"]] == [
        ("ada", "Ada L.", [0, 0, 0, 0, 0, 1, 2], 3),
        ("bob", "bob", [0, 0, 0, 0, 0, 2, 1], 3),
    ]  # fmt: skip
    assert throughput["per_day"] == [0, 0, 0, 0, 0, 3, 3]

    assert figures["time_per_item"] == [
        {"username": "ada", "name": "Ada L.", "items": 3, "median_seconds": 1800.0},
        {"username": "bob", "name": "bob", "items": 2, "median_seconds": 200.0},
    ]

    weeks = figures["agreement"]["weeks"]
    assert len(weeks) == 12 and weeks[-1]["week"] == "2026-03-09"
    assert weeks[-1] == {
        "week": "2026-03-09",
        "overlapped": 2,
        "same_type": 1,
        "type_agreement": 0.5,
        "reviews": 2,
        "accepted_unchanged": 1,
        "review_acceptance": 0.5,
    }
    assert weeks[-2]["week"] == "2026-03-02" and weeks[-2]["reviews"] == 1
    assert weeks[-2]["review_acceptance"] == 0.0 and weeks[-2]["type_agreement"] is None
    assert not figures["agreement"]["empty"]

    llm = figures["llm_drafts"]
    assert llm["items"] == {"accepted": 1, "rejected": 0, "open": 1, "total": 2}
    assert llm["by_query_type"] == [
        {"query_type": "fact_single", "accepted": 1, "rejected": 0, "open": 0, "total": 1},
        {"query_type": "summary", "accepted": 0, "rejected": 0, "open": 1, "total": 1},
    ]
    assert llm["evidence"] == {"accepted": 1, "rejected": 0, "open": 1, "total": 2}


def test_an_empty_project_has_zeros_and_an_empty_agreement(any_ws: Workspace) -> None:
    project = create_project(any_ws, "empty")
    figures = dashboard(any_ws, project, now=NOW)
    assert figures["funnel"]["total"] == 0 and figures["query_types"] == []
    assert figures["coverage"] == {
        "documents": 0, "covered": 0, "uncovered": 0, "uncovered_documents": []
    }  # fmt: skip
    assert figures["throughput"]["annotators"] == [] and len(figures["throughput"]["days"]) == 28
    assert figures["time_per_item"] == []
    assert figures["agreement"]["empty"]
    assert figures["llm_drafts"]["items"]["total"] == 0


@pytest.mark.parametrize("days", [0, -3, 367])
def test_a_window_out_of_range_is_refused(ws: Workspace, days: int) -> None:
    project = create_project(ws, "p")
    with pytest.raises(InvalidInput, match="days must be between 1 and 366"):
        dashboard(ws, project, days=days)
