"""Generators: what turns a question and passages into a draft answer.

Every backend implements :class:`Generator` (two methods over chat messages). Callers use
:func:`generate_answer` / :func:`stream_answer`, which render the prompt for LLMs and hand
structured input to the offline extractive generator.

Three kinds, chosen by :attr:`GeneratorSettings.kind` through :func:`make_generator`:

``offline``  deterministic extractive answers from the passages, no LLM (the default);
``openai``   any OpenAI-compatible ``/v1/chat/completions`` endpoint, over httpx;
``local``    SmolLM2-135M through llama.cpp (xllamacpp) in this process (extra ``local-llm``).

The API key is never a setting: it comes from ``ASSAY_LLM_API_KEY`` (or ``OPENAI_API_KEY``)
when the generator is made, so settings can be stored and exported without leaking it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from assay.errors import InvalidInput
from assay.llm.answer import generate_answer, stream_answer
from assay.llm.prompts import DEFAULT_TEMPLATE, check_template
from assay.llm.records import (
    Citation,
    Generation,
    Generator,
    GeneratorError,
    Message,
    prompt_hash,
)
from assay.llm.response_cache import CACHE_MODES

if TYPE_CHECKING:
    from assay.llm.traffic import Traffic

if TYPE_CHECKING:
    from assay.llm.outgoing import OutgoingPolicy

GENERATOR_KINDS: tuple[str, ...] = ("offline", "openai", "local")
API_KEY_VARIABLES: tuple[str, ...] = ("ASSAY_LLM_API_KEY", "OPENAI_API_KEY")


@dataclass(frozen=True, slots=True)
class GeneratorSettings:
    """How to reach and drive a generator. Safe to persist: it never holds a secret."""

    kind: str = "offline"
    base_url: str = ""
    model: str = ""
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = 60.0
    retries: int = 2
    prompt_template: str = DEFAULT_TEMPLATE
    json_mode: bool = False
    max_in_flight: int = 16
    """Requests this endpoint may have in flight at once, over every job of the process
    (and, in team mode, every worker); the embedded local model always takes one."""
    seed: int | None = None
    """Sent with each request when set; a seeded request is deterministic enough to cache."""
    cache: str = "auto"
    """The response cache: ``auto`` (only deterministic requests: temperature 0 or a seed),
    ``always`` (every request, even sampled ones) or ``off``."""

    def __post_init__(self) -> None:
        where = "generator settings"
        if self.kind not in GENERATOR_KINDS:
            raise InvalidInput(
                f"{where}: unknown kind {self.kind!r}; valid kinds: {', '.join(GENERATOR_KINDS)}"
            )
        for name in ("base_url", "model", "prompt_template"):
            if not isinstance(getattr(self, name), str):
                raise InvalidInput(f"{where}: {name} must be text")
        _check_number(where, "temperature", self.temperature, low=0.0, high=2.0)
        _check_number(where, "timeout_s", self.timeout_s, low=0.0, high=3600.0, open_low=True)
        _check_int(where, "max_tokens", self.max_tokens, low=1, high=1_000_000)
        _check_int(where, "retries", self.retries, low=0, high=10)
        _check_int(where, "max_in_flight", self.max_in_flight, low=1, high=1024)
        if self.seed is not None:
            _check_int(where, "seed", self.seed, low=0, high=2**31 - 1)
        if self.cache not in CACHE_MODES:
            raise InvalidInput(
                f"{where}: cache must be one of {', '.join(CACHE_MODES)}, got {self.cache!r}"
            )
        if not isinstance(self.json_mode, bool):
            raise InvalidInput(f"{where}: json_mode must be true or false")
        if self.kind == "openai":
            if not self.base_url.startswith(("http://", "https://")):
                raise InvalidInput(
                    f"{where}: kind 'openai' needs base_url, the endpoint's API root such as "
                    f"http://127.0.0.1:8080/v1 (got {self.base_url!r})"
                )
            if not self.model.strip():
                raise InvalidInput(
                    f"{where}: kind 'openai' needs model, the model name to ask the endpoint for"
                )
        check_template(self.prompt_template)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> GeneratorSettings:
        """Build from stored JSON; unknown keys are refused by name, an api_key above all."""
        if "api_key" in values:
            raise InvalidInput(
                "generator settings: api_key is not a setting and is never stored; "
                "set the environment variable ASSAY_LLM_API_KEY instead"
            )
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise InvalidInput(
                f"generator settings: unknown field(s) {', '.join(unknown)}; "
                f"valid fields: {', '.join(known)}"
            )
        return cls(**dict(values))


def api_key_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The first non-empty of ``ASSAY_LLM_API_KEY`` and ``OPENAI_API_KEY``, else None."""
    env = os.environ if environ is None else environ
    for name in API_KEY_VARIABLES:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


GeneratorFactory = Callable[
    [GeneratorSettings, "str | None", "Traffic | None", "OutgoingPolicy | None"], Generator
]


def generator_registry() -> dict[str, GeneratorFactory]:
    """``kind → factory``, built on call so no backend module loads before it is used."""
    return {"offline": _make_offline, "openai": _make_openai, "local": _make_local}


def make_generator(
    settings: GeneratorSettings,
    *,
    api_key: str | None = None,
    traffic: Traffic | None = None,
    policy: OutgoingPolicy | None = None,
) -> Generator:
    """The generator for ``settings``; the API key defaults to the environment's.

    ``traffic`` (:func:`assay.llm.traffic.workspace_traffic`) gives the process's gate of
    the endpoint and the response cache; without it a generator has a gate of its own and
    no cache (one-off use: a chat, a test). ``policy``: the workspace's outgoing policy
    (:func:`assay.llm.endpoints.outgoing_policy`; team mode sends the key only to registered
    endpoints), else the environment's."""
    registry = generator_registry()
    factory = registry.get(settings.kind)
    if factory is None:
        raise InvalidInput(
            f"unknown generator kind {settings.kind!r}; valid kinds: {', '.join(registry)}"
        )
    key = api_key if api_key is not None else api_key_from_env()
    return factory(settings, key, traffic, policy)


def _make_offline(
    settings: GeneratorSettings,
    api_key: str | None,
    traffic: Traffic | None,
    policy: OutgoingPolicy | None,
) -> Generator:
    from assay.llm.offline import OfflineGenerator

    return OfflineGenerator(template=settings.prompt_template)


def _make_openai(
    settings: GeneratorSettings,
    api_key: str | None,
    traffic: Traffic | None,
    policy: OutgoingPolicy | None,
) -> Generator:
    from assay.llm.openai_compat import OpenAICompatGenerator

    return OpenAICompatGenerator.from_settings(
        settings, api_key=api_key, traffic=traffic, policy=policy
    )


def _make_local(
    settings: GeneratorSettings,
    api_key: str | None,
    traffic: Traffic | None,
    policy: OutgoingPolicy | None,
) -> Generator:
    from assay.llm.local import LocalGenerator

    gate = None
    if traffic is not None:  # one model in this process answers one request at a time
        gate = traffic.gates.gate(f"local {settings.model or 'smollm2'}", 1)
    return LocalGenerator(
        gate=gate,
        model_path=settings.model,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        json_mode=settings.json_mode,
    )


def _check_number(
    where: str, name: str, value: object, *, low: float, high: float, open_low: bool = False
) -> None:
    ok = False
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        ok = (value > low if open_low else value >= low) and value <= high
    if not ok:
        bound = f"> {low:g}" if open_low else f">= {low:g}"
        raise InvalidInput(
            f"{where}: {name} must be a number {bound} and <= {high:g}, got {value!r}"
        )


def _check_int(where: str, name: str, value: object, *, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(
            f"{where}: {name} must be a whole number from {low} to {high}, got {value!r}"
        )


__all__ = [
    "API_KEY_VARIABLES",
    "GENERATOR_KINDS",
    "Citation",
    "Generation",
    "Generator",
    "GeneratorError",
    "GeneratorSettings",
    "Message",
    "api_key_from_env",
    "generate_answer",
    "generator_registry",
    "make_generator",
    "prompt_hash",
    "stream_answer",
]
