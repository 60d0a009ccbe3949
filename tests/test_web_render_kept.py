"""What pages keep per process (catalog messages picked by prefix, static file URLs) gives
the same page as working it out afresh."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from assay.store.projects import create_project
from assay.store.workspace import Workspace
from assay.web import create_app
from assay.web.i18n import load_catalogs, make_translators


def test_messages_by_prefix_in_the_language_with_english_where_missing() -> None:
    catalogs = load_catalogs()
    catalogs["de"] = {k: v for k, v in catalogs["de"].items() if k != "review.reject"}
    german = make_translators(catalogs)["de"]
    picked = german.starting("review.", "status.")
    expected = [k for k in catalogs["en"] if k.startswith(("review.", "status."))]
    assert list(picked) == expected
    assert (
        picked["status.draft"] == catalogs["de"]["status.draft"] != catalogs["en"]["status.draft"]
    )
    assert picked["review.reject"] == catalogs["en"]["review.reject"]  # no German: English
    picked.clear()  # the caller's copy: the next page gets them all again
    assert german.starting("review.", "status.") == {k: german(k) for k in expected}
    assert german.starting("no such prefix.") == {}


def test_static_urls_follow_the_host_the_page_was_asked_for(ws: Workspace) -> None:
    create_project(ws, "test", "en")
    app = create_app(ws)
    for base in ("http://127.0.0.1:8765", "http://localhost:8765", "http://127.0.0.1:8765"):
        page = TestClient(app, base_url=base).get("/projects/test/items/new")
        assert page.status_code == 200, page.text
        styles = re.findall(r'href="([^"]+\.css)"', page.text)
        assert styles and all(url.startswith(base + "/static/") for url in styles), styles
