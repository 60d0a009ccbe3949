"""Gold items → evaluation tasks: one task per selected turn, with its gold frozen in.

A task is what a RAG system is asked and what it is measured against: the query (from the
turns so far, or the rewrite), the conversation before it, the gold evidence of that turn and
the chunk ids standing for it under one chunking, and the reference answers. Single-turn
items give one task; conversations give one task per turn, or only the first, the last, or a
seeded random turn (RAGAPHENE's selection strategies). Task ids are ``<item_id>::<turn>``
with 1-based turns. A turn without relevant evidence is kept and marked ``unanswerable``:
retrieval metrics skip it, answer metrics still score it. An item whose evidence cannot be
used as gold (its document changed: :func:`assay.corpus.anchoring.items_needing_review`) makes no
task, exactly as exports leave it out.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import sqlalchemy as sa

from assay.corpus.anchoring import gold_span, items_needing_review
from assay.corpus.chunkings import document_chunks, get_chunking
from assay.corpus.evidence_mapping import chunks_for_span
from assay.errors import InvalidInput
from assay.formats.groups import source_id, unanswerable
from assay.formats.query_ids import is_single, older_forms, turn_query_id
from assay.gold.item_lists import iter_items
from assay.gold.statuses import DEFAULT_STATUSES, parse_statuses
from assay.records import Chunking, Evidence, Item, Project, to_json
from assay.review.version_export import experiment_items
from assay.review.versions import DatasetVersion, read_snapshot
from assay.search.retriever import QueryFrom, query_text
from assay.store.db import reading
from assay.store.workspace import Workspace

TurnSelection = Literal["all", "first", "last", "random"]
TURN_SELECTIONS: tuple[str, ...] = ("all", "first", "last", "random")


@dataclass(frozen=True, slots=True)
class Task:
    """One question put to a pipeline, and its gold as it was when the task was made."""

    task_id: str
    item_id: str
    turn: int
    """1-based turn number within the item."""
    turns: tuple[str, ...]
    """The user's queries up to and including this turn (oldest first)."""
    rewrite: str
    history: tuple[dict[str, str], ...]
    """Earlier turns as chat messages ``{"role": "user"|"assistant", "content": ...}``."""
    query_type: str
    evidence: tuple[Evidence, ...]
    """The turn's evidence as it was, each with the chunk ids that stand for it."""
    answer: str
    alternatives: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    """Other ids a run file may use for this task: its query id, then the forms files of
    older Assay versions used (:func:`assay.formats.query_ids.older_forms`)."""
    query_id: str = ""
    """The id the files Assay writes give this question (:mod:`assay.formats.query_ids`);
    the task id for a task stored before query ids existed."""
    chunking: str = ""
    unanswerable: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def query(self, query_from: QueryFrom = "last_turn") -> str:
        """The query text a retriever sees; ``rewrite`` falls back to the last turn when the
        turn has no rewrite (so one missing rewrite does not fail a whole run)."""
        if query_from == "rewrite" and not self.rewrite.strip():
            query_from = "last_turn"
        return query_text(self.turns, self.rewrite, query_from)

    @property
    def references(self) -> list[str]:
        """Reference answers: the answer, then the acceptable alternatives."""
        return [a for a in (self.answer, *self.alternatives) if a.strip()]

    @property
    def relevant(self) -> tuple[Evidence, ...]:
        return tuple(e for e in self.evidence if e.label == "relevant")

    def chunk_groups(self) -> list[list[str]]:
        """Gold chunk ids as AND-of-OR groups (AutoRAG's 2-D ``retrieval_gt``): evidence
        with the same group number are alternatives, different groups are all needed; a
        passage spanning several chunks contributes all of them as alternatives."""
        return _groups(self, lambda e: e.chunk_ids)

    def doc_groups(self) -> list[list[str]]:
        """The same groups on document ids, for runs that rank whole documents."""
        return _groups(self, lambda e: (e.doc_id,) if e.doc_id else ())

    def qrels(self, level: Literal["chunk", "doc"] = "chunk") -> dict[str, int]:
        """Graded judgements ``{id: grade}`` of the relevant passages (grade 1 when none)."""
        judged: dict[str, int] = {}
        if self.unanswerable:
            return judged
        for ev in self.relevant:
            ids = ev.chunk_ids if level == "chunk" else ((ev.doc_id,) if ev.doc_id else ())
            for id_ in ids:
                judged[id_] = max(judged.get(id_, 0), ev.grade if ev.grade is not None else 1)
        return judged


def _groups(task: Task, ids_of: Any) -> list[list[str]]:
    if task.unanswerable:
        return []
    groups: dict[object, list[str]] = {}
    for index, ev in enumerate(task.relevant):
        key: object = ev.group if ev.group else ("single", index)
        members = groups.setdefault(key, [])
        members.extend(i for i in ids_of(ev) if i not in members)
    return [members for members in groups.values() if members]


def select_turns(count: int, selection: str, seed: int = 0, key: str = "") -> list[int]:
    """0-based indexes of the turns to make tasks of. ``random`` draws one turn per item
    from a generator seeded with ``seed`` and the item's ``key``, so a run is repeatable and
    adding items changes no other item's choice."""
    if selection not in TURN_SELECTIONS:
        raise InvalidInput(
            f"unknown turn selection {selection!r}; choose one of: {', '.join(TURN_SELECTIONS)}"
        )
    if count <= 0:
        return []
    if selection == "all":
        return list(range(count))
    if selection == "first":
        return [0]
    if selection == "last":
        return [count - 1]
    return [random.Random(f"{seed}:{key}").randrange(count)]


def check_statuses(statuses: str | Iterable[str] | None) -> tuple[str, ...]:
    """The statuses meant (:func:`assay.gold.statuses.parse_statuses`: ``"all"`` is every
    status, nothing given is ``accepted``)."""
    return parse_statuses(statuses)


class ChunkMap:
    """Evidence spans → chunk ids under one chunking, reading each document's chunks once."""

    def __init__(
        self, ws: Workspace, chunking: Chunking | None, *, conn: sa.Connection | None = None
    ) -> None:
        self.ws = ws
        self.chunking = chunking
        self.conn = conn
        """Read with the caller's connection (an import reading its own batch), if given."""
        self._chunks: dict[str, list[tuple[str, int, int]]] = {}

    def chunks_of(self, doc_id: str) -> list[tuple[str, int, int]]:
        if self.chunking is None:
            return []
        if doc_id not in self._chunks:
            self._chunks[doc_id] = [
                (c.chunk_id, c.start, c.end)
                for c in document_chunks(self.ws, self.chunking, doc_id, conn=self.conn)
            ]
        return self._chunks[doc_id]

    def ids(
        self, doc_id: str | None, anchor: str | None, start: int | None, end: int | None
    ) -> tuple[str, ...]:
        """The chunk ids standing for a passage; none for evidence that is not anchored."""
        span = gold_span(anchor, start, end)
        if doc_id is None or span is None:
            return ()
        return chunks_for_span(*span, self.chunks_of(doc_id))


def tasks_from_item(item: Item, chunk_map: ChunkMap, selection: str, seed: int = 0) -> list[Task]:
    """The tasks of one item: one per selected turn (a single-turn item has one)."""
    picked = select_turns(len(item.turns), "all" if item.kind == "qa" else selection, seed, item.id)
    key, single = source_id(item), is_single(item)
    chunking = chunk_map.chunking.name if chunk_map.chunking else ""
    tasks: list[Task] = []
    for index in picked:
        turn = item.turns[index]
        history: list[dict[str, str]] = []
        for earlier in item.turns[:index]:
            history.append({"role": "user", "content": earlier.query})
            if earlier.answer.strip():
                history.append({"role": "assistant", "content": earlier.answer})
        number = index + 1
        qid = turn_query_id(key, number, single)
        keys = tuple(dict.fromkeys((key, item.id)))
        aliases = [qid, *older_forms(keys, number, single, len(item.turns))]
        evidence = tuple(_gold_evidence(e, chunk_map) for e in turn.evidence)
        tasks.append(
            Task(
                task_id=f"{item.id}::{index + 1}",
                item_id=item.id,
                turn=index + 1,
                turns=tuple(t.query for t in item.turns[: index + 1]),
                rewrite=turn.rewrite,
                history=tuple(history),
                query_type=turn.query_type,
                evidence=evidence,
                answer=turn.answer,
                alternatives=tuple(turn.alternatives),
                aliases=tuple(dict.fromkeys(aliases)),
                query_id=qid,
                chunking=chunking,
                unanswerable=unanswerable(turn),
            )
        )
    return tasks


def _gold_evidence(ev: Evidence, chunk_map: ChunkMap) -> Evidence:
    return dataclasses.replace(ev, chunk_ids=chunk_map.ids(ev.doc_id, ev.anchor, ev.start, ev.end))


def build_tasks(
    ws: Workspace,
    project: Project,
    *,
    statuses: str | Iterable[str] | None = DEFAULT_STATUSES,
    turns: str = "all",
    seed: int = 0,
    chunking: str | None = None,
    conn: sa.Connection | None = None,
) -> list[Task]:
    """Tasks from a project's items with the given statuses (``"all"`` for every item),
    gold chunk ids under ``chunking`` (the project's default unless named). Items whose
    evidence needs review make no task (:func:`skipped_items` names them). Read with the
    caller's ``conn`` when given."""
    select_turns(1, turns)  # check the selection before reading anything
    wanted = check_statuses(statuses)
    chunk_map = ChunkMap(ws, get_chunking(ws, project, chunking, conn=conn), conn=conn)
    held = skipped_items(ws, project, statuses=statuses, conn=conn)
    tasks: list[Task] = []
    for item in iter_items(ws, project, statuses=wanted, conn=conn):
        if item.id not in held:
            tasks.extend(tasks_from_item(item, chunk_map, turns, seed))
    return tasks


def version_tasks(
    ws: Workspace,
    project: Project,
    version: DatasetVersion,
    chunking: Chunking,
    *,
    turns: str = "all",
    seed: int = 0,
    conn: sa.Connection | None = None,
) -> list[Task]:
    """Tasks from a frozen dataset version's items (not the live ones), gold chunk ids
    under ``chunking``: :func:`assay.review.version_export.experiment_items`."""
    select_turns(1, turns)
    chunk_map = ChunkMap(ws, chunking, conn=conn)
    snapshot = read_snapshot(ws, version)
    return [
        task
        for item in experiment_items(ws, project, snapshot)
        for task in tasks_from_item(item, chunk_map, turns, seed)
    ]


def skipped_items(
    ws: Workspace,
    project: Project,
    *,
    statuses: str | Iterable[str] | None = DEFAULT_STATUSES,
    conn: sa.Connection | None = None,
) -> set[str]:
    """Ids of the items with these statuses that :func:`build_tasks` skips because their
    evidence cannot be used as gold: the same items an export leaves out."""
    with reading(ws.engine, conn) as conn:
        return set(items_needing_review(conn, project.id, check_statuses(statuses)))


def _evidence_from_json(data: Mapping[str, Any]) -> Evidence:
    """A task's stored evidence; snapshots from before the record family lack some fields."""
    created = data.get("created_at")
    return Evidence(
        doc_id=data.get("doc_id"),
        start=data.get("start"),
        end=data.get("end"),
        text=data.get("text", ""),
        label=data.get("label", "relevant"),
        grade=data.get("grade"),
        group=int(data.get("group") or 0),
        origin=data.get("origin", "selected"),
        anchor=data.get("anchor"),
        author=data.get("author"),
        created_at=datetime.fromisoformat(created) if isinstance(created, str) else None,
        chunk_ids=tuple(data.get("chunk_ids", [])),
    )


def task_to_json(task: Task) -> dict[str, Any]:
    """The snapshot stored with an experiment (plain JSON)."""
    data: dict[str, Any] = {
        "task_id": task.task_id,
        "item_id": task.item_id,
        "turn": task.turn,
        "turns": list(task.turns),
        "rewrite": task.rewrite,
        "history": [dict(m) for m in task.history],
        "query_type": task.query_type,
        "evidence": [to_json(e) for e in task.evidence],
        "answer": task.answer,
        "alternatives": list(task.alternatives),
        "aliases": list(task.aliases),
        "query_id": task.query_id,
        "chunking": task.chunking,
        "unanswerable": task.unanswerable,
        "extra": task.extra,
    }
    return data


def task_from_json(data: Mapping[str, Any]) -> Task:
    return Task(
        task_id=data["task_id"],
        item_id=data["item_id"],
        turn=int(data["turn"]),
        turns=tuple(data["turns"]),
        rewrite=data.get("rewrite", ""),
        history=tuple(dict(m) for m in data.get("history", [])),
        query_type=data.get("query_type", ""),
        evidence=tuple(_evidence_from_json(e) for e in data.get("evidence", [])),
        answer=data.get("answer", ""),
        alternatives=tuple(data.get("alternatives", [])),
        aliases=tuple(data.get("aliases", [])),
        query_id=str(data.get("query_id") or data["task_id"]),
        chunking=data.get("chunking", ""),
        unanswerable=bool(data.get("unanswerable", False)),
        extra=dict(data.get("extra", {})),
    )


def task_lookup(tasks: Sequence[Task]) -> dict[str, Task]:
    """Every id a run file may use for a task (task id first, then aliases) → the task."""
    table: dict[str, Task] = {}
    for task in tasks:
        table.setdefault(task.task_id, task)
    for task in tasks:
        for alias in task.aliases:
            table.setdefault(alias, task)
    return table
