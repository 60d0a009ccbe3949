"""Generator settings, the registry and the API key rules."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from assay.errors import InvalidInput
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
