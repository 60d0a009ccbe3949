"""Importing a production log as candidates: read, scrub, anchor, store, group.

One import is one transaction. The log is read line by line (:mod:`assay.candidates.logs`,
:mod:`assay.candidates.traces`) and written in batches, so memory does not grow with the
file. Questions, answers and passages found in no document are scrubbed before they are
stored (:mod:`assay.candidates.scrubbing`); passages are anchored
(:mod:`assay.candidates.passages`). A line that cannot be read stops the import with an
error naming the line and the field, and nothing of it is stored (what was stored before is
untouched); with ``skip_bad`` such lines are left out and listed in the report instead.
Questions of a session without turn numbers are numbered in the order of the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from assay.candidates.grouping import Grouping, regroup
from assay.candidates.logs import LineProblem, LogRecord, read_jsonl
from assay.candidates.minhash import normalise
from assay.candidates.passages import PassageAnchors
from assay.candidates.scrubbing import KINDS, Scrubber
from assay.candidates.traces import read_langfuse, read_openinference
from assay.errors import InvalidInput
from assay.records import Project
from assay.store.candidates_schema import candidate_imports, candidates
from assay.store.db import transaction, utcnow
from assay.store.workspace import Workspace

SHAPES = ("jsonl", "openinference", "langfuse")
"""The log shapes an import reads (docs/formats.md describes each)."""
BATCH = 1_000
PROBLEMS_LISTED = 100
UNLOCATED_LISTED = 20
MAX_QUESTION = 20_000


@dataclass
class ImportReport:
    import_id: int = 0
    name: str = ""
    shape: str = "jsonl"
    lines: int = 0
    stored: int = 0
    skipped: int = 0
    masks: dict[str, int] = field(default_factory=dict)
    anchored: int = 0
    unlocated: int = 0
    unlocated_examples: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    sessions: int = 0
    grouping: Grouping | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "import_id": self.import_id,
            "name": self.name,
            "shape": self.shape,
            "lines": self.lines,
            "stored": self.stored,
            "skipped": self.skipped,
            "masks": dict(self.masks),
            "passages": {
                "anchored": self.anchored,
                "unlocated": self.unlocated,
                "unlocated_examples": self.unlocated_examples,
            },
            "problems": self.problems,
            "sessions": self.sessions,
            "grouping": self.grouping.as_json() if self.grouping else None,
        }


class _Counted:
    """Lines of a file, counted as they are read."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.lines = lines
        self.count = 0

    def __iter__(self) -> Iterator[str]:
        for line in self.lines:
            self.count += 1
            yield line


def _records(
    shape: str, lines: Iterable[str], mapping: Mapping[str, str]
) -> Iterator[LogRecord | LineProblem]:
    if shape == "jsonl":
        return read_jsonl(lines, mapping)
    if shape == "openinference":
        return read_openinference(lines)
    if shape == "langfuse":
        return read_langfuse(lines)
    raise InvalidInput(f"unknown log shape {shape!r}; choose one of: {', '.join(SHAPES)}")


def import_candidates(
    ws: Workspace,
    project: Project,
    lines: Iterable[str],
    *,
    name: str,
    shape: str = "jsonl",
    mapping: Mapping[str, str] | None = None,
    scrubber: Scrubber | None = None,
    skip_bad: bool = False,
    created_by: int | None = None,
    conn: sa.Connection | None = None,
) -> ImportReport:
    """Import a log's lines as candidates of ``project`` and group the project again."""
    if shape not in SHAPES:
        raise InvalidInput(f"unknown log shape {shape!r}; choose one of: {', '.join(SHAPES)}")
    scrubber = scrubber or Scrubber(kinds=KINDS)
    counted = _Counted(lines)
    report = ImportReport(name=name[:300], shape=shape)
    with transaction(ws.engine, conn) as conn:
        report.import_id = conn.execute(
            candidate_imports.insert()
            .values(
                project_id=project.id,
                name=report.name,
                shape=shape,
                lines=0,
                stored=0,
                skipped=0,
                report={},
                created_by=created_by,
                created_at=utcnow(),
            )
            .returning(candidate_imports.c.id)
        ).scalar_one()
        anchors = PassageAnchors(ws, project, conn)
        turns: dict[str, int] = {}
        batch: list[dict[str, Any]] = []
        for record in _records(shape, counted, mapping or {}):
            if isinstance(record, LineProblem):
                if not skip_bad:
                    raise InvalidInput(
                        f"{name}: {record}. Nothing of this file was stored; fix the line, "
                        "or import with skip-bad to leave such lines out"
                    )
                report.skipped += 1
                if len(report.problems) < PROBLEMS_LISTED:
                    report.problems.append(str(record))
                continue
            batch.append(_row(record, report, anchors, scrubber, turns, project))
            if len(batch) >= BATCH:
                conn.execute(candidates.insert(), batch)
                report.stored += len(batch)
                batch = []
        if batch:
            conn.execute(candidates.insert(), batch)
            report.stored += len(batch)
        if not report.stored and not report.skipped:
            raise InvalidInput(f"{name}: the file holds no questions")
        report.lines = counted.count
        report.masks = dict(sorted(scrubber.counts.items()))
        report.anchored, report.unlocated = anchors.anchored, anchors.unlocated
        report.sessions = sum(1 for count in turns.values() if count > 1)
        report.grouping = regroup(ws, project, conn=conn)
        saved = report.as_json()
        conn.execute(
            candidate_imports.update()
            .where(candidate_imports.c.id == report.import_id)
            .values(lines=report.lines, stored=report.stored, skipped=report.skipped, report=saved)
        )
    return report


def _row(
    record: LogRecord,
    report: ImportReport,
    anchors: PassageAnchors,
    scrubber: Scrubber,
    turns: dict[str, int],
    project: Project,
) -> dict[str, Any]:
    question = scrubber.scrub(record.question[:MAX_QUESTION])
    passages = []
    for raw in record.passages:
        placed = anchors.anchor(raw)
        if placed["anchor"] != "ok":
            placed["text"] = scrubber.scrub(placed["text"])
            if len(report.unlocated_examples) < UNLOCATED_LISTED:
                report.unlocated_examples.append(
                    {"line": record.line, "source": placed["source"], "text": placed["text"][:200]}
                )
        passages.append(placed)
    turn = record.turn
    if record.session:
        turns[record.session] = turns.get(record.session, 0) + 1
        turn = turn if turn is not None else turns[record.session]
    return {
        "project_id": project.id,
        "import_id": report.import_id,
        "line": record.line,
        "session": record.session,
        "turn": turn or 1,
        "question": question,
        "norm": normalise(question),
        "answer": scrubber.scrub(record.answer),
        "passages": passages,
        "feedback": record.feedback,
        "asked_at": record.asked_at,
        "group_id": None,
        "item_id": None,
        "extra": record.extra,
    }
