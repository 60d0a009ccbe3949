"""The API's description: every operation has our summary and a description; the API docs
page, the favicon and the footer that links them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.people.accounts import create_account
from assay.people.mode import set_team_mode
from assay.store.workspace import Workspace
from assay.web import create_app
from assay.web.openapi_text import DESCRIPTIONS, SUMMARIES


@pytest.fixture
def client(ws: Workspace) -> Iterator[TestClient]:
    with TestClient(create_app(ws)) as c:
        yield c


def operations(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        f"{method.upper()} {path}": operation
        for path, methods in spec["paths"].items()
        for method, operation in methods.items()
    }


def test_every_operation_has_our_summary_and_a_description(client: TestClient) -> None:
    found = operations(client.get("/api/openapi.json").json())
    assert len(found) > 90
    assert [key for key, op in found.items() if not op.get("tags")] == []  # no "default"
    assert sorted(set(found) - set(SUMMARIES)) == [], "write a summary in web/openapi_text.py"
    assert sorted(set(SUMMARIES) - set(found)) == [], "a summary for no operation: remove it"
    stale = sorted(key for key in DESCRIPTIONS if key not in found)
    assert stale == []
    for key, operation in found.items():
        summary = operation.get("summary", "")
        assert summary == SUMMARIES[key], key
        assert 3 < len(summary) <= 60 and not summary.endswith("."), key
        assert not summary.startswith("Api "), key  # FastAPI's title-cased function name
        assert len(operation.get("description", "")) >= 20, f"{key}: describe it"


def test_every_schema_has_a_name_of_its_own(client: TestClient) -> None:
    """Two request bodies with one class name show twice under one title in the docs, and
    FastAPI names them after their module path: a reader cannot tell them apart."""
    schemas = client.get("/api/openapi.json").json()["components"]["schemas"]
    titles = [schema.get("title") for schema in schemas.values()]
    assert sorted({title for title in titles if titles.count(title) > 1}) == []
    assert [key for key in schemas if "__" in key] == []


def test_api_docs_are_served_from_here_under_the_site_policy(client: TestClient) -> None:
    page = client.get("/api/docs")
    assert page.status_code == 200
    policy = page.headers["content-security-policy"]
    assert "script-src 'self';" in policy and "http" not in policy and "sha256" not in policy
    html = page.text
    assert "<script>" not in html and "cdn" not in html.lower()
    here = "http://testserver/"  # url_for writes the server's own address
    sources = [s.removeprefix(here[:-1]) for s in re.findall(r'(?:src|href)="([^"]+)"', html)]
    assert sources and all(s.startswith(("/", "#")) for s in sources), sources
    for asset in ("vendor/swagger-ui-bundle-5.35.0.js", "vendor/swagger-ui-5.35.0.css"):
        assert f"/static/{asset}" in sources
        assert client.get(f"/static/{asset}").status_code == 200
    assert 'data-spec="/api/openapi.json"' in html
    german = client.get("/api/docs", headers={"Accept-Language": "de"}).text
    assert "API-Dokumentation" in german and "API documentation" not in german


def test_every_page_links_the_api_docs_and_has_an_icon(client: TestClient) -> None:
    client.get("/")
    token = client.cookies.get("assay_csrf", "")
    client.post("/api/projects", json={"name": "p"}, headers={"X-CSRF-Token": token})
    for path in ("/", "/projects/p", "/projects/p/documents", "/guide", "/no/such/page"):
        html = client.get(path).text
        assert 'href="/api/docs"' in html, path
        assert re.search(r'rel="icon" href="[^"]*/static/favicon.svg"', html), path
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200
    assert icon.headers["content-type"].startswith("image/svg+xml")
    assert (
        icon.content.startswith(b"<svg")
        and icon.content == client.get("/static/favicon.svg").content
    )


def test_the_icon_needs_no_sign_in_in_team_mode(ws: Workspace, tmp_path: Path) -> None:
    create_account(ws, "ana", "a long enough password", admin=True)
    set_team_mode(ws, True)
    with TestClient(create_app(ws)) as client:
        assert client.get("/favicon.ico").status_code == 200
        assert client.get("/api/docs", follow_redirects=False).status_code == 401
