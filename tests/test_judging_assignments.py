"""Topics given to judges (assay.judging.assignments): checked, listed, taken back; the
overview lists a judge's topics first; the CLI and the JSON API; only leads may assign."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import make_app
from assay.errors import InvalidInput, NotFound
from assay.judging.assignments import assign_topics, list_assignments, unassign_topics
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.records import Project
from assay.store.workspace import Workspace
from assay.web.judging_view import overview
from tests.judging_sample import judging_project
from tests.test_web_judging import client_of

PASSWORD = "correct horse battery"


@pytest.fixture
def project(any_ws: Workspace, tmp_path: Path) -> Project:
    return judging_project(any_ws, tmp_path)


def _second_topic(ws: Workspace, project: Project, tmp_path: Path) -> None:
    from assay.judging.run_import import import_judging_inputs

    topics = tmp_path / "t2.jsonl"
    topics.write_text(json.dumps({"request_id": "t2", "title": "bikes on the ferry"}))
    runs = tmp_path / "t2-runs.jsonl"
    runs.write_text(
        json.dumps(
            {
                "metadata": {"team_id": "blue", "run_id": "alpha", "topic_id": "t2"},
                "responses": [{"text": "Bikes ride free.", "citations": ["ferry"]}],
            }
        )
    )
    import_judging_inputs(ws, project, topics=topics, runs=[runs])


def test_topics_are_given_listed_and_taken_back(any_ws: Workspace, project: Project) -> None:
    ada = create_account(any_ws, "ada", PASSWORD).id
    create_account(any_ws, "bob", PASSWORD)
    lead = create_account(any_ws, "lea", PASSWORD).id
    added = assign_topics(any_ws, project, "citation", ["t1"], ["ada", "bob"], assigned_by=lead)
    assert added == 2
    # giving it again adds nothing; other modes are separate
    assert assign_topics(any_ws, project, "citation", ["t1"], ["ada"], assigned_by=lead) == 0
    assert assign_topics(any_ws, project, "report", ["t1"], ["ada"], assigned_by=lead) == 1
    rows = list_assignments(any_ws, project, mode="citation")
    assert [(r.topic_id, r.judge) for r in rows] == [("t1", "ada"), ("t1", "bob")]
    assert [r.mode for r in list_assignments(any_ws, project, judge_id=ada)] == [
        "citation",
        "report",
    ]
    assert unassign_topics(any_ws, project, "citation", ["t1"], ["bob"]) == 1
    assert [r.judge for r in list_assignments(any_ws, project, mode="citation")] == ["ada"]


def test_bad_assignments_are_refused_and_nothing_is_stored(
    any_ws: Workspace, project: Project
) -> None:
    lead = create_account(any_ws, "lea", PASSWORD).id
    create_account(any_ws, "ada", PASSWORD)
    with pytest.raises(InvalidInput, match="no judging topic 'nope'"):
        assign_topics(any_ws, project, "report", ["t1", "nope"], ["ada"], assigned_by=lead)
    with pytest.raises(InvalidInput, match="unknown judging mode 'votes'"):
        assign_topics(any_ws, project, "votes", ["t1"], ["ada"], assigned_by=lead)
    with pytest.raises(NotFound, match="nobody"):
        assign_topics(any_ws, project, "report", ["t1"], ["ada", "nobody"], assigned_by=lead)
    with pytest.raises(InvalidInput, match="no account named 'nobody'"):
        unassign_topics(any_ws, project, "report", ["t1"], ["nobody"])
    # in team mode a judge must be a member who may annotate
    create_account(any_ws, "root", PASSWORD, admin=True)
    viewer = create_account(any_ws, "vera", PASSWORD)
    set_role(any_ws, project.id, viewer.id, "viewer")
    set_team_mode(any_ws, True)
    with pytest.raises(InvalidInput, match="vera is a viewer"):
        assign_topics(any_ws, project, "report", ["t1"], ["vera"], assigned_by=lead)
    assert list_assignments(any_ws, project) == []


def test_a_judges_topics_come_first_on_the_overview(
    any_ws: Workspace, project: Project, tmp_path: Path
) -> None:
    _second_topic(any_ws, project, tmp_path)
    ada = create_account(any_ws, "ada", PASSWORD).id
    bob = create_account(any_ws, "bob", PASSWORD).id
    assign_topics(any_ws, project, "report", ["t2"], ["ada"], assigned_by=bob)
    mine = overview(any_ws, project, ada)["modes"]["reports"]
    assert [(t["topic_id"], t["assigned"]) for t in mine["topics"]] == [("t2", True), ("t1", False)]
    assert mine["assigned"] == 1 and mine["topics"][0]["judges"] == ["ada"]
    theirs = overview(any_ws, project, bob)["modes"]["reports"]
    assert [t["topic_id"] for t in theirs["topics"]] == ["t1", "t2"]  # import order
    assert overview(any_ws, project, ada)["modes"]["citations"]["assigned"] == 0

    page = client_of(any_ws, author="ada").get("/projects/ferries/judging?mode=reports").text
    assert "assigned to you" in page and "Given to: ada" in page


def test_the_cli_gives_lists_and_takes_back(ws: Workspace, tmp_path: Path) -> None:
    judging_project(ws, tmp_path)  # the CLI opens a workspace folder: a SQLite one here
    create_account(ws, "ada", PASSWORD)
    home = ["--home", str(ws.settings.home)]
    runner = CliRunner()
    base = [*home, "judge", "assign", "-p", "ferries", "--mode", "document"]
    given = runner.invoke(make_app(), [*base, "--topic", "t1", "--judge", "ada", "--json"])
    assert given.exit_code == 0, given.output
    assert json.loads(given.stdout) == {"added": 1}
    listed = runner.invoke(make_app(), [*home, "judge", "assign", "-p", "ferries", "--json"])
    assert json.loads(listed.stdout)["assignments"][0]["judge"] == "ada"
    wrong = runner.invoke(make_app(), [*base, "--topic", "t9", "--judge", "ada"])
    assert wrong.exit_code != 0 and "no judging topic 't9'" in wrong.output
    taken = runner.invoke(make_app(), [*base, "--topic", "t1", "--judge", "ada", "--remove"])
    assert taken.exit_code == 0 and "1 assignment(s) removed" in taken.stdout


def test_only_leads_assign_through_the_api(any_ws: Workspace, project: Project) -> None:
    create_account(any_ws, "root", PASSWORD, admin=True)
    for name, role in (("lea", "lead"), ("ann", "annotator")):
        account = create_account(any_ws, name, PASSWORD)
        set_role(any_ws, project.id, account.id, role)
    set_team_mode(any_ws, True)
    url = "/api/projects/ferries/judging/assignments"
    body = {"mode": "report", "topics": ["t1"], "judges": ["ann"]}
    answers = {}
    for name in ("ann", "lea"):
        client = client_of(any_ws)
        signed = client.post("/api/session", json={"username": name, "password": PASSWORD})
        assert signed.status_code == 200, signed.text
        client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
        answers[name] = client.post(url, json=body).status_code
    assert answers == {"ann": 403, "lea": 200}
    listed = client.get(url).json()["assignments"]
    assert [(a["topic_id"], a["judge"]) for a in listed] == [("t1", "ann")]
    assert client.post(url, json={**body, "topics": ["nope"]}).status_code == 422
    assert client.post(f"{url}/remove", json=body).json() == {"removed": 1}
