"""CSRF protection, safe redirects and catalog parity for the web app."""

from __future__ import annotations

import re
import string

from fastapi.testclient import TestClient

from assay.web import create_app
from assay.web.i18n import LANGUAGES, load_catalogs
from assay.workspace import Workspace


def test_state_changing_requests_need_the_csrf_token(ws: Workspace) -> None:
    client = TestClient(create_app(ws))
    refused = client.post("/api/projects", json={"name": "p"})
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["detail"]
    assert client.get("/api/projects").json() == []  # nothing was created

    client.get("/")  # sets the token cookie
    token = client.cookies["assay_csrf"]
    wrong = client.post("/api/projects", json={"name": "p"}, headers={"X-CSRF-Token": "x" + token})
    assert wrong.status_code == 403
    cross = client.post(
        "/api/projects",
        json={"name": "p"},
        headers={"X-CSRF-Token": token, "Origin": "https://evil.example"},
    )
    assert cross.status_code == 403 and "cross-site" in cross.json()["detail"]
    ok = client.post("/api/projects", json={"name": "p"}, headers={"X-CSRF-Token": token})
    assert ok.status_code == 201 and ok.json()["name"] == "p"


def test_language_switch_sets_a_cookie_and_only_redirects_locally(ws: Workspace) -> None:
    client = TestClient(create_app(ws), follow_redirects=False)
    switched = client.get("/language/de", params={"next": "/projects/x?a=1"})
    assert switched.status_code == 303 and switched.headers["location"] == "/projects/x?a=1"
    assert client.cookies["assay_lang"] == "de"
    page = client.get("/")
    assert '<html lang="de">' in page.text and "Projekte" in page.text
    for target in ("https://evil.example/", "//evil.example/x"):
        assert client.get("/language/en", params={"next": target}).headers["location"] == "/"


def test_browser_language_is_detected(ws: Workspace) -> None:
    client = TestClient(create_app(ws))
    page = client.get("/", headers={"Accept-Language": "de-DE,de;q=0.9,en;q=0.8"})
    assert '<html lang="de">' in page.text


def test_catalogs_have_the_same_keys_and_placeholders() -> None:
    catalogs = load_catalogs()
    assert set(catalogs) == set(LANGUAGES)
    english = catalogs["en"]
    for language, messages in catalogs.items():
        assert set(messages) == set(english), f"{language}: keys differ from English"
        for key, text in messages.items():
            fields = {f for _, f, _, _ in string.Formatter().parse(text) if f}
            expected = {f for _, f, _, _ in string.Formatter().parse(english[key]) if f}
            assert fields == expected, f"{language}:{key} placeholders differ"
            assert text.strip(), f"{language}:{key} is empty"


def test_templates_use_only_known_message_keys() -> None:
    from importlib import resources

    english = load_catalogs()["en"]
    folder = resources.files("assay.web") / "templates"
    for template in folder.iterdir():
        if not template.name.endswith(".html"):
            continue
        for key in re.findall(r"_\('([a-z0-9_.]+)'", template.read_text()):
            if not key.endswith("."):  # prefixes such as 'status.' ~ value are built at render time
                assert key in english, f"{template.name}: unknown message {key}"
