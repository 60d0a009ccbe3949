"""What the conversation workbench retrieves from: the project's retriever, the whole pool,
or one pool source (an external RAG system behind the HTTP contract, a run file, an index).

:func:`retrieve` has the signature of :func:`assay.gold.turn_answers.retrieve` and returns
contexts in the same stored shape, so the workbench routes call it in its place. The pool
settings' ``chat`` field chooses (:mod:`assay.search.pool_settings`); the conversation's
overrides still set ``k`` (passages kept) and ``query_from``. External systems are asked
through the outgoing-HTTP policy with the conversation so far as ``history``. A source that
fails raises :class:`~assay.errors.BackendUnavailable` naming it, before anything is stored.
Passages an external system returns that are not in the corpus are kept in rank among the
others as unanchored contexts (text, no document or offsets, the id they came with as
``document_id``, ``outside_corpus: true``), shown as such and carried in exports; they
cannot become gold evidence.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, cast

from assay.corpus.chunkings import get_chunking
from assay.errors import BackendUnavailable
from assay.experiments.pool_sources import PoolSources, adhoc_task
from assay.experiments.pools import PoolEntry, merge
from assay.gold.turn_answers import conversation_retriever, doc_names
from assay.gold.turn_answers import retrieve as retrieve_with_index
from assay.records import Context, Project
from assay.search.pool_settings import CHAT_POOL, pool_settings
from assay.search.retriever import query_text
from assay.store.workspace import Workspace


def retrieve(
    ws: Workspace,
    project: Project,
    questions: Sequence[str],
    rewrite: str,
    overrides: dict[str, Any],
) -> tuple[list[Context], dict[str, Any]]:
    """Contexts for the last question from the source the pool settings' ``chat`` names
    (the project's retriever when none); returns the contexts and how they were found."""
    settings = pool_settings(project.settings)
    if not settings.chat:
        return retrieve_with_index(ws, project, questions, rewrite, overrides)
    retriever = conversation_retriever(project, overrides)
    query = query_text(list(questions), rewrite or None, retriever.query_from)
    chosen = (
        settings
        if settings.chat == CHAT_POOL
        else settings.model_copy(
            update={"sources": [s for s in settings.sources if s.name == settings.chat]}
        )
    )
    chosen = chosen.model_copy(update={"depth": retriever.k})
    history = tuple({"role": "user", "content": q} for q in questions[:-1])
    task = dataclasses.replace(adhoc_task(query, "chat"), history=history)
    sources = PoolSources(ws, project, chosen, get_chunking(ws, project), [task])
    try:
        pool = merge(task, sources.ask(task), chosen.depth)
    finally:
        sources.close()
    if pool.errors and not pool.entries and not pool.outside:
        problems = "; ".join(f"{name}: {error}" for name, error in pool.errors.items())
        raise BackendUnavailable(f"conversation retriever {settings.chat!r} failed: {problems}")
    names = doc_names(ws, project, (e.doc_id for e in pool.entries))
    ranked: list[tuple[int, int, int, Context]] = [
        (entry.best_rank, -len(entry.found_by), order, _anchored(entry, names[entry.doc_id]))
        for order, entry in enumerate(pool.entries)
    ]
    ranked += [
        (rank, 0, len(ranked) + order, _unanchored(source, rank, found))
        for order, (source, rank, found) in enumerate(pool.outside)
        if str(found.get("text") or "").strip()
    ]
    ranked.sort(key=lambda r: r[:3])
    contexts = [cast(Context, {**r[3], "rank": n}) for n, r in enumerate(ranked[: retriever.k], 1)]
    how = {
        "settings": {**retriever.model_dump(), "source": settings.chat},
        "sources": [s.name for s in chosen.sources],
        "errors": pool.errors,
        "query": query,
        "outside_corpus": dict(pool.unplaced),
    }
    return contexts, how


def _anchored(entry: PoolEntry, title: str) -> Context:
    return cast(
        Context,
        {
            "chunk_id": entry.chunk_id,
            "doc_id": entry.doc_id,
            "start": entry.start,
            "end": entry.end,
            "score": None,
            "text": entry.text,
            "title": title,
            "found_by": dict(entry.found_by),  # stored with the context: who found it
        },
    )


def _unanchored(source: str, rank: int, found: dict[str, Any]) -> Context:
    """A passage an external system returned that is not in the corpus: kept with its text
    (no document, no offsets; it cannot be gold evidence), the id it came with kept."""
    context: dict[str, Any] = {
        "chunk_id": None,
        "doc_id": None,
        "start": None,
        "end": None,
        "score": found.get("score"),
        "text": str(found.get("text") or ""),
        "found_by": {source: rank},
        "outside_corpus": True,
    }
    given = found.get("doc_id") or found.get("chunk_id")
    if isinstance(given, str) and given:
        context["document_id"] = given
    return cast(Context, context)
