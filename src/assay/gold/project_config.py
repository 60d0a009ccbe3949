"""A project's stored settings for generation and retrieval, read and written with validation.

``project.settings`` is free JSON; these are its checked parts:

- ``generator``: :class:`assay.llm.GeneratorSettings` fields (kind, base_url, model,
  temperature, max_tokens, prompt_template, …). Never an API key: that comes from
  ``ASSAY_LLM_API_KEY`` only.
- ``retriever``: :class:`assay.search.retriever.RetrieverSettings` fields (kind, k, query_from,
  embedder, weights, k_rrf).
- ``reranker``: :class:`assay.search.rerank.RerankerSettings` fields (kind, url, model, api,
  depth, …), used by the editor's search panel when its rerank toggle is on.
- ``enrichments``: ``{name: [values]}`` offered per conversation turn.
- ``enrichments_single``: names of the enrichments that take at most one value (default
  ``["answerability"]``, see :mod:`assay.gold.taxonomy`).
- ``query_types``: see :mod:`assay.gold.taxonomy`.
- ``annotators_see_all``: whether annotators read every item of the project, not only their
  own (the role table's ``item.read`` rule asks for it).
- ``pool``: :class:`assay.search.pool_settings.PoolSettings` fields (sources, depth,
  strong_coverage, strong_min_words): the pool and the unanswerable check's strong hit.
- ``keep_textless_documents``: whether uploads and ``assay ingest`` keep a file without
  extractable text (with a warning) instead of refusing it (the default).
- ``judging_ratings``: the rating scale of judging mode, first value "not rated" (default
  autojudge-annotate's: Not rated, Perfect, Mostly Good, So-so, Bad).
- ``mtrag_collection``: the ``collection`` of MTRAG tasks written for conversations that
  name none (made in Assay); default the project's name (MTRAG refuses an empty one).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from assay.corpus.ingest import KEEP_TEXTLESS, keeps_textless
from assay.errors import InvalidInput
from assay.gold.taxonomy import (
    check_query_types,
    check_single_choice_names,
    enrichment_vocabulary,
    single_choice_enrichments,
)
from assay.llm import GeneratorSettings
from assay.llm.endpoints import check_chosen
from assay.records import Project
from assay.search.pool_settings import parse_pool_settings, pool_settings
from assay.search.rerank import RerankerSettings, parse_reranker
from assay.search.retriever import RetrieverSettings, parse_retriever_settings
from assay.store.judging_schema import judgments
from assay.store.projects import update_project_settings
from assay.store.workspace import Workspace


def generator_settings(project: Project) -> GeneratorSettings:
    return GeneratorSettings.from_mapping(project.settings.get("generator") or {})


CONVERSATION_GENERATOR = ("kind", "model", "temperature", "max_tokens")
"""What a conversation may choose for itself (``item.extra["generator"]``); the endpoint
(``base_url``), the local model file and the prompt template stay the project's, so an API
key only ever goes to the host the project's lead configured."""


def conversation_generator(project: Project, extra: Any) -> GeneratorSettings:
    """The project's generator with a conversation's own choices on top: ``kind`` (the
    offline generator, or the project's own kind), ``model`` (for an OpenAI-compatible
    endpoint: another model it serves), ``temperature``, ``max_tokens``. Anything else is
    refused by name."""
    base = generator_settings(project)
    chosen = extra.get("generator") if isinstance(extra, dict) else None
    if not chosen:
        return base
    where = "conversation generator"
    if not isinstance(chosen, dict):
        raise InvalidInput(f"{where}: give an object with {', '.join(CONVERSATION_GENERATOR)}")
    unknown = sorted(set(chosen) - set(CONVERSATION_GENERATOR))
    if unknown:
        raise InvalidInput(
            f"{where}: {', '.join(unknown)} cannot be chosen per conversation (the project "
            f"settings hold them); a conversation may choose: {', '.join(CONVERSATION_GENERATOR)}"
        )
    kind = chosen.get("kind") or base.kind
    if kind not in ("offline", base.kind):
        raise InvalidInput(
            f"{where}: kind {kind!r} is not set up for this project; choose 'offline' or "
            f"{base.kind!r}, or set the generator in the project settings"
        )
    values = dataclasses.asdict(base) | {"kind": kind}
    if chosen.get("model"):
        if kind != "openai":
            raise InvalidInput(f"{where}: a model can be chosen for kind 'openai' only")
        values["model"] = chosen["model"]
    for key in ("temperature", "max_tokens"):
        if chosen.get(key) is not None:
            values[key] = chosen[key]
    return GeneratorSettings.from_mapping(values)


def retriever_settings(project: Project) -> RetrieverSettings:
    return parse_retriever_settings(project.settings.get("retriever") or {})


def reranker_settings(project: Project) -> RerankerSettings | None:
    """The project's reranker, or None when it has none."""
    return parse_reranker(project.settings.get("reranker") or None)


def check_enrichments(value: Any) -> dict[str, list[str]]:
    if not isinstance(value, dict) or not value:
        raise InvalidInput("enrichments must be a non-empty object of name → list of values")
    checked: dict[str, list[str]] = {}
    for name, values in value.items():
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput("every enrichment needs a non-empty name")
        if (
            not isinstance(values, list)
            or not values
            or not all(isinstance(v, str) and v.strip() for v in values)
        ):
            raise InvalidInput(f"enrichment {name!r}: give a non-empty list of non-empty values")
        checked[name.strip()] = list(dict.fromkeys(v.strip() for v in values))
    return checked


DEFAULT_JUDGING_RATINGS = ("Not rated", "Perfect", "Mostly Good", "So-so", "Bad")
"""autojudge-annotate's scale; the first value means "not rated"."""


def judging_ratings(project: Project) -> tuple[str, ...]:
    return tuple(project.settings.get("judging_ratings") or DEFAULT_JUDGING_RATINGS)


def check_ratings(value: Any) -> list[str]:
    if (
        not isinstance(value, list)
        or len(value) < 2
        or not all(isinstance(v, str) and v.strip() for v in value)
    ):
        raise InvalidInput(
            "judging_ratings: give a list of at least two non-empty labels, the first "
            'meaning "not rated"'
        )
    labels = [v.strip() for v in value]
    if len(set(labels)) != len(labels):
        raise InvalidInput("judging_ratings: every label must differ from the others")
    return labels


def _keep_ratings_in_use(ws: Workspace, project: Project, scale: Sequence[str]) -> None:
    """Refuse a scale that leaves out a rating some judgment carries (the workbench could
    not show it, exports would write a label the scale lacks), naming those ratings."""
    with ws.engine.connect() as conn:
        used = set(
            conn.scalars(
                sa.select(judgments.c.rating).where(judgments.c.project_id == project.id).distinct()
            )
        )
    dropped = sorted(used - set(scale))
    if dropped:
        raise InvalidInput(
            "judging_ratings: judgments already carry "
            + ", ".join(repr(r) for r in dropped)
            + "; keep these labels on the scale (re-rate those judgments first to drop one)"
        )


MTRAG_COLLECTION = "mtrag_collection"
COLLECTION_LIMIT = 200


def mtrag_collection(project: Project) -> str:
    """The collection MTRAG tasks made in Assay name: the setting, else the project's name
    (the MTRAG writer applies the same rule to the project it is given)."""
    given = project.settings.get(MTRAG_COLLECTION)
    return given if isinstance(given, str) and given.strip() else project.name


def check_collection(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(
            f"{MTRAG_COLLECTION}: give a non-empty name (MTRAG refuses an empty one)"
        )
    name = value.strip()
    if len(name) > COLLECTION_LIMIT or any(ord(ch) < 32 for ch in name):
        raise InvalidInput(
            f"{MTRAG_COLLECTION}: at most {COLLECTION_LIMIT} characters, no control characters"
        )
    return name


def update_settings(ws: Workspace, project: Project, changes: dict[str, Any]) -> Project:
    """Validate and store some settings; ``None`` for a part restores its default. Nothing is
    stored when any part is invalid."""
    settings = dict(project.settings)
    for key, value in changes.items():
        if value is None:
            settings.pop(key, None)
            continue
        if key == "generator":
            generator = GeneratorSettings.from_mapping(value)
            if generator.kind == "openai":  # refused now rather than at the first request
                check_chosen(ws, generator.base_url, "generator settings: base_url")
            settings[key] = dataclasses.asdict(generator)
        elif key == "retriever":
            settings[key] = parse_retriever_settings(value).model_dump()
        elif key == "pool":
            settings[key] = _checked_pool(ws, value)
        elif key == "reranker":
            reranker = parse_reranker(value)
            if reranker is None:
                settings.pop(key, None)
                continue
            if reranker.kind == "http":
                check_chosen(ws, reranker.url, "reranker settings: url")
            inner = GeneratorSettings.from_mapping(reranker.generator or {})
            if reranker.kind == "llm" and reranker.generator and inner.kind == "openai":
                check_chosen(ws, inner.base_url, "reranker settings: generator base_url")
            settings[key] = reranker.to_json()
        elif key == "enrichments":
            settings[key] = check_enrichments(value)
        elif key == "enrichments_single":
            settings[key] = check_single_choice_names(value)
        elif key == "query_types":
            settings[key] = check_query_types(value)
        elif key == "judging_ratings":
            settings[key] = check_ratings(value)
        elif key == MTRAG_COLLECTION:
            settings[key] = check_collection(value)
        elif key in ("annotators_see_all", KEEP_TEXTLESS):
            if not isinstance(value, bool):
                raise InvalidInput(f"{key}: give true or false, not {value!r}")
            settings[key] = value
        else:
            raise InvalidInput(
                f"unknown setting {key!r}; settings are: generator, retriever, reranker, "
                "enrichments, enrichments_single, query_types, annotators_see_all, "
                f"{KEEP_TEXTLESS}, judging_ratings, pool, {MTRAG_COLLECTION}"
            )
    if "judging_ratings" in changes:
        scale = settings.get("judging_ratings") or DEFAULT_JUDGING_RATINGS
        _keep_ratings_in_use(ws, project, scale)
    return update_project_settings(ws, project, settings)


def _checked_pool(ws: Workspace, value: Any) -> dict[str, Any]:
    """Pool settings; external endpoints the workspace's outgoing policy refuses (in team
    mode: any an admin did not register) are refused now."""
    pool = parse_pool_settings(value)
    for source in pool.sources:
        if source.kind == "external":
            check_chosen(ws, source.endpoint, f"pool settings: source {source.name!r}")
    return pool.model_dump()


def settings_view(project: Project) -> dict[str, Any]:
    """All checked settings with defaults filled in (for pages and the JSON API)."""
    return {
        "generator": dataclasses.asdict(generator_settings(project)),
        "retriever": retriever_settings(project).model_dump(),
        "reranker": reranker.to_json() if (reranker := reranker_settings(project)) else None,
        "enrichments": enrichment_vocabulary(project),
        "enrichments_single": single_choice_enrichments(project),
        "annotators_see_all": bool(project.settings.get("annotators_see_all")),
        KEEP_TEXTLESS: keeps_textless(project),
        "judging_ratings": list(judging_ratings(project)),
        "pool": pool_settings(project.settings).model_dump(),
        MTRAG_COLLECTION: mtrag_collection(project),
    }
