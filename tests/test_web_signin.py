"""Signing in on the web, sessions and tokens on requests, and the access guard (team mode);
personal mode unchanged. On SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from assay.people.accounts import create_account, set_disabled
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.tokens import create_token
from assay.store.db import utcnow
from assay.store.projects import create_project, get_project
from assay.store.schema import api_tokens
from assay.store.workspace import Workspace
from assay.web import create_app
from assay.web.login_limit import LoginLimiter
from assay.web.route_actions import missing_rules

PASSWORD = "correct horse battery"


def browser(ws: Workspace, base_url: str = "http://testserver") -> TestClient:
    """A client with the CSRF cookie and header, as the pages' scripts send them."""
    client = TestClient(create_app(ws), base_url=base_url, follow_redirects=False)
    client.get("/api/session")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    return client


def sign_in(client: TestClient, username: str, password: str = PASSWORD, **extra: str):  # type: ignore[no-untyped-def]
    return client.post("/api/session", json={"username": username, "password": password, **extra})


@pytest.fixture
def team(any_ws: Workspace) -> Workspace:
    """Team mode with an admin (root), a project p, and bob as its annotator."""
    create_account(any_ws, "root", PASSWORD, admin=True)
    bob = create_account(any_ws, "bob", PASSWORD)
    project = create_project(any_ws, "p", "en")
    set_role(any_ws, project.id, bob.id, "annotator")
    set_team_mode(any_ws, True)
    return any_ws


def test_personal_mode_needs_no_sign_in(ws: Workspace) -> None:
    create_project(ws, "p", "en")
    client = browser(ws)
    assert client.get("/").status_code == 200
    assert client.get("/api/projects/p/items").status_code == 200
    home = client.get("/projects/p").text
    assert 'id="members"' not in home and 'id="author-form"' in home  # as before
    assert client.get("/api/session").json() == {"mode": "personal", "username": "local"}
    assert client.get("/login?next=/projects/p").headers["location"] == "/projects/p"
    assert sign_in(client, "local", "").status_code == 409


def test_team_mode_asks_pages_to_sign_in_and_the_api_for_a_token(team: Workspace) -> None:
    client = browser(team)
    page = client.get("/projects/p/items?status=draft")
    assert page.status_code == 303
    assert page.headers["location"] == "/login?next=%2Fprojects%2Fp%2Fitems%3Fstatus%3Ddraft"
    api = client.get("/api/projects/p/items")
    assert api.status_code == 401 and api.headers["www-authenticate"] == "Bearer"
    assert "sign in first" in api.json()["detail"]
    login = client.get("/login")
    assert login.status_code == 200 and 'id="signin-form"' in login.text
    german = client.get("/login", headers={"accept-language": "de"})
    assert "Anmelden" in german.text and "Benutzername" in german.text
    assert client.get("/api/session").json() == {"mode": "team", "username": None}


def test_sign_in_sets_a_safe_new_session_cookie(team: Workspace) -> None:
    client = browser(team)
    client.cookies.set("assay_session", "planted-by-an-attacker", domain="testserver.local")
    answer = sign_in(client, "Bob", next="//evil.example/x")
    assert answer.status_code == 200
    assert answer.json() == {"username": "bob", "next": "/"}  # no open redirect
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # plain http on loopback
    secret = client.cookies["assay_session"]
    assert secret != "planted-by-an-attacker" and len(secret) >= 40
    assert client.get("/api/session").json()["username"] == "bob"
    assert client.get("/api/projects/p/items").json()["total"] == 0  # annotator: own items only
    assert client.get("/api/projects/p").status_code == 200
    https = browser(team, "https://testserver")
    assert "Secure" in sign_in(https, "bob").headers["set-cookie"]


def test_signing_in_and_out_needs_the_csrf_token(team: Workspace) -> None:
    client = TestClient(create_app(team), follow_redirects=False)
    refused = sign_in(client, "bob")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    client = browser(team)
    sign_in(client, "bob")
    del client.headers["X-CSRF-Token"]
    assert client.delete("/api/session").status_code == 403
    assert client.get("/api/session").json()["username"] == "bob"


def test_sign_out_ends_the_session_on_the_server(team: Workspace) -> None:
    client = browser(team)
    sign_in(client, "bob")
    secret = client.cookies["assay_session"]
    assert client.delete("/api/session").status_code == 204
    replay = browser(team)
    replay.cookies.set("assay_session", secret, domain="testserver.local")
    assert replay.get("/api/projects/p").status_code == 401


def test_wrong_unknown_locked(team: Workspace) -> None:
    client = browser(team)
    wrong = sign_in(client, "bob", "not the password")
    unknown = sign_in(client, "mallory", PASSWORD)
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json()["code"] == unknown.json()["code"] == "wrong"
    assert wrong.json()["detail"] == unknown.json()["detail"] == "wrong user name or password"
    for _ in range(team.settings.login_max_failures - 1):
        sign_in(client, "bob", "not the password")
    locked = sign_in(client, "bob")
    assert locked.status_code == 401 and locked.json()["code"] == "locked"
    assert len(locked.json()["until"]) == 5


def test_too_many_failures_from_one_address(team: Workspace) -> None:
    client = browser(team)
    assert all(sign_in(client, "bob").status_code == 200 for _ in range(12))  # not counted
    codes = [sign_in(client, f"user{n}", "whatever password").status_code for n in range(11)]
    assert codes == [401] * 10 + [429]
    refused = sign_in(client, "bob")
    assert refused.json()["code"] == "too_many" and refused.headers["retry-after"] == "60"


def test_the_limiter_forgets_after_its_window() -> None:
    limiter = LoginLimiter(attempts=2, window=60)
    limiter.failed("a", now=0)
    limiter.failed("a", now=30)
    assert not limiter.allow("a", now=59) and limiter.allow("b", now=59)
    assert limiter.allow("a", now=61)  # the first failure has expired


def test_a_disabled_user_is_thrown_out_on_the_next_request(team: Workspace) -> None:
    client = browser(team)
    sign_in(client, "bob")
    assert client.get("/projects/p").status_code == 200
    set_disabled(team, "bob")
    assert client.get("/projects/p").status_code == 303
    assert sign_in(client, "bob").json()["code"] == "disabled"


def test_roles_decide_what_a_member_may_do(team: Workspace) -> None:
    client = browser(team)
    sign_in(client, "bob")
    settings = client.put("/api/projects/p/settings", json={"query_types": None})
    assert settings.status_code == 403
    assert "bob may not change the project's settings in project 'p'" in settings.json()["detail"]
    created = client.post("/api/projects", json={"name": "mine"})
    assert created.status_code == 403 and "only workspace admins" in created.json()["detail"]
    admin = browser(team)
    sign_in(admin, "root")
    assert admin.put("/api/projects/p/settings", json={"query_types": None}).status_code == 200
    outsider = create_account(team, "eve", PASSWORD)
    stranger = browser(team)
    sign_in(stranger, "eve")
    assert stranger.get("/projects/p").status_code == 403
    assert outsider.id


def test_tokens_on_requests(team: Workspace) -> None:
    bob_id = next(a.id for a in [create_account(team, "carol", PASSWORD)])
    project = create_project(team, "q", "en")
    set_role(team, project.id, bob_id, "lead")
    read, _ = create_token(team, bob_id, "dash", "read")
    write, _ = create_token(team, bob_id, "ci", "write")
    expired, old = create_token(team, bob_id, "old", "write")
    with team.engine.begin() as conn:
        conn.execute(
            api_tokens.update()
            .where(api_tokens.c.id == old.id)
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    api = TestClient(create_app(team))  # no cookies: scripts send only the token

    def call(method: str, url: str, token: str, **kw):  # type: ignore[no-untyped-def]
        return api.request(method, url, headers={"Authorization": f"Bearer {token}"}, **kw)

    assert call("GET", "/api/projects/q/items", read).status_code == 200
    refused = call("PUT", "/api/projects/q/settings", read, json={"query_types": None})
    assert refused.status_code == 403 and "may only read" in refused.json()["detail"]
    assert call("GET", "/api/projects/p/items", write).status_code == 403  # not a member of p
    assert "is expired" in call("GET", "/api/projects/q", expired).json()["detail"]
    assert call("GET", "/api/projects/q", "assay_made-up").status_code == 401
    basic = api.get("/api/projects/q", headers={"Authorization": "Basic Ym9iOng="})
    assert basic.status_code == 401 and "Bearer" in basic.json()["detail"]


def test_every_writing_route_has_an_access_rule(ws: Workspace) -> None:
    app = create_app(ws)
    routes = [
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        for method in operations
    ]
    assert len(routes) > 50
    assert missing_rules(routes) == []
    assert missing_rules([("POST", "/api/projects/{name}/new-thing")]) == [
        "POST /api/projects/{name}/new-thing"
    ]


def test_a_trusted_proxy_signs_users_in(team: Workspace) -> None:
    trusted = team.settings.model_copy(
        update={"trusted_user_header": "X-Remote-User", "trusted_proxies": "10.0.0.0/8"}
    )
    behind = replace(team, settings=trusted)
    proxy = TestClient(create_app(behind), client=("10.0.0.5", 50000))
    assert proxy.get("/api/session", headers={"X-Remote-User": "bob"}).json()["username"] == "bob"
    assert proxy.get("/api/projects/p", headers={"X-Remote-User": "Bob"}).status_code == 200
    unknown = proxy.get("/api/projects/p", headers={"X-Remote-User": "mallory"})
    assert unknown.status_code == 401 and "'mallory': no such account" in unknown.json()["detail"]
    assert proxy.get("/api/projects/p").status_code == 401  # no header: sign in as usual
    elsewhere = TestClient(create_app(behind), client=("192.0.2.7", 50000))
    spoofed = elsewhere.get("/api/projects/p", headers={"X-Remote-User": "root"})
    assert spoofed.status_code == 401  # only the proxy may name the user


def test_trusted_proxies_must_be_addresses() -> None:
    from pydantic import ValidationError

    from assay.store.settings import Settings

    with pytest.raises(ValidationError, match=r"'proxy\.local' is not an IP address or network"):
        Settings(trusted_proxies="127.0.0.1, proxy.local")


def test_host_and_origin_are_checked_in_team_mode(team: Workspace) -> None:
    client = browser(team)
    assert client.get("/login", headers={"host": "evil.example"}).status_code == 400
    cross = client.post(
        "/api/session",
        json={"username": "bob", "password": PASSWORD},
        headers={"origin": "http://evil.example"},
    )
    assert cross.status_code == 403 and "cross-site" in cross.json()["detail"]


def test_the_client_address_comes_from_x_forwarded_for_only_behind_a_trusted_proxy(
    team: Workspace,
) -> None:
    trusted = team.settings.model_copy(update={"trusted_proxies": "10.0.0.5"})
    behind = replace(team, settings=trusted)
    via_proxy = browser_at(behind, ("10.0.0.5", 1))
    direct = browser_at(behind, ("192.0.2.7", 1))
    for n in range(10):  # ten clients behind the proxy do not share one budget
        forwarded = {"x-forwarded-for": f"203.0.113.{n}"}
        assert sign_in_with(via_proxy, forwarded).status_code == 401
    spoof = [sign_in_with(direct, {"x-forwarded-for": f"198.51.100.{n}"}) for n in range(11)]
    assert spoof[-1].status_code == 429  # a direct client cannot pick its address


def browser_at(ws: Workspace, client: tuple[str, int]) -> TestClient:
    app_client = TestClient(create_app(ws), client=client)
    app_client.get("/api/session")
    app_client.headers["X-CSRF-Token"] = app_client.cookies["assay_csrf"]
    return app_client


def sign_in_with(client: TestClient, headers: dict[str, str]):  # type: ignore[no-untyped-def]
    body = {"username": "bob", "password": "not the password"}
    return client.post("/api/session", json=body, headers=headers)


def test_https_at_a_trusted_proxy_makes_the_cookie_secure(team: Workspace) -> None:
    behind = replace(team, settings=team.settings.model_copy(update={"trusted_proxies": "::1"}))
    https = {"x-forwarded-proto": "https"}
    proxy = browser_at(behind, ("::1", 1))
    assert (
        "Secure"
        in proxy.post(
            "/api/session", json={"username": "bob", "password": PASSWORD}, headers=https
        ).headers["set-cookie"]
    )
    direct = browser_at(behind, ("192.0.2.7", 1))
    assert (
        "Secure"
        not in direct.post(
            "/api/session", json={"username": "bob", "password": PASSWORD}, headers=https
        ).headers["set-cookie"]
    )


def test_members_are_listed_and_changed_by_owners(team: Workspace) -> None:
    create_project(team, "hidden", "en")
    bob = browser(team)
    sign_in(bob, "bob")
    assert [p["name"] for p in bob.get("/api/projects").json()] == ["p"]  # member of p only
    assert bob.get("/api/projects/p/members").json() == [
        {"username": "bob", "display_name": "bob", "role": "annotator", "disabled": False}
    ]
    refused = bob.put("/api/projects/p/members/bob", json={"role": "owner"})
    assert refused.status_code == 403 and "manage the project's members" in refused.json()["detail"]
    root = browser(team)
    sign_in(root, "root")
    assert [p["name"] for p in root.get("/api/projects").json()] == ["hidden", "p"]
    changed = root.put("/api/projects/p/members/bob", json={"role": "owner"})
    assert changed.status_code == 200 and changed.json()[0]["role"] == "owner"
    assert bob.put("/api/projects/p/members/root", json={"role": "viewer"}).status_code == 200
    last = bob.delete("/api/projects/p/members/bob")
    assert last.status_code == 409 and "only owner" in last.json()["detail"]
    assert bob.delete("/api/projects/p/members/root").status_code == 204
    assert root.put("/api/projects/p/members/nobody", json={"role": "viewer"}).status_code == 404
    bad = root.put("/api/projects/p/members/bob", json={"role": "boss"})
    assert bad.status_code == 422


def test_annotators_write_and_open_their_own_items_only(team: Workspace) -> None:
    bob = browser(team)
    sign_in(bob, "bob")
    assert bob.get("/projects/p/items/new").status_code == 200  # the editor to write one
    created = bob.post("/api/projects/p/items", json={"turns": [{"query": "Who pays?"}]})
    assert created.status_code == 201, created.text
    mine = created.json()["item"]
    assert mine["author"] == "bob"  # the account, not a typed name
    assert bob.get(f"/api/projects/p/items/{mine['id']}").status_code == 200
    assert bob.get(f"/projects/p/items/{mine['id']}").status_code == 200
    root = browser(team)
    sign_in(root, "root")
    theirs = root.post("/api/projects/p/items", json={"turns": [{"query": "Who?"}]}).json()
    other = theirs["item"]["id"]
    assert bob.get(f"/api/projects/p/items/{other}").status_code == 403
    assert bob.delete(f"/api/projects/p/items/{other}").status_code == 403
    # bob's lists hold his own items only, whatever the author filter says
    listed = bob.get("/api/projects/p/items", params={"author": "root"}).json()
    assert (listed["total"], [i["id"] for i in listed["items"]]) == (1, [mine["id"]])
    page = bob.get("/projects/p/items")
    assert page.status_code == 200 and mine["id"] in page.text and other not in page.text
    assert bob.get("/api/projects/p/conversations").json()["total"] == 0
    # a project that lets annotators see all items shows them everything; only an owner or a
    # lead may say so, with true or false
    see_all = "/api/projects/p/settings"
    assert bob.put(see_all, json={"annotators_see_all": True}).status_code == 403
    refused = root.put(see_all, json={"annotators_see_all": "yes"})
    assert refused.status_code == 422 and "annotators_see_all" in refused.text
    assert root.put(see_all, json={"annotators_see_all": True}).status_code == 200
    assert get_project(team, "p").settings["annotators_see_all"] is True
    assert bob.get("/api/projects/p/items").json()["total"] == 2
    assert root.put(see_all, json={"annotators_see_all": None}).status_code == 200
    assert bob.get("/api/projects/p/items").json()["total"] == 1


def test_an_import_aimed_at_another_project_is_checked_there(team: Workspace) -> None:
    """The guard checks the project of the URL; the upload's ``project`` field is checked too:
    ``import`` in an existing project, ``project.create`` for a new one."""
    lena = create_account(team, "lena", PASSWORD)
    mine = create_project(team, "mine", "en")
    set_role(team, mine.id, lena.id, "lead")
    token, _ = create_token(team, lena.id, "ci", "write")
    # as a context manager: the app's job threads stop (the accepted import ends) before
    # the test's database goes away
    with TestClient(create_app(team)) as api:

        def upload(target: str):  # type: ignore[no-untyped-def]
            return api.post(
                "/api/projects/mine/transfer/imports",
                headers={"Authorization": f"Bearer {token}"},
                data={"format": "csv", "project": target},
                files={"file": ("items.csv", b"query,answer\nq?,a.\n", "text/csv")},
            )

        other = upload("p")  # lena is no member of p
        assert other.status_code == 403
        assert "may not import data in project 'p'" in other.json()["detail"]
        new = upload("brand-new")
        assert new.status_code == 403 and "may not create projects" in new.json()["detail"]
        assert upload("mine").status_code == 202


def test_a_reviewer_corrects_the_answer_but_not_the_question(team: Workspace) -> None:
    rita = create_account(team, "rita", PASSWORD)
    project = get_project(team, "p")
    set_role(team, project.id, rita.id, "reviewer")
    root = browser(team)
    sign_in(root, "root")
    item = root.post(
        "/api/projects/p/items", json={"turns": [{"query": "Who pays?", "answer": "HR."}]}
    ).json()["item"]
    reviewer = browser(team)
    sign_in(reviewer, "rita")
    url = f"/api/projects/p/items/{item['id']}"

    def save(query: str, answer: str, version: int):  # type: ignore[no-untyped-def]
        body = {"turns": [{"query": query, "answer": answer}]}
        return reviewer.put(url, json={"version": version, "item": body})

    asked = save("Who pays the hotel?", "HR.", 1)
    assert asked.status_code == 403 and "change an item's question" in asked.json()["detail"]
    corrected = save("Who pays?", "The travel office.", 1)
    assert corrected.status_code == 200, corrected.text
    assert corrected.json()["item"]["turns"][0]["answer"] == "The travel office."
    # the owner (root) may still change the question
    changed = root.put(
        url,
        json={"version": 2, "item": {"turns": [{"query": "Who pays the hotel?", "answer": "x"}]}},
    )
    assert changed.status_code == 200
