"""Rerankers: a second look at the first ``depth`` hits of a search, best first again.

A reranker has one method, :meth:`Reranker.rerank`: a query and passage texts in, one score
per passage out (with the token usage it cost, when it used an LLM). Two kinds, chosen by
:attr:`RerankerSettings.kind` through :func:`make_reranker`:

``http``  a ``/rerank`` endpoint (llama.cpp server, vLLM, Infinity, Jina, Cohere, TEI …),
          see :mod:`assay.search.rerank_http`;
``llm``   pointwise relevance ratings from a generator, one request per passage,
          see :mod:`assay.search.rerank_llm`.

No packaged cross-encoder is offered: no package on the registry ships the weights of one
(docs/evaluation.md says what was checked). Settings never hold a key: the HTTP reranker
reads ``ASSAY_RERANK_API_KEY`` when it is made and sends it only to the endpoint's host.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from assay.errors import AssayError, InvalidInput
from assay.records import Hit

RERANKER_KINDS: tuple[str, ...] = ("http", "llm")
HTTP_APIS: tuple[str, ...] = ("standard", "tei")
API_KEY_VARIABLE = "ASSAY_RERANK_API_KEY"


class RerankError(AssayError):
    """A reranker failed for one query: unreachable, timed out, an error status, or a reply
    that is not one score per passage. The message names the reranker and the problem."""


@dataclass(frozen=True, slots=True)
class Reranking:
    """One score per passage, in the order the passages were given, and what it cost."""

    scores: tuple[float, ...]
    usage: dict[str, Any] = field(default_factory=dict)
    model: str = ""


class Reranker(Protocol):
    def rerank(self, query: str, documents: Sequence[str]) -> Reranking:
        """Score every document for the query (higher is better); raises RerankError."""


@dataclass(frozen=True, slots=True)
class RerankerSettings:
    """How to reach and drive a reranker; safe to store (it never holds a secret).

    ``depth``: how many hits of the first search are reranked (the pipeline then keeps its
    ``k`` best). ``url`` is the whole endpoint (``http://127.0.0.1:8080/v1/rerank``);
    ``api`` its shape, ``standard`` or ``tei``. ``generator`` (kind ``llm``): generator
    settings as for answers; empty means the pipeline's (or the project's) generator.
    """

    kind: str = "http"
    url: str = ""
    model: str = ""
    api: str = "standard"
    depth: int = 30
    timeout_s: float = 30.0
    retries: int = 1
    generator: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = "reranker settings"
        if self.kind not in RERANKER_KINDS:
            raise InvalidInput(
                f"{where}: unknown kind {self.kind!r}; valid kinds: {', '.join(RERANKER_KINDS)}"
            )
        if self.api not in HTTP_APIS:
            raise InvalidInput(
                f"{where}: unknown api {self.api!r}; valid apis: {', '.join(HTTP_APIS)}"
            )
        for name in ("url", "model"):
            if not isinstance(getattr(self, name), str):
                raise InvalidInput(f"{where}: {name} must be text")
        if isinstance(self.depth, bool) or not isinstance(self.depth, int):
            raise InvalidInput(f"{where}: depth must be a whole number, got {self.depth!r}")
        if not 1 <= self.depth <= 1000:
            raise InvalidInput(f"{where}: depth must be from 1 to 1000, got {self.depth}")
        timeout = self.timeout_s
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or not 0 < timeout <= 3600
        ):
            raise InvalidInput(f"{where}: timeout_s must be a number > 0 and <= 3600")
        if isinstance(self.retries, bool) or not isinstance(self.retries, int):
            raise InvalidInput(f"{where}: retries must be a whole number from 0 to 10")
        if not 0 <= self.retries <= 10:
            raise InvalidInput(f"{where}: retries must be a whole number from 0 to 10")
        if not isinstance(self.generator, dict):
            raise InvalidInput(f"{where}: generator must be an object of generator settings")
        if self.kind == "http" and not self.url.startswith(("http://", "https://")):
            raise InvalidInput(
                f"{where}: kind 'http' needs url, the rerank endpoint such as "
                f"http://127.0.0.1:8080/v1/rerank (got {self.url!r})"
            )
        if self.kind == "llm" and self.generator:
            from assay.llm import GeneratorSettings

            GeneratorSettings.from_mapping(self.generator)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> RerankerSettings:
        """From stored JSON; unknown keys (an ``api_key`` above all) are refused by name."""
        if "api_key" in values:
            raise InvalidInput(
                f"reranker settings: api_key is not a setting and is never stored; set the "
                f"environment variable {API_KEY_VARIABLE} instead"
            )
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise InvalidInput(
                f"reranker settings: unknown field(s) {', '.join(unknown)}; valid fields: "
                f"{', '.join(known)}"
            )
        return cls(**dict(values))

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def name(self) -> str:
        """How errors name this reranker: its URL, or the LLM and its model."""
        if self.kind == "http":
            return f"reranker {self.url}"
        model = self.generator.get("model") or self.generator.get("kind") or "the generator"
        return f"LLM reranker ({model})"


def parse_reranker(value: Mapping[str, Any] | None) -> RerankerSettings | None:
    """Settings from JSON-ready input; ``None`` or ``{}`` mean no reranking."""
    if not value:
        return None
    if not isinstance(value, Mapping):
        raise InvalidInput("reranker settings must be an object such as {'kind': 'http', ...}")
    return RerankerSettings.from_mapping(value)


RerankerFactory = Callable[[RerankerSettings, Mapping[str, Any]], Reranker]


def reranker_registry() -> dict[str, RerankerFactory]:
    """``kind → factory``, built on call so no backend module loads before it is used."""
    return {"http": _make_http, "llm": _make_llm}


def make_reranker(
    settings: RerankerSettings, *, generator: Mapping[str, Any] | None = None
) -> Reranker:
    """The reranker for ``settings``. ``generator``: the generator settings an ``llm``
    reranker uses when its own ``generator`` is empty."""
    registry = reranker_registry()
    factory = registry.get(settings.kind)
    if factory is None:
        raise InvalidInput(
            f"unknown reranker kind {settings.kind!r}; valid kinds: {', '.join(registry)}"
        )
    return factory(settings, settings.generator or dict(generator or {}))


def _make_http(settings: RerankerSettings, generator: Mapping[str, Any]) -> Reranker:
    from assay.search.rerank_http import HttpReranker

    key = os.environ.get(API_KEY_VARIABLE, "").strip() or None
    return HttpReranker(settings, api_key=key)


def _make_llm(settings: RerankerSettings, generator: Mapping[str, Any]) -> Reranker:
    from assay.llm import GeneratorSettings, make_generator
    from assay.search.rerank_llm import LlmReranker

    chosen = GeneratorSettings.from_mapping(generator)
    if chosen.kind == "offline":
        raise InvalidInput(
            "the LLM reranker needs a generator that is a language model (kind openai or "
            "local); the offline generator only quotes passages and cannot rate them"
        )
    return LlmReranker(make_generator(chosen), name=settings.name)


def rerank_hits(
    reranker: Reranker, query: str, hits: Sequence[Hit], k: int
) -> tuple[list[Hit], Reranking]:
    """The ``k`` best hits by the reranker's scores (ties keep the first search's order),
    renumbered from rank 1 with the reranker's score."""
    if not hits:
        return [], Reranking(())
    result = reranker.rerank(query, [hit.text for hit in hits])
    order = sorted(range(len(hits)), key=lambda i: (-result.scores[i], i))[:k]
    return [
        dataclasses.replace(hits[i], rank=rank, score=float(result.scores[i]))
        for rank, i in enumerate(order, start=1)
    ], result
