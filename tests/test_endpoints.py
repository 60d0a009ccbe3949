"""Outgoing endpoints are the workspace admin's (issue 32): the registry (API, page, CLI),
leads choosing among registered endpoints, loopback refused in team mode, and the API key
sent only to registered endpoints. Real HTTP to fake servers; SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from assay.cli import make_app
from assay.errors import Conflict, InvalidInput
from assay.gold.project_config import update_settings
from assay.llm import GeneratorSettings, make_generator
from assay.llm.endpoints import (
    add_endpoint,
    list_endpoints,
    outgoing_policy,
    remove_endpoint,
)
from assay.llm.outgoing import OutgoingRefused
from assay.llm.records import Message
from assay.people.accounts import create_account
from assay.people.members import set_role
from assay.people.mode import set_team_mode
from assay.people.tokens import create_token
from assay.store.projects import create_project, get_project
from assay.store.workspace import Workspace
from tests.fakes.openai_server import FakeOpenAI, Reply, Status
from tests.test_web_signin import PASSWORD, browser, sign_in

LOOPBACK_SPELLINGS = [
    "http://127.0.0.1:5432",
    "http://127.1/v1",
    "http://2130706433/v1",
    "http://0x7f.1/v1",
    "http://[::1]:8000/v1",
    "http://[::ffff:127.0.0.1]/v1",
    "http://localhost:11434/v1",  # a hosts-file name resolving to loopback
]
PRIVATE = [
    "http://169.254.10.1/v1",
    "http://10.1.2.3/v1",
    "http://172.16.0.9/v1",
    "http://192.168.0.2/v1",
]
MESSAGES = [Message("user", "What is in the box?")]


@pytest.fixture
def team(any_ws: Workspace) -> Workspace:
    """Team mode: root (workspace admin), lea (lead of p), ann (annotator of p)."""
    create_account(any_ws, "root", PASSWORD, admin=True)
    lea = create_account(any_ws, "lea", PASSWORD)
    ann = create_account(any_ws, "ann", PASSWORD)
    project = create_project(any_ws, "p", "en")
    set_role(any_ws, project.id, lea.id, "lead")
    set_role(any_ws, project.id, ann.id, "annotator")
    set_team_mode(any_ws, True)
    return any_ws


def signed_in(ws: Workspace, username: str) -> TestClient:
    client = browser(ws)
    assert sign_in(client, username).status_code == 200
    return client


def token_client(ws: Workspace, username: str) -> TestClient:
    from assay.people.accounts import get_account
    from assay.web import create_app

    secret, _ = create_token(ws, get_account(ws, username).id, "t", "write", 1)
    return TestClient(create_app(ws), headers={"Authorization": f"Bearer {secret}"})


def test_admins_register_endpoints_leads_only_read_them(team: Workspace) -> None:
    root, lea = signed_in(team, "root"), signed_in(team, "lea")
    body = {"name": "openai", "url": "https://api.openai.com/v1/", "note": "paid"}
    assert lea.post("/api/endpoints", json=body).status_code == 403
    made = root.post("/api/endpoints", json=body)
    assert made.status_code == 201, made.text
    assert made.json()["url"] == "https://api.openai.com/v1"  # stored without the final /
    assert root.post("/api/endpoints", json=body).status_code == 409
    assert [e["name"] for e in lea.get("/api/endpoints").json()] == ["openai"]
    assert lea.delete("/api/endpoints/openai").status_code == 403
    lead_page = lea.get("/endpoints").text
    assert "api.openai.com" in lead_page and 'id="endpoint-form"' not in lead_page
    assert 'id="endpoints-admin-only"' in lead_page
    admin_page = root.get("/endpoints", headers={"accept-language": "de"}).text
    assert 'id="endpoint-form"' in admin_page and "Endpunkt eintragen" in admin_page
    assert root.delete("/api/endpoints/openai").status_code == 204
    assert root.delete("/api/endpoints/openai").status_code == 404
    assert list_endpoints(team) == []


def test_bad_endpoint_urls_are_refused_by_name(team: Workspace) -> None:
    root = signed_in(team, "root")
    for url in ("ftp://x.example/", "https://user:pw@x.example/v1", "https://x.example/?k=1", "x"):
        answer = root.post("/api/endpoints", json={"name": "e", "url": url})
        assert answer.status_code == 422 and "endpoint url" in answer.json()["detail"], url
    metadata = root.post(
        "/api/endpoints",
        json={"name": "m", "url": "http://169.254.169.254/latest", "allow_private": True},
    )
    assert metadata.status_code == 422 and "metadata" in metadata.json()["detail"]


@pytest.mark.parametrize("url", LOOPBACK_SPELLINGS + PRIVATE)
def test_loopback_and_private_spellings_are_refused_in_team_mode(
    team: Workspace, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_OUTGOING_ALLOW_LOOPBACK", "true")  # team mode turns it off
    with pytest.raises(OutgoingRefused, match="refused"):
        outgoing_policy(team).check_url(url)
    with pytest.raises(OutgoingRefused, match="team mode a workspace admin allows it"):
        add_endpoint(team, "e", url)
    root = signed_in(team, "root")
    answer = root.post("/api/endpoints", json={"name": "e", "url": url})
    assert answer.status_code == 422 and "refused" in answer.json()["detail"]


def test_personal_mode_keeps_the_environment_policy(ws: Workspace) -> None:
    assert outgoing_policy(ws).origins is None
    assert outgoing_policy(ws).check_url("http://127.1/v1") == ["127.0.0.1"]  # loopback allowed
    with pytest.raises(OutgoingRefused):
        outgoing_policy(ws).check_url("http://10.1.2.3/v1")


def test_an_admin_allows_a_named_private_host(team: Workspace) -> None:
    add_endpoint(team, "lab", "http://localhost:11434/v1", allow_private=True)
    assert outgoing_policy(team).check_url("http://localhost:11434/v1/chat/completions")
    with pytest.raises(OutgoingRefused, match="loopback"):  # only the host named
        outgoing_policy(team).check_url("http://127.0.0.1:11434/v1")


def generator(url: str) -> dict[str, object]:
    return {"kind": "openai", "base_url": url, "model": "m"}


def test_a_lead_cannot_point_settings_at_an_unregistered_host(team: Workspace) -> None:
    add_endpoint(team, "openai", "https://api.openai.com/v1")
    for lead in (signed_in(team, "lea"), token_client(team, "lea")):  # web session and API
        refused = lead.put(
            "/api/projects/p/conversation-settings",
            json={"generator": generator("https://evil.example/v1")},
        )
        assert refused.status_code == 422
        detail = refused.json()["detail"]
        assert (
            "not a registered endpoint" in detail and "openai (https://api.openai.com/v1)" in detail
        )
        other_port = lead.put(
            "/api/projects/p/conversation-settings",
            json={"generator": generator("https://api.openai.com:8443/v1")},
        )
        assert other_port.status_code == 422
        pool = {
            "sources": [{"name": "x", "kind": "external", "endpoint": "https://evil.example/rag"}]
        }
        assert lead.put("/api/projects/p/pool-settings", json=pool).status_code == 422
        reranker = {
            "reranker": {"kind": "http", "url": "https://evil.example/rerank", "model": "r"}
        }
        assert lead.put("/api/projects/p/settings", json=reranker).status_code == 422
        chosen = lead.put(
            "/api/projects/p/conversation-settings",
            json={"generator": generator("https://api.openai.com/v1")},
        )
        assert chosen.status_code == 200, chosen.text
    settings = get_project(team, "p").settings
    assert settings["generator"]["base_url"] == "https://api.openai.com/v1"
    assert "pool" not in settings
    reranker = {"kind": "http", "url": "https://evil.example/rerank", "model": "r"}
    with pytest.raises(OutgoingRefused, match=r"reranker settings: url: .*not a registered"):
        update_settings(team, get_project(team, "p"), {"reranker": reranker})


def test_experiments_name_only_registered_endpoints(team: Workspace) -> None:
    add_endpoint(team, "openai", "https://api.openai.com/v1")
    lead = signed_in(team, "lea")
    external = {
        "name": "e1",
        "pipelines": [{"name": "x", "kind": "external", "endpoint": "https://evil.example/rag"}],
    }
    answer = lead.post("/api/projects/p/experiments", json=external)
    assert answer.status_code == 422 and "not a registered endpoint" in answer.json()["detail"]


def test_the_key_goes_only_to_registered_endpoints(
    team: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_OUTGOING_HOSTS", "127.0.0.1")  # the fakes' address is legal
    monkeypatch.setenv("ASSAY_LLM_API_KEY", "sk-workspace-secret")
    with FakeOpenAI([Reply("ok")]) as registered, FakeOpenAI([Reply("stolen")]) as other:
        add_endpoint(team, "model", registered.url)
        project = get_project(team, "p")
        update_settings(team, project, {"generator": generator(registered.url)})
        answer = make_generator(
            GeneratorSettings.from_mapping(generator(registered.url)), policy=outgoing_policy(team)
        ).generate(MESSAGES)
        assert answer.text == "ok"
        assert registered.headers[0]["authorization"] == "Bearer sk-workspace-secret"

        # a setting saved while an endpoint was registered, which the admin then removed
        add_endpoint(team, "gone", other.url)
        update_settings(team, project, {"generator": generator(other.url)})
        remove_endpoint(team, "gone")
        stale = make_generator(
            GeneratorSettings.from_mapping(generator(other.url)), policy=outgoing_policy(team)
        )
        with pytest.raises(Exception, match="only to endpoints a workspace admin registered"):
            stale.generate(MESSAGES)
        assert other.count == 0 and other.headers == []
        keyless = make_generator(
            GeneratorSettings.from_mapping(generator(other.url)),
            api_key="",
            policy=outgoing_policy(team),
        )
        with pytest.raises(Exception, match="requests and the API key go only to endpoints"):
            keyless.generate(MESSAGES)  # without a key, nothing goes there either
        assert other.count == 0

        # a registered endpoint redirecting to an unregistered one: not followed, no key
        registered.reset([Status(307, headers={"location": f"{other.url}/chat/completions"})])
        with pytest.raises(Exception, match="redirect"):
            make_generator(
                GeneratorSettings.from_mapping(generator(registered.url)),
                policy=outgoing_policy(team),
            ).generate(MESSAGES)
        assert other.count == 0


def test_personal_mode_sends_the_key_to_the_configured_host(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_LLM_API_KEY", "sk-local")
    with FakeOpenAI([Reply("ok")]) as fake:
        make_generator(
            GeneratorSettings.from_mapping(generator(fake.url)), policy=outgoing_policy(ws)
        ).generate(MESSAGES)
        assert fake.headers[0]["authorization"] == "Bearer sk-local"


def test_cli_adds_lists_and_removes(ws: Workspace) -> None:
    runner = CliRunner()
    home = ["--home", str(ws.settings.home)]
    added = runner.invoke(
        make_app(),
        [*home, "endpoints", "add", "lab", "https://llm.example.org/v1/", "--note", "ours"],
    )
    assert added.exit_code == 0, added.output
    listed = runner.invoke(make_app(), [*home, "endpoints", "list", "--json"])
    assert json.loads(listed.output)[0]["url"] == "https://llm.example.org/v1"
    again = runner.invoke(make_app(), [*home, "endpoints", "add", "lab", "https://x.example"])
    assert again.exit_code != 0 and "exists" in again.output
    assert runner.invoke(make_app(), [*home, "endpoints", "remove", "lab"]).exit_code == 0
    gone = runner.invoke(make_app(), [*home, "endpoints", "remove", "lab"])
    assert gone.exit_code != 0 and "no endpoint named 'lab'" in gone.output


def test_registry_checks_names(ws: Workspace) -> None:
    with pytest.raises(InvalidInput, match="endpoint name"):
        add_endpoint(ws, " ", "https://x.example")
    add_endpoint(ws, "x", "https://x.example")
    with pytest.raises(Conflict):
        add_endpoint(ws, "x", "https://y.example")
