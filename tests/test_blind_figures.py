"""Blind mode holds for figures too (issue 32): with ``annotators_see_all`` on, an annotator's
agreement page, its JSON and the dashboard's agreement count only items already accepted,
never another annotator's unreviewed copy; a lead sees everything. SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from assay.gold.items import create_item
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.sessions import create_session
from assay.records import Item, Project, Turn
from assay.review.agreement import agreement_report
from assay.review.copies import copy_item
from assay.store.projects import get_project, update_project_settings
from assay.store.workspace import Workspace
from tests.test_review_agreement import hand_in, setup, turn
from tests.test_web_agreement import client_for


def two_overlaps(ws: Workspace) -> tuple[Project, dict[str, int]]:
    """Originals x (ada's and bob's copies handed in, not reviewed) and y (the same, then
    adjudicated by lea, so accepted); team mode, blind, annotators see all."""
    project, doc, who = setup(ws, ["ada", "bob", "lea"])
    create_account(ws, "root", "a long password of root", admin=True)
    for name in ("ada", "bob"):
        set_role(ws, project.id, who[name], "annotator")
    set_role(ws, project.id, who["lea"], "lead")
    for text in ("x", "y"):
        original = create_item(ws, project, Item(turns=[Turn(query=f"What is {text}?")]))
        for name, query_type in (("ada", "fact_single"), ("bob", "summary")):
            copy = copy_item(ws, project, original.id, who[name])
            hand_in(ws, project, copy, turn(doc, query_type, {0: None}, name), who[name])
        if text == "y":
            lea = client_for(ws, create_session(ws, who["lea"])[0])
            url = f"/api/projects/p/adjudication/{original.id}"
            view = lea.get(url).json()
            base = view["versions"][1]["id"]
            chosen = {"query": base, "query_type": base, "answer": base, "passages": []}
            body = {"version": view["version"], "base": base, "turns": [chosen]}
            merged = lea.post(url, json=body)
            assert merged.status_code == 200, merged.text
    settings = {**project.settings, "blind": True, "annotators_see_all": True}
    update_project_settings(ws, project, settings)
    set_team_mode(ws, True)
    return get_project(ws, "p"), who


def overlapped(dashboard: dict[str, Any]) -> int:
    return sum(week["overlapped"] for week in dashboard["agreement"]["weeks"])


def test_an_annotator_sees_no_figure_from_anothers_unreviewed_copy(any_ws: Workspace) -> None:
    _, who = two_overlaps(any_ws)
    ada = client_for(any_ws, create_session(any_ws, who["ada"])[0])
    lea = client_for(any_ws, create_session(any_ws, who["lea"])[0])

    mine = ada.get("/api/projects/p/agreement").json()
    assert (mine["originals"], mine["copies"], mine["not_handed_in"]) == (1, 2, 0)  # y only
    everything = lea.get("/api/projects/p/agreement").json()
    assert (everything["originals"], everything["copies"]) == (2, 4)
    assert everything["overall"]["units"] == 2 and mine["overall"]["units"] == 1
    assert mine["pairs"][0]["measures"]["units"] == 1

    page = ada.get("/projects/p/agreement")
    assert page.status_code == 200 and 'id="agreement-blind"' in page.text
    assert 'id="to-adjudication"' not in page.text  # a count of unreviewed work
    german = ada.get("/projects/p/agreement", headers={"accept-language": "de"}).text
    assert "Blindmodus" in german
    lead_page = lea.get("/projects/p/agreement").text
    assert 'id="agreement-blind"' not in lead_page and 'id="to-adjudication"' in lead_page

    assert overlapped(ada.get("/api/projects/p/dashboard").json()) == 1
    assert overlapped(lea.get("/api/projects/p/dashboard").json()) == 2
    assert ada.get("/projects/p/dashboard").status_code == 200


def test_outside_blind_mode_the_setting_shows_everything(any_ws: Workspace) -> None:
    project, who = two_overlaps(any_ws)
    update_project_settings(any_ws, project, {**project.settings, "blind": False})
    ada = client_for(any_ws, create_session(any_ws, who["ada"])[0])
    assert ada.get("/api/projects/p/agreement").json()["originals"] == 2
    assert agreement_report(any_ws, project, reviewed_only=True).originals == 1
