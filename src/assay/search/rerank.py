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
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from assay.errors import InvalidInput
from assay.llm.outgoing import OutgoingPolicy
from assay.records import Hit
from assay.search.rerank_records import (
    API_KEY_VARIABLE,
    HTTP_APIS,
    RERANKER_KINDS,
    Reranker,
    RerankError,
    RerankerSettings,
    Reranking,
    parse_reranker,
)

__all__ = [
    "API_KEY_VARIABLE",
    "HTTP_APIS",
    "RERANKER_KINDS",
    "RerankError",
    "Reranker",
    "RerankerSettings",
    "Reranking",
    "make_reranker",
    "parse_reranker",
    "rerank_hits",
    "reranker_registry",
]

if TYPE_CHECKING:
    from assay.llm.traffic import Traffic

RerankerFactory = Callable[
    [RerankerSettings, Mapping[str, Any], "Traffic | None", OutgoingPolicy | None], Reranker
]


def reranker_registry() -> dict[str, RerankerFactory]:
    """``kind → factory``, built on call so no backend module loads before it is used."""
    return {"http": _make_http, "llm": _make_llm}


def make_reranker(
    settings: RerankerSettings,
    *,
    generator: Mapping[str, Any] | None = None,
    traffic: Traffic | None = None,
    policy: OutgoingPolicy | None = None,
) -> Reranker:
    """The reranker for ``settings``. ``generator``: the generator settings an ``llm``
    reranker uses when its own ``generator`` is empty; ``traffic``: the process's endpoint
    gates and response cache (:mod:`assay.llm.traffic`)."""
    registry = reranker_registry()
    factory = registry.get(settings.kind)
    if factory is None:
        raise InvalidInput(
            f"unknown reranker kind {settings.kind!r}; valid kinds: {', '.join(registry)}"
        )
    return factory(settings, settings.generator or dict(generator or {}), traffic, policy)


def _make_http(
    settings: RerankerSettings,
    generator: Mapping[str, Any],
    traffic: Traffic | None,
    policy: OutgoingPolicy | None,
) -> Reranker:
    from assay.llm.traffic import service_gate
    from assay.search.rerank_http import HttpReranker

    key = os.environ.get(API_KEY_VARIABLE, "").strip() or None
    gate = service_gate(traffic, settings.url, timeout_s=settings.timeout_s)
    return HttpReranker(settings, api_key=key, gate=gate, policy=policy)


def _make_llm(
    settings: RerankerSettings,
    generator: Mapping[str, Any],
    traffic: Traffic | None,
    policy: OutgoingPolicy | None,
) -> Reranker:
    from assay.llm import GeneratorSettings, make_generator
    from assay.search.rerank_llm import LlmReranker

    chosen = GeneratorSettings.from_mapping(generator)
    if chosen.kind == "offline":
        raise InvalidInput(
            "the LLM reranker needs a generator that is a language model (kind openai or "
            "local); the offline generator only quotes passages and cannot rate them"
        )
    return LlmReranker(make_generator(chosen, traffic=traffic, policy=policy), name=settings.name)


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
