"""The web edge: CSRF, Host allow-list, security headers, redirects, request bodies (size,
strict JSON, bounded numbers, uploads), error pages; and catalog parity."""

from __future__ import annotations

import json
import re
import string
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from assay.errors import InvalidInput
from assay.gold.items import create_item, get_item, save_item
from assay.records import Item, Turn
from assay.store.projects import create_project
from assay.store.schema import items, turns
from assay.store.settings import Settings
from assay.store.workspace import Workspace
from assay.web import create_app
from assay.web.headers import POLICY
from assay.web.i18n import LANGUAGES, load_catalogs


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
    for target in (
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example/x",
        "/\\/evil.example",
        "\\\\evil.example",
        "/\t/evil.example",
        "javascript:alert(1)",
        "evil.example",
    ):
        location = client.get("/language/en", params={"next": target}).headers["location"]
        assert location == "/", target


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


# ---------------------------------------------------------------- the edge (issue 9)


def client_for(ws: Workspace, base_url: str = "http://127.0.0.1:8765") -> TestClient:
    """A client with the CSRF cookie and header set, as the pages' scripts send them."""
    client = TestClient(create_app(ws), base_url=base_url, raise_server_exceptions=False)
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def test_unknown_host_names_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends ``Host: evil.example``."""
    monkeypatch.delenv("ASSAY_ALLOWED_HOSTS")
    workspace = Workspace.open(Settings(home=tmp_path / "ws"))
    try:
        client = TestClient(create_app(workspace), base_url="http://127.0.0.1:8765")
        for host in ("evil.example", "evil.example:8765", "127.0.0.1.evil.example", "testserver"):
            page = client.get("/", headers={"Host": host})
            assert page.status_code == 400 and "ASSAY_ALLOWED_HOSTS" in page.text, host
            api = client.get("/api/projects", headers={"Host": host})
            assert api.status_code == 400 and "ASSAY_ALLOWED_HOSTS" in api.json()["detail"]
        refused = client.post("/api/projects", json={"name": "p"}, headers={"Host": "evil.example"})
        assert refused.status_code == 400
        for host in ("127.0.0.1:8765", "localhost:1234", "LOCALHOST", "[::1]:8765", "127.0.0.1"):
            assert client.get("/api/projects", headers={"Host": host}).status_code == 200, host
    finally:
        workspace.close()


def test_configured_host_names_are_allowed(tmp_path: Path) -> None:
    settings = Settings(
        home=tmp_path / "ws", allowed_hosts="assay.example.org, lab.example:8443", host="10.0.0.5"
    )
    workspace = Workspace.open(settings)
    try:
        client = TestClient(create_app(workspace))
        for host in ("assay.example.org", "assay.example.org:80", "lab.example:8443", "10.0.0.5"):
            assert client.get("/api/projects", headers={"Host": host}).status_code == 200, host
        for host in ("lab.example", "lab.example:8444", "other.example.org"):
            assert client.get("/api/projects", headers={"Host": host}).status_code == 400, host
    finally:
        workspace.close()


EXPECTED_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
}


def test_every_response_carries_the_security_headers(ws: Workspace) -> None:
    client = client_for(ws)
    responses = [
        client.get("/"),
        client.get("/api/projects"),
        client.get("/static/app.js"),
        client.get("/projects/nope"),
        client.get("/no/such/page"),
        client.post("/api/projects", json={"name": "p"}, headers={"X-CSRF-Token": "wrong"}),
        client.get("/api/projects", headers={"Host": "evil.example"}),
    ]
    for response in responses:
        for name, value in EXPECTED_HEADERS.items():
            assert response.headers.get(name) == value, (response.url, name)
        policy = response.headers["content-security-policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert directives["script-src"] == "'self'"
        assert directives["frame-ancestors"] == "'none'"
        assert directives["object-src"] == "'none'"
        assert "unsafe" not in policy
    docs = client.get("/api/docs")  # Swagger UI, vendored: the same strict policy
    assert docs.headers["content-security-policy"] == POLICY


def test_templates_hold_no_inline_script() -> None:
    """The policy forbids inline script: pages keep code in static files, data in JSON islands."""
    from importlib import resources

    folder = resources.files("assay.web") / "templates"
    for template in folder.iterdir():
        text = template.read_text()
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag or 'type="application/json"' in tag, f"{template.name}: {tag}"
        assert not re.search(r"\son[a-z]+\s*=", text), f"{template.name}: inline event handler"
        assert "javascript:" not in text, template.name
        assert not re.search(r"\sstyle\s*=", text), f"{template.name}: inline style"


def test_unknown_pages_get_the_html_page_and_the_api_keeps_json(ws: Workspace) -> None:
    client = client_for(ws)
    page = client.get("/no/such/page")
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "There is no page at /no/such/page" in page.text
    german = client.get("/no/such/page", headers={"Accept-Language": "de"})
    assert "Unter /no/such/page gibt es keine Seite" in german.text
    api = client.get("/api/no/such/thing")
    assert api.status_code == 404 and api.json() == {"detail": "Not Found"}
    bad_page = client.get("/projects/x/items", params={"page": "abc"})
    assert bad_page.status_code == 422 and bad_page.headers["content-type"].startswith("text/html")


def test_json_bodies_must_be_strict(ws: Workspace) -> None:
    """NaN, Infinity, huge numbers, lone surrogates and deep nesting get 422 naming the place."""
    client = client_for(ws)
    client.post("/api/projects", json={"name": "p"})
    cases = {
        b'{"extra": {"score": NaN}}': "body.extra.score: NaN is not a finite number",
        b'{"extra": {"score": -Infinity}}': "-Infinity is not a finite number",
        b'{"extra": {"score": 1e999}}': "body.extra.score: 1e999 is too large a number",
        b'{"extra": {"n": 123456789012345678901234567890}}': "outside the 64-bit integer range",
        b'{"turns": [{"query": "\\ud800 alone"}]}': "body.turns.0.query: the text holds",
        b'{"extra": {"\\udfff": 1}}': "a key holds an unpaired",
        b'{"extra": ' + b"[" * 100 + b"]" * 100 + b"}": "nested more than 64 levels deep",
        b'{"notes": "\xff"}': "body: not valid UTF-8 text",
    }
    for body, expected in cases.items():
        for content_type in ("application/json", "application/merge-patch+json", None):
            headers = {"Content-Type": content_type} if content_type else {}
            response = client.post("/api/projects/p/items", content=body, headers=headers)
            assert response.status_code == 422, (body[:40], content_type)
            assert expected in response.json()["detail"], (body[:40], response.json())
    assert client.get("/api/projects/p/items").json()["total"] == 0  # nothing stored
    paired = client.post(  # a proper surrogate pair is one character (an emoji)
        "/api/projects/p/items",
        content=b'{"notes": "\\ud83d\\ude00 fine"}',
        headers={"Content-Type": "application/json"},
    )
    assert paired.status_code == 201 and paired.json()["item"]["notes"] == "\U0001f600 fine"


def test_request_bodies_are_bounded_while_they_arrive(tmp_path: Path) -> None:
    workspace = Workspace.open(Settings(home=tmp_path / "ws", max_body_mb=0.01))
    try:
        client = client_for(workspace)
        client.post("/api/projects", json={"name": "p"})
        big = {"notes": "x" * 20_000}
        declared = client.post("/api/projects/p/items", json=big)
        assert declared.status_code == 413
        assert "ASSAY_MAX_BODY_MB" in declared.json()["detail"]

        def chunks() -> object:  # no Content-Length: counted as it streams in
            yield b'{"notes": "'
            for _ in range(100):
                yield b"x" * 1000
            yield b'"}'

        streamed = client.post(
            "/api/projects/p/items",
            content=chunks(),  # type: ignore[arg-type]
            headers={"Content-Type": "application/json"},
        )
        assert streamed.status_code == 413
        assert client.get("/api/projects/p/items").json()["total"] == 0
        assert client.post("/api/projects/p/items", json={"notes": "short"}).status_code == 201
    finally:
        workspace.close()


def test_numbers_in_urls_and_bodies_are_bounded(ws: Workspace) -> None:
    client = client_for(ws)
    client.post("/api/projects", json={"name": "p"})
    item = client.post("/api/projects/p/items", json={"turns": [{"query": "q"}]}).json()["item"]
    huge = "180000000000000000000000000000"
    for url, params in [
        ("/api/projects/p/items", {"offset": huge}),
        ("/api/projects/p/documents", {"offset": huge}),
        ("/api/projects/p/conversations", {"offset": huge}),
        ("/projects/p/items", {"page": huge}),
        ("/projects/p/conversations", {"offset": huge}),
        (f"/projects/p/items/{item['id']}", {"pos": huge, "list": ""}),
    ]:
        assert client.get(url, params=params).status_code == 422, url
    for ref in ("³", "²⁵", huge, "9" * 5000):
        assert client.get(f"/api/projects/p/experiments/{ref}").status_code == 404, ref
        assert client.get(f"/projects/p/experiments/{ref}").status_code == 404, ref
    url = f"/api/projects/p/items/{item['id']}"
    for version in (2**63, 2**40, 2**31):
        saved = client.put(url, json={"version": version, "item": {"turns": [{"query": "q"}]}})
        assert saved.status_code == 422, version
    evidence = {"text": "x", "grade": 2**40}
    saved = client.put(url, json={"version": 1, "item": {"turns": [{"evidence": [evidence]}]}})
    assert saved.status_code == 422 and "grade" in saved.json()["detail"]


def test_malformed_uploads_get_400_and_long_names_a_clear_error(ws: Workspace) -> None:
    client = client_for(ws)
    client.post("/api/projects", json={"name": "p"})
    url = "/api/projects/p/documents"
    multipart = {"Content-Type": "multipart/form-data; boundary=xx"}
    garbage = client.post(url, content=b"garbage\r\n\r\n", headers=multipart)
    assert garbage.status_code == 400 and "multipart" in garbage.json()["detail"]
    unfinished = (
        b'--xx\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n'
        b"abc\r\n--xy--"
    )
    cut = client.post(url, content=unfinished, headers=multipart)
    assert cut.status_code == 400 and "closing multipart boundary" in cut.json()["detail"]
    for length in (300, 5_000, 50_000):
        name = "a" * length + ".txt"
        for target in (url, "/api/projects/p/transfer/imports"):
            refused = client.post(target, files={"file": (name, b"hello")}, data={"format": "x"})
            assert refused.status_code in (400, 422), (target, length)
            detail = refused.json()["detail"]
            assert "255 characters" in detail and name not in detail
    assert client.get(url).json()["total"] == 0


def test_nan_never_reaches_an_item_and_a_poisoned_item_still_opens(any_ws: Workspace) -> None:
    """Finding 6: NaN in a saved item broke the editor and turned stale saves into 500s."""
    project = create_project(any_ws, "p", "en")
    item = create_item(any_ws, project, Item(turns=[Turn(query="q")]))
    nan_extra = Item(extra={"score": float("nan")}, turns=[Turn(query="q")])
    with pytest.raises(InvalidInput, match=r"extra\.score is not a finite number"):
        save_item(any_ws, project, item.id, nan_extra, item.version)  # CLI and Python API
    inf_turn = Item(turns=[Turn(query="q", generation={"temperature": float("inf")})])
    with pytest.raises(InvalidInput, match=r"turn 1: generation\.temperature"):
        create_item(any_ws, project, inf_turn)

    client = client_for(any_ws)
    url = f"/api/projects/p/items/{item.id}"
    body = b'{"version": 1, "item": {"extra": {"score": NaN}, "turns": [{"query": "q"}]}}'
    refused = client.put(url, content=body, headers={"Content-Type": "application/json"})
    assert refused.status_code == 422 and "body.item.extra.score" in refused.json()["detail"]
    assert get_item(any_ws, project, item.id).version == 1

    if any_ws.engine.dialect.name == "sqlite":  # what an earlier version could store
        with any_ws.engine.begin() as conn:
            conn.execute(items.update().values(extra={"score": float("nan")}))
            conn.execute(turns.update().values(generation={"t": float("inf")}))
    page = client.get(f"/projects/p/items/{item.id}")
    assert page.status_code == 200
    island = re.search(r'id="editor-data">(.*?)</script>', page.text, re.S)
    assert island is not None
    data = json.loads(island.group(1), parse_constant=lambda c: pytest.fail(f"{c} in page"))
    assert data["item"]["id"] == item.id
    assert client.get(url).status_code == 200
    assert client.get(f"{url}/events").status_code == 200

    saved = client.put(url, json={"version": 1, "item": {"notes": "fixed", "turns": [{}]}})
    assert saved.status_code == 200 and saved.json()["item"]["version"] == 2
    stale = client.put(url, json={"version": 1, "item": {"notes": "late", "turns": [{}]}})
    assert stale.status_code == 409 and stale.json()["current"]["notes"] == "fixed"
    assert get_item(any_ws, project, item.id).notes == "fixed"


def test_error_messages_show_no_server_paths(ws: Workspace) -> None:
    """Finding 9: a failed import named the file by its absolute path under the workspace."""
    client = client_for(ws)
    client.post("/api/projects", json={"name": "p"})
    home = str(ws.settings.home.resolve())
    shown: list[str] = []
    for format_name, name, data in [
        ("ragaphene", "talks.json", b'{"broken": '),
        ("mtrag", "turns.jsonl", b'{"x": 1}\n{bad'),
        ("beir", "folder.zip", b"not a zip"),
        ("native", "gold.zip", b""),
    ]:
        started = client.post(
            "/api/projects/p/transfer/imports",
            files={"file": (name, data)},
            data={"format": format_name},
        )
        assert started.status_code == 202, started.text
        job_url = f"/api/projects/p/transfer/jobs/{started.json()['id']}"
        job = client.get(job_url).json()
        while job["state"] == "running":
            time.sleep(0.02)
            job = client.get(job_url).json()
        assert job["state"] == "failed"
        assert home not in job["message"] and "/imports/" not in job["message"], job["message"]
        assert name in job["message"], job["message"]
        shown.append(job["message"])
    assert len(shown) == 4
