"""Generator settings, the registry and the API key rules."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.errors import InvalidInput
from assay.experiments import create_experiment
from assay.llm import (
    GENERATOR_KINDS,
    Generation,
    GeneratorSettings,
    Message,
    api_key_from_env,
    generator_registry,
    make_generator,
)
from assay.llm.openai_compat import OpenAICompatGenerator
from assay.records import Project
from assay.store.workspace import Workspace
from assay.web import create_app

OPENAI = {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}


def test_defaults_are_the_offline_generator() -> None:
    settings = GeneratorSettings()
    assert settings.kind == "offline"
    assert settings.temperature == 0.0
    assert settings.retries == 2


def test_settings_have_no_key_field() -> None:
    settings = GeneratorSettings(**OPENAI)
    assert "api_key" not in dataclasses.asdict(settings)
    assert "api_key" not in {f.name for f in dataclasses.fields(Generation)}


def test_unknown_kind_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidInput) as caught:
        GeneratorSettings(kind="gpt")
    assert "unknown kind 'gpt'; valid kinds: offline, openai, local" in str(caught.value)


def test_registry_matches_the_kinds() -> None:
    assert tuple(generator_registry()) == GENERATOR_KINDS


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"temperature": -0.1}, "temperature must be a number >= 0 and <= 2"),
        ({"temperature": 2.5}, "temperature must be a number"),
        ({"temperature": float("nan")}, "temperature must be a number"),
        ({"temperature": "hot"}, "temperature must be a number"),
        ({"timeout_s": 0}, "timeout_s must be a number > 0"),
        ({"max_tokens": 0}, "max_tokens must be a whole number from 1"),
        ({"max_tokens": 1.5}, "max_tokens must be a whole number"),
        ({"retries": 11}, "retries must be a whole number from 0 to 10"),
        ({"retries": True}, "retries must be a whole number"),
        ({"json_mode": "yes"}, "json_mode must be true or false"),
        ({"model": 3}, "model must be text"),
        ({"prompt_template": "{passages} {foo}"}, "unknown placeholder {foo}"),
        ({"prompt_template": "{passages}"}, r"no \{question\} placeholder"),
    ],
)
def test_bad_values_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        GeneratorSettings(**change)


def test_openai_needs_an_endpoint_and_a_model() -> None:
    with pytest.raises(InvalidInput, match="kind 'openai' needs base_url"):
        GeneratorSettings(kind="openai", model="m")
    with pytest.raises(InvalidInput, match="kind 'openai' needs base_url"):
        GeneratorSettings(kind="openai", base_url="127.0.0.1:8080/v1", model="m")
    with pytest.raises(InvalidInput, match="kind 'openai' needs model"):
        GeneratorSettings(kind="openai", base_url="http://127.0.0.1:8080/v1")


def test_from_mapping_round_trips_and_refuses_keys() -> None:
    settings = GeneratorSettings(**OPENAI, temperature=0.7, json_mode=True)
    assert GeneratorSettings.from_mapping(dataclasses.asdict(settings)) == settings
    with pytest.raises(InvalidInput, match=r"api_key is not a setting.*ASSAY_LLM_API_KEY"):
        GeneratorSettings.from_mapping({**OPENAI, "api_key": "sk-x"})
    with pytest.raises(InvalidInput, match=r"unknown field\(s\) colour; valid fields: kind"):
        GeneratorSettings.from_mapping({"colour": "red"})


def test_api_key_comes_from_assay_variable_then_openai() -> None:
    assert api_key_from_env({}) is None
    assert api_key_from_env({"OPENAI_API_KEY": "sk-o"}) == "sk-o"
    assert api_key_from_env({"ASSAY_LLM_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o"}) == "sk-a"
    assert api_key_from_env({"ASSAY_LLM_API_KEY": "  ", "OPENAI_API_KEY": "sk-o"}) == "sk-o"


def test_make_generator_builds_the_openai_client_from_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASSAY_LLM_API_KEY", "sk-env")
    settings = GeneratorSettings(**OPENAI, timeout_s=5, retries=0, max_tokens=9)
    generator = make_generator(settings)
    assert isinstance(generator, OpenAICompatGenerator)
    assert generator.url == "http://127.0.0.1:9/v1/chat/completions"
    assert (generator.timeout_s, generator.retries, generator.max_tokens) == (5, 0, 9)
    assert "sk-env" not in repr(generator)
    assert "sk-env" not in str(generator.params)


def test_message_roles_are_checked() -> None:
    with pytest.raises(InvalidInput, match="message role 'tool' is not valid"):
        Message("tool", "x")


# --- the outgoing-HTTP policy when settings are saved ------------------------------------------


def test_saving_a_generator_url_the_policy_refuses_fails_at_once(
    ws: Workspace, project: Project
) -> None:
    """Issue 9: a base URL at a metadata or private address was stored, and the server then
    sent the API key there. Now the web API refuses it when it is saved (nothing stored)."""
    client = TestClient(create_app(ws))
    client.get("/")
    client.headers["X-CSRF-Token"] = client.cookies["assay_csrf"]
    url = "/api/projects/test/conversation-settings"
    for base_url, why in (
        ("http://169.254.169.254/latest/meta-data/v1", "169.254.169.254 is a cloud metadata"),
        ("http://10.0.0.1:8000/v1", "10.0.0.1 is a private address"),
        ("http://[::ffff:192.168.0.1]/v1", "is a private address"),
        ("http://metadata.google.internal/v1", "is a cloud metadata host"),
    ):
        body = {"generator": {**OPENAI, "base_url": base_url}}
        refused = client.put(url, json=body)
        assert refused.status_code == 422, refused.text
        detail = refused.json()["detail"]
        assert detail.startswith("generator settings: base_url: outgoing request refused")
        assert why in detail and "ASSAY_OUTGOING_HOSTS" in detail
    assert client.get(url).json()["generator"]["kind"] == "offline"  # nothing was stored
    saved = client.put(url, json={"generator": OPENAI})  # loopback is fine by default
    assert saved.status_code == 200 and saved.json()["generator"]["base_url"] == OPENAI["base_url"]


def test_experiments_refuse_urls_the_policy_refuses(
    ws: Workspace, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = {"kind": "judge", "name": "ok", "values": ["Yes", "No"]}
    cases = [
        ({"name": "rag", "kind": "external", "endpoint": "http://10.0.0.1/rag"}, None),
        ({"name": "gen", "generator": {**OPENAI, "base_url": "http://169.254.169.254/"}}, None),
        ("keyword", {**judge, "generator": {**OPENAI, "base_url": "http://192.168.1.1/v1"}}),
    ]
    for pipeline, metric in cases:
        with pytest.raises(InvalidInput, match=r"outgoing request refused") as caught:
            create_experiment(
                ws, project, "x", pipelines=[pipeline], mode="rag", metrics=[metric or "rouge_l"]
            )
        assert "ASSAY_OUTGOING_HOSTS" in str(caught.value)
    monkeypatch.setenv("ASSAY_OUTGOING_HOSTS", "10.0.0.1")
    with pytest.raises(InvalidInput, match="no tasks"):  # the endpoint passed the check
        create_experiment(ws, project, "x", pipelines=[cases[0][0]], mode="rag")
