"""The role matrix: every route of the app × every kind of caller, the expected status
generated from the route-action table and people.access.decide (team mode).

A route that changes something and has no rule fails test_web_signin's rule check; here each
route is called as: anonymous, an expired session, a disabled account, a non-member, a token
of another project's lead, a read-only token of the owner, and each of the five roles. The
guard answers first, so allowed calls reach the route (and may then answer 404 or 422 for
the made-up ids and empty bodies used here); refused ones get 401 (pages: the sign-in page)
or 403.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.people.access import Actor, decide
from assay.people.accounts import create_account, set_disabled
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.roles import ACTIONS, ADMIN_ACTIONS, ROLES
from assay.people.sessions import create_session, hash_secret
from assay.people.tokens import create_token
from assay.store.db import utcnow
from assay.store.projects import create_project
from assay.store.schema import sessions
from assay.store.workspace import Workspace
from assay.web import ROUTE_MODULES, create_app
from assay.web.route_actions import OWN_LISTS, action_for, is_public

PASSWORD = "correct horse battery"
SAMPLE = {
    "name": "p",
    "doc_id": "no-such-doc",
    "item_id": "no-such-item",
    "comment_id": "1",
    "ref": "no-such-experiment",
    "task_id": "no-such-task",
    "number": "1",
    "action": "take",
    "job_id": "no-such-job",
    "username": "nobody",
    "code": "en",
    "version": "no-such-version",
    "page_mode": "reports",
    "invite_id": "9999",
    "token": "no-such-invite",
    "endpoint": "no-such-endpoint",
}


def app_routes(app: Any) -> list[tuple[str, str]]:
    """Every (method, path template) the app answers, from its routers."""
    found = set()
    stack = list(app.router.routes)
    while stack:
        route = stack.pop()
        inner = getattr(route, "original_router", None)
        if inner is not None:
            stack.extend(inner.routes)
            continue
        for method in getattr(route, "methods", None) or ():
            if method != "HEAD":
                found.add((method, route.path))
    return sorted(found)


def expected(method: str, path: str, caller: str) -> str:
    """``ok``, ``401`` or ``403`` for one caller."""
    if caller in ("anonymous", "expired", "disabled"):
        return "401"
    action = action_for(method, path)
    if action is None:
        return "ok"
    if caller == "non-member" or caller == "other-lead":
        role, scope = None, "write"
    elif caller == "owner-read-token":
        role, scope = "owner", "read"
    else:
        role, scope = caller, "write"
    if "{name}" not in path:
        role = None
    # a list of items is open to a role that reads only its own items (it shows just those)
    own_list = method == "GET" and path in OWN_LISTS
    allowed = decide(Actor(99, caller, scope=scope), action, role, own=own_list, settings={})
    return "ok" if allowed else "403"


CALLERS = [
    "anonymous",
    "expired",
    "disabled",
    "non-member",
    "other-lead",
    "owner-read-token",
    *ROLES,
]


@pytest.fixture
def callers(any_ws: Workspace) -> dict[str, dict[str, str]]:
    """Headers or cookies per caller, in team mode with a project p (and another, q)."""
    ws = any_ws
    create_account(ws, "root", PASSWORD, admin=True)
    p = create_project(ws, "p", "en")
    q = create_project(ws, "q", "en")
    found: dict[str, dict[str, str]] = {"anonymous": {}}
    for role in ROLES:
        account = create_account(ws, role, PASSWORD)
        set_role(ws, p.id, account.id, role)
        found[role] = {"cookie": create_session(ws, account.id)[0]}
        if role == "owner":
            found["owner-read-token"] = {"token": create_token(ws, account.id, "r", "read")[0]}
    stranger = create_account(ws, "stranger", PASSWORD)
    found["non-member"] = {"cookie": create_session(ws, stranger.id)[0]}
    other = create_account(ws, "other", PASSWORD)
    set_role(ws, q.id, other.id, "lead")
    found["other-lead"] = {"token": create_token(ws, other.id, "w", "write")[0]}
    gone = create_account(ws, "gone", PASSWORD)
    set_role(ws, p.id, gone.id, "owner")
    found["disabled"] = {"cookie": create_session(ws, gone.id)[0]}
    set_disabled(ws, "gone")
    late = create_account(ws, "late", PASSWORD)
    set_role(ws, p.id, late.id, "owner")
    secret = create_session(ws, late.id)[0]
    with ws.engine.begin() as conn:
        conn.execute(
            sessions.update()
            .where(sessions.c.id_hash == hash_secret(secret))
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    found["expired"] = {"cookie": secret}
    set_team_mode(ws, True)
    return found


def test_every_route_for_every_caller(any_ws: Workspace, callers) -> None:  # type: ignore[no-untyped-def]
    app = create_app(any_ws)
    routes = [r for r in app_routes(app) if not is_public(*r)]
    assert len(routes) > 70
    client = TestClient(app, follow_redirects=False, raise_server_exceptions=False)
    client.get("/api/session")
    csrf = client.cookies["assay_csrf"]
    wrong = []
    for caller in CALLERS:
        how = callers[caller]
        for method, path in routes:
            url = path.format(**SAMPLE)
            headers = {"X-CSRF-Token": csrf, "Cookie": f"assay_csrf={csrf}"}
            if "cookie" in how:
                headers["Cookie"] += f"; assay_session={how['cookie']}"
            if "token" in how:
                headers["Authorization"] = f"Bearer {how['token']}"
            client.cookies.clear()
            body = {} if method in ("POST", "PUT", "PATCH") else None
            answer = client.request(method, url, headers=headers, json=body)
            status = answer.status_code
            page = not path.startswith("/api/")
            got = (
                "401"
                if status == 401
                or (page and status == 303 and "/login" in answer.headers.get("location", ""))
                else "403"
                if status == 403
                else "ok"
            )
            want = expected(method, path, caller)
            if got != want:
                wrong.append(f"{caller:16s} {method} {path}: {status}, expected {want}")
            if status == 403 and (said := internal_words(answer.text)):
                wrong.append(f"{caller:16s} {method} {path}: the refusal says {said}")
    assert wrong == []


TEAM_OPERATIONS = {
    # account admin: workspace admins only (every project role is refused)
    ("GET", "/admin/accounts"): "workspace.users",
    ("GET", "/api/accounts"): "workspace.users",
    ("POST", "/api/accounts"): "workspace.users",
    ("PUT", "/api/accounts/{username}/password"): "workspace.users",
    ("POST", "/api/invites"): "workspace.users",
    ("DELETE", "/api/invites/{invite_id}"): "workspace.users",
    # uploads, drafts and downloads: owners and leads
    ("GET", "/projects/{name}/judging-setup"): "import",
    ("POST", "/api/projects/{name}/judging/topics"): "import",
    ("POST", "/api/projects/{name}/judging/runs"): "import",
    ("POST", "/api/projects/{name}/judging/import"): "import",
    ("GET", "/api/projects/{name}/judging/export"): "export",
    ("GET", "/projects/{name}/synthesis"): "import",
    ("POST", "/api/projects/{name}/synthesis-jobs"): "import",
    ("POST", "/api/projects/{name}/transfer/exports"): "export",
    ("PUT", "/api/projects/{name}/settings"): "project.settings",
    ("DELETE", "/api/projects/{name}/llm-cache"): "experiment.run",
}


def test_the_team_operations_are_routes_of_the_matrix(tmp_path: Any) -> None:
    """The pages and uploads of the team operations are among the routes the matrix above
    calls, with the actions that keep them to admins (accounts) or to owners and leads."""
    from assay.store.settings import Settings

    with Workspace.open(Settings(home=tmp_path / "ws"), create=True) as ws:
        routes = set(app_routes(create_app(ws)))
    assert set(TEAM_OPERATIONS) <= routes
    assert {("GET", "/invite/{token}"), ("POST", "/api/invite-accept")} <= routes
    assert is_public("GET", "/invite/{token}") and is_public("POST", "/api/invite-accept")
    for (method, path), action in TEAM_OPERATIONS.items():
        assert action_for(method, path) == action, path
        allowed = {c for c in CALLERS if expected(method, path, c) == "ok"}
        if action == "workspace.users":
            assert allowed == set(), path  # no project role, no token of a non-admin
        elif action == "export":  # reading the project out: a read token may (people.md)
            assert allowed == {"owner", "lead", "owner-read-token"}, path
        else:
            assert allowed == {"owner", "lead"}, path


INTERNAL = [name for name in (*ACTIONS, *ADMIN_ACTIONS) if "." in name]


def internal_words(text: str) -> list[str]:
    """What a refusal must not say: an action's internal name, or "a annotator may"."""
    return [name for name in INTERNAL if name in text] + (["a annotator"] * ("a annotator" in text))


def test_apps_share_their_routes_and_each_serves_its_own_workspace(
    ws: Workspace, tmp_path: Any
) -> None:
    """The guarded routes are built once per process (FastAPI resolves their dependencies on
    first use) and shared by every app; each app still answers from its own workspace."""
    from assay.store.settings import Settings

    other = Settings(home=tmp_path / "two", database_url=f"sqlite:///{tmp_path / 'two.db'}")
    with Workspace.open(other, create=True) as two:
        create_project(ws, "first")
        create_project(two, "second")
        apps = create_app(ws), create_app(two)
        shared = {id(r) for r in apps[0].router.routes} & {id(r) for r in apps[1].router.routes}
        assert len(shared) >= len(ROUTE_MODULES)  # the same objects: every module's routes
        names = [[p["name"] for p in TestClient(app).get("/api/projects").json()] for app in apps]
    assert names == [["first"], ["second"]]
