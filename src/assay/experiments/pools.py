"""Pools: what several pipelines find for a question, each passage once, and how much of it
the gold already judges.

A pool takes the first ``depth`` passages of every source (:mod:`assay.experiments.pool_sources`)
and merges passages of one document that stand for each other under the overlap policy of
:mod:`assay.corpus.evidence_mapping` (``same_passage``: they overlap by at least half of either
one). A merged entry keeps the offsets and text of the first source that found it and
remembers every source with its rank there. Passages a source returned that cannot be placed
in a document (an external system's text found nowhere, a run's unknown id) are counted per
source, never pooled: nobody could judge them.

An entry is *judged* when gold evidence of the question (any label) maps to it by the same
overlap policy (``chunks_for_span`` over the pool's entries); *coverage* is judged entries
over pooled entries. Pools are computed on demand, never stored: see docs/evaluation.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.corpus.chunkings import get_chunking
from assay.corpus.evidence_mapping import chunks_for_span, same_passage
from assay.errors import InvalidInput
from assay.experiments.pool_sources import PoolSources, SourceAnswer, adhoc_task
from assay.experiments.tasks import ChunkMap, Task, build_tasks, check_statuses, tasks_from_item
from assay.formats.trec import run_lines
from assay.gold.checks import Finding
from assay.gold.item_lists import iter_items
from assay.gold.items import get_item
from assay.gold.unanswerable import (
    StrongHit,
    marked_unanswerable,
    strong_hits,
    unanswerable_findings,
)
from assay.llm.fanout import in_order
from assay.llm.traffic import SERVICE_LIMIT
from assay.records import Chunking, Item, Project
from assay.search.pool_settings import PoolSettings, pool_settings
from assay.store.workspace import Workspace

LABEL_STRENGTH = {"relevant": 3, "distracting": 2, "irrelevant": 1}


@dataclass(slots=True)
class PoolEntry:
    doc_id: str
    start: int
    end: int
    text: str
    chunk_id: str | None
    found_by: dict[str, int] = field(default_factory=dict)
    """Source name → the rank it gave the passage (its best, when it found it twice)."""
    judged: str | None = None
    """The strongest label of gold evidence mapping to the entry, None when unjudged."""

    @property
    def best_rank(self) -> int:
        return min(self.found_by.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "chunk_id": self.chunk_id,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "found_by": dict(self.found_by),
            "best_rank": self.best_rank,
            "judged": self.judged,
        }


@dataclass(slots=True)
class Pool:
    task_id: str
    query: str
    depth: int
    sources: tuple[str, ...]
    entries: list[PoolEntry]
    errors: dict[str, str] = field(default_factory=dict)
    unplaced: dict[str, int] = field(default_factory=dict)
    marked_unanswerable: bool = False
    """The question's turn is marked unanswerable (a free question never is)."""
    query_id: str = ""
    """The id the files Assay writes give the question (:mod:`assay.formats.query_ids`)."""
    outside: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    """The passages counted in ``unplaced`` (not in the corpus): ``(source, rank, passage as
    the source gave it)``; kept for whoever shows them, never judged."""

    @property
    def judged(self) -> int:
        return sum(1 for entry in self.entries if entry.judged)

    @property
    def coverage(self) -> float | None:
        return self.judged / len(self.entries) if self.entries else None

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "query_id": self.query_id or self.task_id,
            "query": self.query,
            "depth": self.depth,
            "sources": list(self.sources),
            "pooled": len(self.entries),
            "judged": self.judged,
            "coverage": self.coverage,
            "errors": dict(self.errors),
            "unplaced": dict(self.unplaced),
            "marked_unanswerable": self.marked_unanswerable,
            "entries": [entry.to_json() for entry in self.entries],
        }


def merge(
    task: Task, answers: Sequence[SourceAnswer], depth: int, *, unanswerable: bool = False
) -> Pool:
    """One pool from the sources' answers: deduplicated, ordered by best rank (then by how
    many sources found the passage, then by who found it first), judged against the task's
    gold evidence."""
    entries: list[PoolEntry] = []
    by_doc: dict[str, list[PoolEntry]] = {}
    errors: dict[str, str] = {}
    unplaced: dict[str, int] = {}
    outside: list[tuple[str, int, dict[str, Any]]] = []
    for answer in answers:
        if answer.error:
            errors[answer.source] = answer.error
            continue
        for rank, found in enumerate(answer.entries[:depth], start=1):
            if found.get("doc_id") is None or found.get("start") is None:
                unplaced[answer.source] = unplaced.get(answer.source, 0) + 1
                outside.append((answer.source, rank, dict(found)))
                continue
            span = (int(found["start"]), int(found["end"]))
            same = next(
                (
                    e
                    for e in by_doc.get(found["doc_id"], [])
                    if same_passage((e.start, e.end), span)
                ),
                None,
            )
            if same is None:
                same = PoolEntry(
                    found["doc_id"],
                    span[0],
                    span[1],
                    str(found.get("text") or ""),
                    found.get("chunk_id"),
                )
                entries.append(same)
                by_doc.setdefault(same.doc_id, []).append(same)
            same.found_by[answer.source] = min(same.found_by.get(answer.source, rank), rank)
    order = {id(entry): n for n, entry in enumerate(entries)}
    entries.sort(key=lambda e: (e.best_rank, -len(e.found_by), order[id(e)]))
    _judge(entries, by_doc, task)
    return Pool(
        task.task_id,
        task.query(),
        depth,
        tuple(a.source for a in answers),
        entries,
        errors,
        unplaced,
        unanswerable,
        task.query_id or task.task_id,
        outside,
    )


def _judge(entries: list[PoolEntry], by_doc: dict[str, list[PoolEntry]], task: Task) -> None:
    for ev in task.evidence:
        if ev.doc_id is None or ev.start is None or ev.end is None or ev.anchor != "ok":
            continue
        spans = [(str(n), e.start, e.end) for n, e in enumerate(by_doc.get(ev.doc_id, []))]
        for key in chunks_for_span(ev.start, ev.end, spans):
            entry = by_doc[ev.doc_id][int(key)]
            if LABEL_STRENGTH.get(ev.label, 0) > LABEL_STRENGTH.get(entry.judged or "", 0):
                entry.judged = ev.label


def question_pool(
    ws: Workspace,
    project: Project,
    settings: PoolSettings,
    *,
    query: str | None = None,
    item_id: str | None = None,
    turn: int | None = None,
    chunking: str | None = None,
) -> Pool:
    """The pool of one question: a stored item's turn (the last unless ``turn``, judged against
    its gold) or a free ``query`` (nothing judged)."""
    selected = get_chunking(ws, project, chunking)
    unanswerable = False
    if item_id:
        task, unanswerable = _item_task(ws, project, item_id, turn, selected)
        if query:  # the editor's search box may ask a different wording
            task = _with_query(task, query)
    elif query and query.strip():
        task = adhoc_task(query.strip())
    else:
        raise InvalidInput("a pool needs a question: give a query or an item id")
    sources = PoolSources(ws, project, settings, selected, [task])
    try:
        return merge(task, sources.ask(task), settings.depth, unanswerable=unanswerable)
    finally:
        sources.close()


def _item_task(
    ws: Workspace, project: Project, item_id: str, turn: int | None, chunking: Chunking
) -> tuple[Task, bool]:
    """The item's turn as a task, and whether the turn is marked unanswerable."""
    item = get_item(ws, project, item_id)
    tasks = tasks_from_item(item, ChunkMap(ws, chunking), "all")
    if not tasks:
        raise InvalidInput(f"item {item_id} has no turns to pool")
    number = turn if turn is not None else len(tasks)
    if not 1 <= number <= len(tasks):
        raise InvalidInput(f"item {item_id} has {len(tasks)} turn(s); turn {number} is not one")
    return tasks[number - 1], marked_unanswerable(item.turns[number - 1])


def _with_query(task: Task, query: str) -> Task:
    return dataclasses.replace(task, turns=(*task.turns[:-1], query.strip()), rewrite="")


@dataclass(frozen=True, slots=True)
class ProjectPool:
    pools: list[Pool]
    settings: PoolSettings

    def summary(self) -> dict[str, Any]:
        """Pooled, judged and coverage over all questions, and per source: passages it
        brought, passages only it found, and how many of its passages are judged."""
        pooled = sum(len(p.entries) for p in self.pools)
        judged = sum(p.judged for p in self.pools)
        per_source: dict[str, dict[str, int]] = {
            s.name: {"found": 0, "only": 0, "judged": 0, "errors": 0, "unplaced": 0}
            for s in self.settings.sources
        }
        for pool in self.pools:
            for name in pool.errors:
                per_source[name]["errors"] += 1
            for name, count in pool.unplaced.items():
                per_source[name]["unplaced"] += count
            for entry in pool.entries:
                for name in entry.found_by:
                    figures = per_source[name]
                    figures["found"] += 1
                    figures["only"] += len(entry.found_by) == 1
                    figures["judged"] += entry.judged is not None
        return {
            "questions": len(self.pools),
            "depth": self.settings.depth,
            "pooled": pooled,
            "judged": judged,
            "coverage": judged / pooled if pooled else None,
            "sources": per_source,
        }


def project_pool(
    ws: Workspace,
    project: Project,
    settings: PoolSettings,
    *,
    statuses: str | Sequence[str] | None = "all",
    chunking: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ProjectPool:
    """The pool of every question of the project's items (each turn of a conversation is a
    question), judged against each one's gold."""
    selected = get_chunking(ws, project, chunking)
    tasks = build_tasks(ws, project, statuses=statuses, chunking=selected.name)
    marked = {
        f"{item.id}::{number}"
        for item in iter_items(ws, project, statuses=check_statuses(statuses))
        for number, turn in enumerate(item.turns, 1)
        if marked_unanswerable(turn)
    }
    sources = PoolSources(ws, project, settings, selected, tasks)
    pools: list[Pool] = []
    try:
        remote = any(source.kind == "external" for source in settings.sources)
        window = SERVICE_LIMIT if remote else 1  # services answer side by side, in order
        asked = in_order(sources.ask, tasks, window)
        for done, (task, answers) in enumerate(zip(tasks, asked, strict=True), 1):
            pools.append(merge(task, answers, settings.depth, unanswerable=task.task_id in marked))
            if progress:
                progress(done, len(tasks))
    finally:
        sources.close()
    return ProjectPool(pools, settings)


def pool_strong_hits(pool: Pool, settings: PoolSettings) -> list[StrongHit]:
    """The pool's strong hits for its question (the unanswerable check's rule)."""
    return strong_hits(
        pool.query,
        [entry.to_json() for entry in pool.entries],
        min_coverage=settings.strong_coverage,
        min_words=settings.strong_min_words,
    )


def trec_lines(pools: Sequence[Pool]) -> list[str]:
    """The pools as a TREC run: ``query_id Q0 passage_id rank score pool`` per pooled
    passage in the pool's order, the passage id being the chunk id, else
    ``doc_id:start-end``. Scores go n, n-1, …, 1, so every scorer keeps the pool's order
    (how many sources found a passage is in the JSON form)."""
    lines = []
    for pool in pools:
        ranked = [
            (entry.chunk_id or f"{entry.doc_id}:{entry.start}-{entry.end}", None)
            for entry in pool.entries
        ]
        lines += run_lines(pool.query_id or pool.task_id, ranked, "pool")
    return lines


def unanswerable_check(
    ws: Workspace, project: Project, item: Item, settings: PoolSettings | None = None
) -> list[Finding]:
    """The unanswerable check of one item: each turn marked unanswerable is pooled (the
    project's pool settings unless given) and warned about when the pool has strong hits."""
    settings = settings or pool_settings(project.settings)
    marked = [n for n, turn in enumerate(item.turns, 1) if marked_unanswerable(turn)]
    if not marked or not item.id:
        return []
    hits = {
        number: pool_strong_hits(
            question_pool(ws, project, settings, item_id=item.id, turn=number), settings
        )
        for number in marked
    }
    return unanswerable_findings(item, hits)
