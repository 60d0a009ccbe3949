"""The dashboard page and its JSON twin (web.routes.dashboard), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from assay.cli import make_app
from assay.records import to_json
from assay.review.dashboard import dashboard
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app
from tests.test_review_dashboard import _seed

PLOTS = ("dash-funnel", "dash-types", "dash-throughput", "dash-time", "dash-agreement",
         "dash-llm", "dash-coverage")  # fmt: skip


def test_the_json_twin_holds_the_figures_the_page_draws(any_ws: Workspace) -> None:
    project, seeded = _seed(any_ws)
    client = TestClient(create_app(any_ws))

    answer = client.get("/api/projects/dash/dashboard", params={"days": 7})
    assert answer.status_code == 200
    body = answer.json()
    expected = to_json(dashboard(any_ws, project, days=7))
    assert {k: v for k, v in body.items() if k != "generated_at"} == {
        k: v for k, v in expected.items() if k != "generated_at"
    }

    page = client.get("/projects/dash/dashboard")
    assert page.status_code == 200
    html = page.text
    for plot in PLOTS[:2] + PLOTS[-1:]:  # the seeded times are long past: no recent work
        svg = re.search(rf'<svg [^>]*id="{plot}"[^>]*>(.*?)</svg>', html, re.S)
        assert svg, plot
        assert f'<title id="{plot}-t">' in svg.group(1) and f'<desc id="{plot}-d">' in svg.group(1)
    assert html.count("<details>") >= 6  # each plot's data table
    d3 = seeded["docs"][2]
    assert f'href="/projects/dash/documents/{d3}">d3.txt</a>' in html


def test_the_page_in_german_and_an_empty_project(ws: Workspace) -> None:
    create_project(ws, "leer")
    client = TestClient(create_app(ws))
    html = client.get("/projects/leer/dashboard", headers={"accept-language": "de"}).text
    assert "<h1>Übersicht</h1>" in html
    assert "Noch keine überlappende Arbeit und keine Prüfungen." in html
    assert "Noch keine Dokumente." in html
    assert "<svg" not in html  # empty states, not empty plots


@pytest.mark.parametrize("days", ["0", "367", "x"])
def test_a_bad_window_is_a_clear_422(ws: Workspace, days: str) -> None:
    create_project(ws, "p")
    client = TestClient(create_app(ws))
    answer = client.get("/api/projects/p/dashboard", params={"days": days})
    assert answer.status_code == 422 and "days" in answer.json()["detail"]


def test_an_unknown_project_is_404(ws: Workspace) -> None:
    client = TestClient(create_app(ws))
    assert client.get("/api/projects/nope/dashboard").status_code == 404


def test_the_project_page_links_the_dashboard(ws: Workspace) -> None:
    create_project(ws, "p")
    html = TestClient(create_app(ws)).get("/projects/p").text
    assert 'href="/projects/p/dashboard"' in html


def test_the_cli_prints_the_figures_or_their_json(ws: Workspace) -> None:
    _seed(ws)
    home = str(ws.settings.home)
    runner = CliRunner()
    as_json = runner.invoke(make_app(), ["--home", home, "dashboard", "-p", "dash", "--json"])
    assert as_json.exit_code == 0, as_json.output
    body = json.loads(as_json.output)
    assert body["funnel"]["copies"] == 4 and body["coverage"]["uncovered"] == 1
    shown = runner.invoke(make_app(), ["--home", home, "dashboard", "-p", "dash"])
    assert shown.exit_code == 0, shown.output
    assert "created 6 → submitted 4 → accepted 2 / rejected 1" in shown.output
    assert "no questions: d3.txt" in shown.output
    refused = runner.invoke(make_app(), ["--home", home, "dashboard", "-p", "dash", "--days", "0"])
    assert refused.exit_code == 2 and "--days" in refused.output
