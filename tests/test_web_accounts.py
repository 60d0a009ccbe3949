"""Account admin in the browser's API (workspace admins only) and invite links: a link makes
one account once, signs it in, expires, can be revoked. On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from assay.people.accounts import create_account, get_account
from assay.people.invites import accept_invite, create_invite
from assay.people.members import role_of, set_role
from assay.people.mode import set_team_mode
from assay.store.db import utcnow
from assay.store.invite_schema import invites
from assay.store.projects import create_project
from assay.store.workspace import Workspace
from tests.test_web_signin import PASSWORD, browser, sign_in

NEW_PASSWORD = "a fresh long secret"


@pytest.fixture
def team(any_ws: Workspace) -> Workspace:
    """Team mode with an admin (root), a project p with lea as its lead."""
    create_account(any_ws, "root", PASSWORD, admin=True)
    lea = create_account(any_ws, "lea", PASSWORD)
    project = create_project(any_ws, "p", "en")
    set_role(any_ws, project.id, lea.id, "lead")
    set_team_mode(any_ws, True)
    return any_ws


def test_only_workspace_admins_reach_account_admin(team: Workspace) -> None:
    lead = browser(team)
    assert sign_in(lead, "lea").status_code == 200
    assert lead.get("/admin/accounts").status_code == 403
    assert lead.get("/api/accounts").status_code == 403
    assert lead.post("/api/invites", json={"username": "eve"}).status_code == 403
    assert lead.post("/api/accounts/root/disable").status_code == 403
    assert "/admin/accounts" not in lead.get("/").text
    admin = browser(team)
    assert sign_in(admin, "root").status_code == 200
    page = admin.get("/admin/accounts")
    assert page.status_code == 200 and 'id="invite-form"' in page.text
    assert 'href="/admin/accounts"' in admin.get("/").text
    german = admin.get("/admin/accounts", headers={"accept-language": "de"}).text
    assert "Jemanden einladen" in german


def test_admin_creates_disables_and_resets_an_account(team: Workspace) -> None:
    admin = browser(team)
    sign_in(admin, "root")
    made = admin.post(
        "/api/accounts", json={"username": "Ann", "display_name": "Ann A.", "password": PASSWORD}
    )
    assert made.status_code == 201 and made.json()["username"] == "ann"
    assert (
        admin.post("/api/accounts", json={"username": "ann", "password": PASSWORD}).status_code
        == 409
    )
    short = admin.post("/api/accounts", json={"username": "zed", "password": "short"})
    assert short.status_code == 422 and "password" in short.json()["detail"]
    ann = browser(team)
    assert sign_in(ann, "ann").status_code == 200
    assert admin.post("/api/accounts/ann/disable").json()["state"] == "disabled"
    assert ann.get("/api/projects").status_code == 401  # the session ended at once
    assert sign_in(browser(team), "ann").status_code == 401
    assert admin.post("/api/accounts/ann/enable").json()["state"] == "active"
    reset = admin.put("/api/accounts/ann/password", json={"password": NEW_PASSWORD})
    assert reset.status_code == 200
    assert sign_in(browser(team), "ann").status_code == 401
    assert sign_in(browser(team), "ann", NEW_PASSWORD).status_code == 200
    assert admin.post("/api/accounts/root/disable").status_code == 409  # the last admin
    listed = {a["username"]: a["state"] for a in admin.get("/api/accounts").json()}
    assert listed["ann"] == "active" and listed["local"] == "no_sign_in"


def test_an_invite_link_makes_an_account_once_and_signs_it_in(team: Workspace) -> None:
    admin = browser(team)
    sign_in(admin, "root")
    made = admin.post(
        "/api/invites",
        json={"username": "nia", "display_name": "Nia N.", "project": "p", "role": "annotator"},
    )
    assert made.status_code == 201, made.text
    link = made.json()["link"]
    assert link.startswith("http://testserver/invite/")
    path = link.removeprefix("http://testserver")
    token = path.rsplit("/", 1)[1]
    again = admin.post("/api/invites", json={"username": "nia"})
    assert again.status_code == 409 and "open invite" in again.json()["detail"]

    guest = browser(team)
    page = guest.get(path)
    assert page.status_code == 200 and "nia" in page.text and 'id="invite-accept-form"' in page.text
    assert (
        guest.post("/api/invite-accept", json={"token": token, "password": "nia"}).status_code
        == 422
    )
    accepted = guest.post("/api/invite-accept", json={"token": token, "password": NEW_PASSWORD})
    assert accepted.status_code == 200 and accepted.json()["username"] == "nia"
    assert guest.get("/api/session").json()["username"] == "nia"  # signed in by the link
    assert guest.get("/api/projects/p/items").status_code == 200  # an annotator of p
    nia = get_account(team, "nia")
    assert nia.display_name == "Nia N." and not nia.is_admin
    with team.engine.connect() as conn:
        project_id = conn.scalar(sa.text("SELECT id FROM projects WHERE name = 'p'"))
    assert role_of(team, int(project_id), nia.id) == "annotator"

    second = browser(team).post(
        "/api/invite-accept", json={"token": token, "password": NEW_PASSWORD}
    )
    assert second.status_code == 409 and "used already" in second.json()["detail"]
    assert "used already" in browser(team).get(path).text
    states = {i["username"]: i["state"] for i in admin.get("/api/invites").json()}
    assert states == {"nia": "used"}
    assert "token" not in admin.get("/api/invites").text


def test_expired_revoked_and_unknown_links_make_nothing(team: Workspace) -> None:
    root = get_account(team, "root")
    secret, made = create_invite(team, "old", created_by=root.id)
    with team.engine.begin() as conn:
        conn.execute(
            invites.update()
            .where(invites.c.id == made.id)
            .values(expires_at=utcnow() - timedelta(minutes=1))
        )
    guest = browser(team)
    expired = guest.post("/api/invite-accept", json={"token": secret, "password": NEW_PASSWORD})
    assert expired.status_code == 409 and "expired" in expired.json()["detail"]
    secret2, made2 = create_invite(team, "old", created_by=root.id)  # the old one expired
    admin = browser(team)
    sign_in(admin, "root")
    assert admin.delete(f"/api/invites/{made2.id}").status_code == 204
    revoked = guest.post("/api/invite-accept", json={"token": secret2, "password": NEW_PASSWORD})
    assert revoked.status_code == 404
    assert (
        guest.post(
            "/api/invite-accept", json={"token": "x" * 40, "password": NEW_PASSWORD}
        ).status_code
        == 404
    )
    with pytest.raises(Exception, match="no account named 'old'"):
        get_account(team, "old")
    with pytest.raises(Exception, match="already exists"):
        create_invite(team, "lea", created_by=root.id)
    with pytest.raises(Exception, match="1 to 30 days"):
        create_invite(team, "sam", created_by=root.id, days=31)


def test_a_name_taken_after_the_invite_refuses_it_and_keeps_the_invite(team: Workspace) -> None:
    root = get_account(team, "root")
    secret, _ = create_invite(team, "kim", created_by=root.id)
    create_account(team, "kim", PASSWORD)
    with pytest.raises(Exception, match="already exists"):
        accept_invite(team, secret, NEW_PASSWORD)
    with team.engine.connect() as conn:
        used = conn.scalar(sa.select(invites.c.used_at).where(invites.c.username == "kim"))
    assert used is None  # the transaction rolled back: nothing half done
