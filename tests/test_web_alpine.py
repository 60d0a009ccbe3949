"""Alpine is loaded by the pages whose forms are Alpine components, and by no other page."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient

import assay.web
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app

TEMPLATES = Path(assay.web.__file__).parent / "templates"
ALPINE = "vendor/alpinejs-csp-"
DIRECTIVE = re.compile(r"\sx-data=")
INCLUDE = re.compile(r'{%\s*include\s+"([^"]+)"')


def uses_alpine(template: Path) -> bool:
    """The template, or a partial it includes, holds an Alpine component."""
    text = template.read_text(encoding="utf-8")
    parts = [TEMPLATES / name for name in INCLUDE.findall(text)]
    return bool(DIRECTIVE.search(text)) or any(uses_alpine(part) for part in parts)


def test_every_page_with_an_alpine_component_asks_for_alpine() -> None:
    pages = [t for t in TEMPLATES.glob("*.html") if not t.name.startswith("_")]
    with_alpine = {t.name for t in pages if uses_alpine(t)}
    asking = {t.name for t in pages if "{% set alpine = true %}" in t.read_text(encoding="utf-8")}
    assert with_alpine == asking
    assert with_alpine == {"projects.html", "project.html", "experiments.html", "experiment.html"}


def test_only_those_pages_load_alpine(ws: Workspace) -> None:
    create_project(ws, "ferries", "en")
    with TestClient(create_app(ws)) as client:
        for path in ("/", "/projects/ferries", "/projects/ferries/experiments"):
            page = client.get(path)
            assert page.status_code == 200 and ALPINE in page.text, path
        for path in (
            "/guide",
            "/projects/ferries/documents",
            "/projects/ferries/items",
            "/projects/ferries/conversations",
            "/projects/ferries/transfer",
        ):
            page = client.get(path)
            assert page.status_code == 200, path
            assert ALPINE not in page.text, f"{path} loads Alpine but uses none"
