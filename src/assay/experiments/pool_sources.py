"""The pipelines a pool asks: the project's own indexes, external RAG services, TREC run files.

:class:`PoolSources` prepares every source of :class:`assay.search.pool_settings.PoolSettings`
once (embedder, HTTP clients, run files) and asks them one question at a time (callers may
ask several questions from threads: the clients share the process's endpoint gates). Each source
answers with placed passages (document and offsets where they can be found) or with the
error that stopped it; one failing source never stops the others.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.errors import AssayError
from assay.experiments.external import ContextResolver, ExternalClient
from assay.experiments.runfiles import FileRef, load_file, ranking
from assay.experiments.tasks import Task, task_lookup
from assay.gold.project_config import retriever_settings
from assay.llm.endpoints import outgoing_policy
from assay.llm.traffic import service_gate, workspace_traffic
from assay.records import Chunking, Project
from assay.search.embeddings import workspace_embedder
from assay.search.indexes import search
from assay.search.pool_settings import PoolSettings, PoolSource
from assay.store.workspace import Workspace


@dataclass(frozen=True, slots=True)
class SourceAnswer:
    """What one source returned for one question: retrieved entries (``chunk_id``, ``doc_id``,
    ``start``, ``end``, ``score``, ``rank``, ``text``; offsets None when unplaced), or an
    error message."""

    source: str
    entries: tuple[dict[str, Any], ...] = ()
    error: str = ""


def adhoc_task(query: str, task_id: str = "query") -> Task:
    """A task for a question that is not (yet) a stored item: no history, no gold."""
    return Task(
        task_id=task_id,
        query_id=task_id,
        item_id="",
        turn=1,
        turns=(query,),
        rewrite="",
        history=(),
        query_type="",
        evidence=(),
        answer="",
        alternatives=(),
    )


class PoolSources:
    """Every source of the pool settings, prepared once; close() when done."""

    def __init__(
        self,
        ws: Workspace,
        project: Project,
        settings: PoolSettings,
        chunking: Chunking,
        tasks: Sequence[Task] = (),
    ) -> None:
        self.ws = ws
        self.project = project
        self.settings = settings
        self.chunking = chunking
        self.resolver = ContextResolver(ws, project, chunking)
        self.retriever = retriever_settings(project)
        self.clients: dict[str, ExternalClient] = {}
        self.runs: dict[str, dict[str, list[tuple[str, float]]]] = {}
        self.failed: dict[str, str] = {}
        self._embedder: Any = None
        traffic = workspace_traffic(ws, project.id)
        lookup = task_lookup(tasks)
        for source in settings.sources:
            try:
                if source.kind == "external":
                    gate = service_gate(traffic, source.endpoint, timeout_s=source.timeout_s)
                    self.clients[source.name] = ExternalClient(
                        source.endpoint,
                        timeout_s=source.timeout_s,
                        retries=source.retries,
                        gate=gate,
                        policy=outgoing_policy(ws),
                    )
                elif source.kind == "run":
                    self.runs[source.name] = self._read_run(source, lookup)
            except AssayError as exc:
                self.failed[source.name] = str(exc)

    def _read_run(self, source: PoolSource, lookup: dict[str, Task]) -> dict[str, Any]:
        assert source.run_file is not None
        ref = FileRef(sha256=source.run_file.sha256, name=source.run_file.name)
        rankings: dict[str, list[tuple[str, float]]] = {}
        for qid, scores in load_file(self.ws, ref, "run").items():
            task = lookup.get(qid)
            rankings.setdefault(task.task_id if task else qid, ranking(scores))
        return rankings

    def close(self) -> None:
        for client in self.clients.values():
            client.close()

    def ask(self, task: Task) -> list[SourceAnswer]:
        """Every source's answer for one task, in the order of the settings."""
        return [self._ask(source, task) for source in self.settings.sources]

    def _ask(self, source: PoolSource, task: Task) -> SourceAnswer:
        if source.name in self.failed:
            return SourceAnswer(source.name, error=self.failed[source.name])
        depth = self.settings.depth
        try:
            if source.kind == "external":
                reply = self.clients[source.name].ask(task, task.query(), depth)
                entries = self.resolver.resolve(reply.contexts[:depth])
            elif source.kind == "run":
                ranked = self.runs[source.name].get(task.task_id, [])
                entries = self.resolver.resolve_ids(ranked[:depth])
            else:
                entries = self._search(source, task.query(), depth)
        except AssayError as exc:
            return SourceAnswer(source.name, error=str(exc))
        return SourceAnswer(source.name, tuple(entries))

    def _search(self, source: PoolSource, query: str, depth: int) -> list[dict[str, Any]]:
        settings = self.retriever.model_copy(update={"kind": source.kind, "k": depth})
        if source.kind != "keyword" and self._embedder is None:
            self._embedder = workspace_embedder(self.ws, settings.embedder)  # one per workspace
        hits = search(
            self.ws,
            self.project,
            query,
            depth,
            self.chunking.name,
            settings,
            embedder=self._embedder if source.kind != "keyword" else None,
        )
        return [dataclasses.asdict(hit) for hit in hits]  # merge() reads the placement
