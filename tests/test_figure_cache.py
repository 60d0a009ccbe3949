"""Dashboard and agreement figures cached per change (assay.review.figure_cache), on SQLite
and PostgreSQL: the cached figures equal freshly computed ones, are served again while
nothing changed (to any process of the workspace), and are computed again after a change."""

from __future__ import annotations

import sqlalchemy as sa
from fastapi.testclient import TestClient

from assay.corpus.ingest import ingest_bytes
from assay.gold.items import create_item, get_item, set_status
from assay.records import Item, Turn, to_json
from assay.review.agreement import agreement_report
from assay.review.copies import copy_item
from assay.review.dashboard import dashboard
from assay.review.figure_cache import cached_agreement, cached_dashboard
from assay.store.projects import get_project
from assay.store.review_schema import figure_cache
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.test_review_agreement import hand_in, setup, turn
from tests.test_review_dashboard import _seed


def _without_time(figures: dict) -> dict:  # type: ignore[type-arg]
    return {k: v for k, v in figures.items() if k != "generated_at"}


def _stored(ws: Workspace) -> list[tuple[str, str]]:
    with ws.engine.connect() as conn:
        rows = conn.execute(sa.select(figure_cache.c.name, figure_cache.c.mark)).all()
    return sorted((r.name, r.mark) for r in rows)


def test_the_cached_dashboard_is_the_fresh_one_until_a_change(any_ws: Workspace) -> None:
    project, _ = _seed(any_ws)
    first = cached_dashboard(any_ws, project, days=7)
    assert _without_time(first) == _without_time(to_json(dashboard(any_ws, project, days=7)))
    stored = _stored(any_ws)
    assert [name for name, _ in stored] == ["dashboard:7:all"]

    with Workspace.open(any_ws.settings) as other:  # another process of the same workspace
        again = cached_dashboard(other, get_project(other, "dash"), days=7)
    assert again == first  # served from the table: the same moment of computation
    assert _stored(any_ws) == stored

    draft = create_item(any_ws, project, Item(turns=[Turn(query="new", query_type="summary")]))
    set_status(any_ws, project, draft.id, "submitted", draft.version)
    changed = cached_dashboard(any_ws, project, days=7)
    assert changed["funnel"]["submitted"] == first["funnel"]["submitted"] + 1
    assert changed["generated_at"] != first["generated_at"]
    assert _without_time(changed) == _without_time(to_json(dashboard(any_ws, project, days=7)))

    ingest_bytes(any_ws, project, "d4.txt", b"Delta four.")  # a document writes no event
    covered = cached_dashboard(any_ws, project, days=7)
    assert covered["coverage"]["uncovered"] == changed["coverage"]["uncovered"] + 1
    assert _without_time(covered) == _without_time(to_json(dashboard(any_ws, project, days=7)))


def test_the_cached_agreement_is_the_fresh_one_until_a_change(any_ws: Workspace) -> None:
    project, doc, who = setup(any_ws, ["ada", "bob"])
    original = create_item(any_ws, project, Item(turns=[Turn(query="What is refunded?")]))
    copies = {n: copy_item(any_ws, project, original.id, who[n]) for n in ("ada", "bob")}
    hand_in(any_ws, project, copies["ada"], turn(doc, "fact_single", {0: None}, "A."), who["ada"])
    hand_in(any_ws, project, copies["bob"], turn(doc, "summary", {1: None}, "B."), who["bob"])

    report, at = cached_agreement(any_ws, project)
    assert report == agreement_report(any_ws, project)
    assert cached_agreement(any_ws, project) == (report, at)
    by_chunks, _ = cached_agreement(any_ws, project, chunking="sent")
    assert by_chunks == agreement_report(any_ws, project, chunking="sent")

    bob = get_item(any_ws, project, copies["bob"])
    set_status(any_ws, project, bob.id, "draft", bob.version, actor=who["bob"])
    hand_in(any_ws, project, bob.id, turn(doc, "fact_single", {0: None}, "A."), who["bob"])
    changed, later = cached_agreement(any_ws, project)
    assert changed == agreement_report(any_ws, project)
    assert changed.overall.passages_f1 != report.overall.passages_f1 and later != at


def test_the_pages_say_when_the_figures_were_computed(any_ws: Workspace) -> None:
    _seed(any_ws)
    client = TestClient(create_app(any_ws))
    english = client.get("/projects/dash/dashboard").text
    assert 'id="dash-computed"' in english and "Figures computed " in english
    german = client.get("/projects/dash/dashboard", headers={"accept-language": "de"}).text
    assert "Zahlen berechnet am " in german
    page = client.get("/projects/dash/agreement").text
    assert 'id="agreement-computed"' in page and "Computed " in page
    api = client.get("/api/projects/dash/agreement").json()
    assert api["computed_at"] and api["project"] == "dash"
