"""Pages shaped by the reader's role (team mode, SQLite and PostgreSQL): editors read-only
with a line saying why, forms only for those who may submit them, refusals in plain words in
English and German; the judging overview with every judge's progress for leads; the compare
page's defaults compare two different things."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.gold.items import create_item
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.sessions import create_session
from assay.records import Item, Turn
from assay.store.projects import update_project_settings
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.judging_sample import judging_project

PASSWORD = "correct horse battery"
ROLES = ("owner", "lead", "reviewer", "annotator", "viewer")


@pytest.fixture
def team(any_ws: Workspace, tmp_path: Path) -> dict[str, Any]:
    """Project ferries (with judging inputs), one account per role named after it, and an
    item written by the lead."""
    project = judging_project(any_ws, tmp_path)
    create_account(any_ws, "root", PASSWORD, admin=True)
    people = {}
    for role in ROLES:
        people[role] = create_account(any_ws, role, PASSWORD).id
        set_role(any_ws, project.id, people[role], role)
    item = create_item(
        any_ws,
        project,
        Item(turns=[Turn(query="When?", answer="At 22:40.")]),
        author=people["lead"],
    )
    set_team_mode(any_ws, True)
    return {"ws": any_ws, "project": project, "item": item.id, **people}


def client_as(ws: Workspace, account_id: int, language: str = "en") -> TestClient:
    client = TestClient(create_app(ws))
    client.cookies.set("assay_session", create_session(ws, account_id)[0])
    client.headers["Accept-Language"] = language
    return client


NOTE = re.compile(r'<p class="banner read-only-note" id="read-only-note" role="note">(.*?)</p>')


def note_of(page: str) -> str:
    found = NOTE.search(page)
    return found.group(1).replace("&#39;", "'") if found else ""


def test_editors_are_read_only_for_those_who_may_not_edit(team: dict[str, Any]) -> None:
    ws, item = team["ws"], team["item"]
    item_page = f"/projects/ferries/items/{item}"
    judging_page = "/projects/ferries/judging/reports?topic=t1"
    notes = {
        role: (
            note_of(client_as(ws, team[role]).get(item_page).text),
            note_of(client_as(ws, team[role]).get(judging_page).text),
        )
        for role in ("owner", "lead", "reviewer", "viewer")
    }
    assert notes["owner"] == notes["lead"] == notes["reviewer"] == ("", "")
    on_item, on_judging = notes["viewer"]
    assert on_item == (
        "You can read this item but not change it: viewer may not edit items in project "
        "'ferries': the role viewer does not allow it (roles that may: owner, lead, reviewer)"
    )
    assert on_judging.startswith("You can read these judgments but not judge: viewer may not judge")
    german = note_of(client_as(ws, team["viewer"], "de").get(item_page).text)
    assert german == (
        "Sie können diesen Eintrag lesen, aber nicht ändern: Einträge bearbeiten ist für viewer "
        "im Projekt 'ferries' nicht erlaubt: die Rolle Lesend erlaubt es nicht (erlaubt für: "
        "Eigentümer, Leitung, Prüfend)"
    )
    # an annotator who may read every item edits only their own
    update_project_settings(ws, team["project"], {"annotators_see_all": True})
    annotator = note_of(client_as(ws, team["annotator"]).get(item_page).text)
    assert "only on their own items or items assigned to them" in annotator
    assert "item.edit" not in annotator


def test_the_experiment_form_is_only_for_those_who_may_run_experiments(
    team: dict[str, Any],
) -> None:
    for role in ROLES:
        page = client_as(team["ws"], team[role]).get("/projects/ferries/experiments").text
        may = role in ("owner", "lead")
        assert ('id="new-experiment"' in page) is may, role
        assert ('id="no-new-experiment"' in page) is not may, role


def test_refusal_pages_in_plain_words_in_both_languages(team: dict[str, Any]) -> None:
    ws = team["ws"]
    english = client_as(ws, team["annotator"]).get("/projects/ferries/dashboard")
    german = client_as(ws, team["annotator"], "de").get("/projects/ferries/dashboard")
    assert english.status_code == german.status_code == 403
    assert "annotator may not read other people&#39;s items in project &#39;ferries&#39;" in (
        english.text
    )
    assert "Einträge anderer lesen ist für annotator im Projekt &#39;ferries&#39;" in german.text
    for page in (english.text, german.text):
        assert "item.read" not in page and "a annotator" not in page
    viewer = client_as(ws, team["viewer"], "de")
    viewer.get("/")  # the CSRF cookie
    viewer.headers["X-CSRF-Token"] = viewer.cookies["assay_csrf"]
    saved = viewer.put(
        f"/api/projects/ferries/items/{team['item']}",
        json={"version": 1, "item": {"turns": [{"query": "When?", "answer": "Now."}]}},
    )
    assert saved.status_code == 403
    assert saved.json()["detail"] == (
        "Einträge bearbeiten ist für viewer im Projekt 'ferries' nicht erlaubt: die Rolle "
        "Lesend erlaubt es nicht (erlaubt für: Eigentümer, Leitung, Prüfend)"
    )


def test_leads_see_every_judges_progress(team: dict[str, Any]) -> None:
    ws = team["ws"]
    body = {"mode": "report", "topic_id": "t1", "version": 0, "rating": "Bad"}
    for role, run in (("annotator", "alpha"), ("reviewer", "alpha"), ("reviewer", "beta")):
        client = client_as(ws, team[role])
        client.get("/")
        client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
        saved = client.put("/api/projects/ferries/judging/judgments", json={**body, "run_id": run})
        assert saved.status_code == 200, saved.text
    lead = client_as(ws, team["lead"]).get("/projects/ferries/judging?mode=reports").text
    table = lead[lead.index('class="docs judging-judges"') :]
    rows = re.findall(r'<tr><th scope="row">(\w+)</th>.*?(\d) of (\d) judged', table, re.S)
    assert rows == [("reviewer", "2", "2"), ("annotator", "1", "2")]
    own = client_as(ws, team["annotator"]).get("/projects/ferries/judging?mode=reports").text
    assert "judging-judges" not in own  # a judge sees their own progress
    assert "1 of 2 judged" in own


def test_the_compare_page_never_compares_a_thing_with_itself(any_ws: Workspace) -> None:
    from tests.test_web_experiment_compare import client_for, two_runs

    _, first, second = two_runs(any_ws)  # kw (keyword), then hy (hybrid, keyword)
    client = client_for(any_ws)

    def chosen(query: str) -> dict[str, str]:
        page = client.get(f"/projects/test/compare-experiments{query}").text
        picked = {}
        for side in ("a", "b", "pa", "pb"):
            select = re.search(rf'<select name="{side}"[^>]*>(.*?)</select>', page, re.S)
            if select:
                found = re.search(r'<option (?:value="(\w+)" )?selected>(\w*)', select.group(1))
                picked[side] = found.group(1) or found.group(2) if found else ""
        return picked

    assert chosen("") == {"a": str(first), "b": str(second), "pb": "hybrid"}
    assert chosen(f"?a={second}")["b"] == str(first)  # the newest other experiment
    same = chosen("?a=hy&b=hy")
    assert (same["pa"], same["pb"]) == ("hybrid", "keyword")
    assert chosen("?a=hy&b=hy&pa=keyword")["pb"] == "hybrid"


def test_every_action_has_plain_words_in_both_languages() -> None:
    """A refusal names the action in plain words; an action without them broke every page
    that asks what the reader may do (a KeyError), so each one is checked here."""
    import json

    from assay.people.roles import ACTIONS, ADMIN_ACTIONS, DOING

    catalogs = Path(__file__).parent.parent / "src" / "assay" / "web" / "i18n"
    for action in (*ACTIONS, *ADMIN_ACTIONS):
        assert DOING.get(action), action
        for language in ("en", "de"):
            words = json.loads((catalogs / language / "roles.json").read_text(encoding="utf-8"))
            assert words.get(f"doing.{action}"), (language, action)


def test_the_compare_api_never_compares_a_pipeline_with_itself(any_ws: Workspace) -> None:
    from tests.test_web_experiment_compare import client_for, two_runs

    two_runs(any_ws)  # hy has the pipelines hybrid, keyword
    client = client_for(any_ws)

    def pipelines(query: str) -> tuple[str, str]:
        answer = client.get(f"/api/projects/test/compare-experiments{query}")
        assert answer.status_code == 200, answer.text
        data = answer.json()
        return data["a"]["pipeline"], data["b"]["pipeline"]

    assert pipelines("?a=hy&b=hy") == ("hybrid", "keyword")  # the next one, not A's own
    assert pipelines("?a=hy&b=hy&pa=keyword") == ("keyword", "hybrid")  # wraps around
    assert pipelines("?a=hy&b=hy&pb=hybrid") == ("hybrid", "hybrid")  # asked for: kept
    assert pipelines("?a=kw&b=kw") == ("keyword", "keyword")  # one pipeline: nothing else
    assert pipelines("?a=kw&b=hy") == ("keyword", "hybrid")  # two experiments: B's first


def test_the_run_controls_are_only_for_those_who_may_run_experiments(
    team: dict[str, Any],
) -> None:
    from assay.experiments import create_experiment
    from assay.llm.response_cache import ResponseCache

    ws = team["ws"]
    made = create_experiment(
        ws, team["project"], "e", pipelines=["keyword"], mode="retrieval", statuses=["draft"]
    )
    cache = ResponseCache(ws.engine, team["project"].id)
    cache.put(cache.key("http://x/v1/chat/completions", {"model": "m"}), "http://x", "m", {})
    for role in ROLES:
        page = client_as(ws, team[role]).get(f"/projects/ferries/experiments/{made.id}").text
        may = role in ("owner", "lead")
        for control in ('id="resume-run"', 'id="cancel-run"', 'id="run-no-cache"'):
            assert (control in page) is may, (role, control)
        assert ('id="run-read-only"' in page) is not may, role
        listing = client_as(ws, team[role]).get("/projects/ferries/experiments").text
        assert ('id="drop-cache"' in listing) is may, role
        assert "1 answers" in listing, role
    viewer = client_as(ws, team["viewer"], "de").get(f"/projects/ferries/experiments/{made.id}")
    assert "Sie können diesem Lauf folgen" in viewer.text
