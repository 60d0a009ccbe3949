"""Reranker records: the protocol, the settings, the result and the error.

Kept apart from :mod:`assay.search.rerank` (the registry) so the backends can import them
without importing the registry that imports the backends.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from assay.errors import AssayError, InvalidInput

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
