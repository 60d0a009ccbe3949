"""Retrieval with its optional stages, in order: rewrite → search (filtered) → rerank → expand.

:class:`Stages` holds the options (stored with experiment pipelines); :func:`retrieve` runs
them for one query and returns what each stage did, so a run can record the searched query,
the reranker's scores and every generator's usage. Generators and rerankers are made by the
caller once (:func:`make_stage_tools`), not per query.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assay.errors import InvalidInput
from assay.llm.outgoing import OutgoingPolicy
from assay.llm.records import Generator
from assay.records import Chunking, Hit, Project
from assay.search.embeddings import Embedder
from assay.search.expansion import Expanded, check_neighbours, expand_hits
from assay.search.filters import Filters, filtered_search, matching_documents, parse_filters
from assay.search.indexes import search
from assay.search.rerank import (
    Reranker,
    RerankerSettings,
    Reranking,
    make_reranker,
    parse_reranker,
    rerank_hits,
)
from assay.search.retriever import RetrieverSettings
from assay.search.rewrite import Rewritten, check_rewrite, rewrite_query
from assay.store.workspace import Workspace

if TYPE_CHECKING:
    from assay.llm.traffic import Traffic


@dataclass(frozen=True, slots=True)
class Stages:
    """The optional stages of a retrieval; the defaults do nothing."""

    rewrite: str = "none"
    reranker: RerankerSettings | None = None
    expand: int = 0
    filters: Filters = field(default_factory=dict)

    @classmethod
    def parse(
        cls,
        *,
        rewrite: str = "none",
        reranker: Mapping[str, Any] | None = None,
        expand: int = 0,
        filters: Mapping[str, Any] | str | None = None,
    ) -> Stages:
        return cls(
            check_rewrite(rewrite),
            parse_reranker(reranker),
            check_neighbours(expand),
            parse_filters(filters),
        )

    @property
    def active(self) -> bool:
        return self.rewrite != "none" or bool(self.reranker or self.expand or self.filters)


def check_stage_generators(
    stages: Stages,
    generator: Mapping[str, Any] | None = None,
    rewrite_generator: Mapping[str, Any] | None = None,
) -> None:
    """A rewrite and the LLM reranker need a language model, not the offline generator
    (``generator``: the one they use when they name none of their own)."""
    from assay.llm import GeneratorSettings

    uses = []
    if stages.rewrite != "none":
        uses.append((f"rewrite {stages.rewrite!r}", rewrite_generator or generator))
    if stages.reranker is not None and stages.reranker.kind == "llm":
        uses.append(("the LLM reranker", stages.reranker.generator or generator))
    for what, chosen in uses:
        if GeneratorSettings.from_mapping(chosen or {}).kind == "offline":
            raise InvalidInput(
                f"{what} needs a generator that is a language model (kind openai or local); "
                "the offline generator only quotes passages"
            )


@dataclass(frozen=True, slots=True)
class StageTools:
    rewriter: Generator | None = None
    reranker: Reranker | None = None


def make_stage_tools(
    stages: Stages,
    generator: Mapping[str, Any] | None = None,
    *,
    rewrite_generator: Mapping[str, Any] | None = None,
    traffic: Traffic | None = None,
    policy: OutgoingPolicy | None = None,
) -> StageTools:
    """The generator a rewrite needs and the reranker, made once for many queries.
    ``generator``: the generator settings to use (the pipeline's or the project's) where
    the stage names none of its own (``rewrite_generator``, the reranker's ``generator``);
    ``traffic``: the process's endpoint gates and response cache (:mod:`assay.llm.traffic`);
    ``policy``: the workspace's outgoing policy (team mode), else the environment's."""
    rewriter: Generator | None = None
    if stages.rewrite != "none":
        from assay.llm import GeneratorSettings, make_generator

        chosen = GeneratorSettings.from_mapping(rewrite_generator or generator or {})
        if chosen.kind == "offline":
            raise InvalidInput(
                f"query rewrite {stages.rewrite!r} needs a generator that is a language model "
                "(kind openai or local); the offline generator only quotes passages"
            )
        rewriter = make_generator(chosen, traffic=traffic, policy=policy)
    reranker = (
        make_reranker(stages.reranker, generator=generator, traffic=traffic, policy=policy)
        if stages.reranker
        else None
    )
    return StageTools(rewriter, reranker)


@dataclass(frozen=True, slots=True)
class Retrieval:
    """What one retrieval did. ``contexts`` are the hits' (possibly expanded) passages."""

    query: str
    hits: list[Hit]
    contexts: list[Expanded]
    rewritten: Rewritten | None = None
    reranking: Reranking | None = None
    timings: dict[str, float] = field(default_factory=dict)

    def entries(self) -> list[dict[str, Any]]:
        """Retrieved entries as runs store them: the hit's chunk, score and rank, and the
        context's exact span (``start``/``end``, expanded when asked, with the merged
        ``chunk_ids``)."""
        entries: list[dict[str, Any]] = []
        for context in self.contexts:
            hit = context.hit
            entry: dict[str, Any] = {
                "chunk_id": hit.chunk_id,
                "doc_id": hit.doc_id,
                "start": context.start,
                "end": context.end,
                "score": hit.score,
                "rank": hit.rank,
                "text": context.text,
            }
            if context.chunk_ids != (hit.chunk_id,):
                entry["chunk_ids"] = list(context.chunk_ids)
            entries.append(entry)
        return entries

    def details(self) -> dict[str, Any]:
        """What the stages did, for a stored result: the rewritten query and the usage."""
        details: dict[str, Any] = {}
        if self.rewritten is not None:
            details["rewrite"] = self.rewritten.to_json()
        usage = self.usage()
        if usage:
            details["usage"] = usage
        return details

    def usage(self) -> dict[str, dict[str, Any]]:
        """Per stage that used a model: ``{"model", token counts…}``."""
        used: dict[str, dict[str, Any]] = {}
        if self.rewritten is not None and self.rewritten.kind != "none":
            used["rewrite"] = {"model": self.rewritten.model, **self.rewritten.usage}
        if self.reranking is not None and (self.reranking.usage or self.reranking.model):
            used["rerank"] = {"model": self.reranking.model, **self.reranking.usage}
        return used


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def retrieve(
    ws: Workspace,
    project: Project,
    query: str,
    *,
    k: int,
    chunking: Chunking,
    retriever: RetrieverSettings,
    stages: Stages = Stages(),
    tools: StageTools = StageTools(),
    embedder: Embedder | None = None,
    history: Sequence[dict[str, str]] = (),
) -> Retrieval:
    """Run the stages for one query; errors of a stage propagate (the caller records them)."""
    timings: dict[str, float] = {}
    rewritten: Rewritten | None = None
    searched = query
    if stages.rewrite != "none":
        if tools.rewriter is None:
            raise InvalidInput("a query rewrite needs a generator (make_stage_tools)")
        began = time.perf_counter()
        rewritten = rewrite_query(tools.rewriter, stages.rewrite, query, history, project.language)
        timings["rewrite_ms"] = _ms(began)
        searched = rewritten.query
    depth = max(k, stages.reranker.depth) if stages.reranker else k

    def run(n: int) -> list[Hit]:
        return search(ws, project, searched, n, chunking, retriever, embedder=embedder)

    began = time.perf_counter()
    if stages.filters:
        allowed = matching_documents(ws, project, stages.filters)
        hits = filtered_search(run, allowed, depth)
        hits = [dataclasses.replace(h, rank=rank) for rank, h in enumerate(hits, start=1)]
    else:
        hits = run(depth)
    timings["retrieve_ms"] = _ms(began)
    reranking: Reranking | None = None
    if stages.reranker is not None:
        if tools.reranker is None:
            raise InvalidInput("reranking needs a reranker (make_stage_tools)")
        began = time.perf_counter()
        hits, reranking = rerank_hits(tools.reranker, query, hits, k)
        timings["rerank_ms"] = _ms(began)
    hits = hits[:k]
    contexts = (
        expand_hits(ws, chunking, hits, stages.expand)
        if stages.expand
        else [Expanded(h, h.start, h.end, h.text, (h.chunk_id,)) for h in hits]
    )
    return Retrieval(searched, hits, contexts, rewritten, reranking, timings)
