"""What the experiment form offers for the retrieval stages of a pipeline (rerank, rewrite,
expansion, filters), from the project's reranker and generator settings."""

from __future__ import annotations

import dataclasses
from typing import Any

from assay.gold.project_config import generator_settings, reranker_settings
from assay.records import Project


def stage_options(project: Project) -> dict[str, Any]:
    """``stages``: the project's reranker (or None) and its generator when it is a language
    model (rewrites and the LLM reranker need one; None when it is the offline one)."""
    reranker = reranker_settings(project)
    generator = generator_settings(project)
    llm = None
    if generator.kind != "offline":
        llm = {k: v for k, v in dataclasses.asdict(generator).items() if k != "prompt_template"}
    return {"stages": {"reranker": reranker.to_json() if reranker else None, "llm": llm}}
