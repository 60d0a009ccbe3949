"""Search as the editor's search panel and the search API do it: the keyword index of a
chunking, optionally reranked by the project's reranker (setting ``reranker``)."""

from __future__ import annotations

from assay.corpus.chunkings import get_chunking
from assay.errors import InvalidInput
from assay.gold.project_config import reranker_settings
from assay.llm.endpoints import outgoing_policy
from assay.records import Hit, Project
from assay.search.retriever import RetrieverSettings
from assay.search.stages import Stages, make_stage_tools, retrieve
from assay.store.workspace import Workspace


def panel_search(
    ws: Workspace,
    project: Project,
    query: str,
    k: int = 10,
    chunking: str | None = None,
    *,
    rerank: bool = False,
) -> list[Hit]:
    """The best ``k`` chunks for ``query``; with ``rerank`` the project's reranker reorders
    the first ``depth`` keyword hits (an LLM reranker without its own generator uses the
    project's). InvalidInput when the project has no reranker."""
    if not query.strip():
        return []
    chosen = get_chunking(ws, project, chunking)
    stages = Stages()
    tools = make_stage_tools(stages)
    if rerank:
        settings = reranker_settings(project)
        if settings is None:
            raise InvalidInput(
                f"project {project.name!r} has no reranker; set one with `assay projects "
                "settings --reranker '{...}'` (see docs/llm.md#rerankers)"
            )
        stages = Stages(reranker=settings)
        tools = make_stage_tools(
            stages, project.settings.get("generator") or {}, policy=outgoing_policy(ws)
        )
    found = retrieve(
        ws,
        project,
        query,
        k=k,
        chunking=chosen,
        retriever=RetrieverSettings(),
        stages=stages,
        tools=tools,
    )
    return found.hits
