"""The guide: its pictures (served by the app, so they work offline), and its place inside a
project, where the project's menu stays."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import assay.web
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app
from assay.web.routes.guide import PICTURE, guide_source, render_markdown

PICTURES = Path(assay.web.__file__).parent / "static" / "guide"


@pytest.mark.parametrize("lang", ["en", "de"])
def test_every_picture_of_the_guide_is_shipped(lang: str) -> None:
    names = [m.group(2) for m in map(PICTURE.match, guide_source(lang).splitlines()) if m]
    assert len(names) >= 6, "the guide shows the main pages"
    for name in names:
        assert (PICTURES / name).is_file(), f"{name}: run scripts/screenshots.py"
    if lang == "de":
        assert all(name.endswith("-de.jpg") for name in names)  # German pictures


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_guide_covers_the_workbench(lang: str) -> None:
    headings = re.findall(r"^# (.+)$", guide_source(lang), re.MULTILINE)
    wanted = {
        "en": {"Conversations", "Review", "Experiments", "Formats: import and export"},
        "de": {"Gespräche", "Prüfung", "Experimente", "Formate: Import und Export"},
    }[lang]
    assert wanted <= set(headings)


def test_a_picture_is_a_figure_with_its_caption_escaped() -> None:
    html = str(render_markdown('![The <b>editor</b> & "hits"](item-editor.jpg)'))
    assert html == (
        '<figure><img src="/static/guide/item-editor.jpg" alt="The &lt;b&gt;editor&lt;/b&gt; '
        '&amp; &#34;hits&#34;" loading="lazy"><figcaption>The &lt;b&gt;editor&lt;/b&gt; &amp; '
        "&#34;hits&#34;</figcaption></figure>"
    )
    # anything but a plain file name stays text
    for line in ("![x](../../secret.png)", "![x](https://example.org/a.png)", "![x](a.svg)"):
        assert "<img" not in str(render_markdown(line)), line


def test_the_guide_inside_a_project_keeps_its_menu(ws: Workspace) -> None:
    create_project(ws, "ferries", "en")
    with TestClient(create_app(ws)) as client:
        page = client.get("/projects/ferries/guide").text
        assert "Guide for annotators" in page
        assert 'href="/projects/ferries/documents"' in page  # the project's menu
        assert 'href="/projects/ferries/guide" aria-current="page"' in page
        project = client.get("/projects/ferries").text
        assert 'href="/projects/ferries/guide"' in project  # menu and shortcut lead there
        assert 'href="/guide"' not in project
        outside = client.get("/guide").text
        assert 'href="/projects/ferries/documents"' not in outside
        assert client.get("/projects/nope/guide").status_code == 404
        picture = client.get("/static/guide/item-editor.jpg")
        assert picture.status_code == 200 and picture.headers["content-type"] == "image/jpeg"


def test_an_empty_project_offers_upload_first(ws: Workspace) -> None:
    create_project(ws, "empty", "en")
    with TestClient(create_app(ws)) as client:
        page = client.get("/projects/empty").text
        buttons = re.findall(r'<a class="button( secondary)?" href="([^"]+)"', page)
        assert buttons[0] == ("", "/projects/empty/documents")
        primary = [href for secondary, href in buttons if not secondary]
        assert primary == ["/projects/empty/documents"]
