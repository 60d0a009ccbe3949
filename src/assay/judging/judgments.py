"""One judge's judgment of one unit: a rating, a comment and spans, checked and versioned.

A unit is a report (topic × run), a document (topic × doc id) or a citation (topic × run ×
sentence × cited doc id; no doc id for a sentence without citations). Every judge has their
own judgment of a unit. Spans are ``(start, end, text)`` with ``text`` equal to the judged
text at those offsets, trimmed of whitespace and not repeated:

- report: offsets into the report text (sentences joined by a space); a span that carries
  ``sentence_idx`` lies inside that sentence (a selection across sentences is stored as one
  span per sentence);
- document: offsets into the document's text (``title + "\\n\\n" + text``);
- citation: ``report_spans`` into the sentence, ``spans`` into the cited document.

Saving follows the items' rule: the caller sends the version it read (0 for a judgment not
made yet); a stale version gets :class:`~assay.errors.Conflict` and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeGuard

import sqlalchemy as sa

from assay.errors import Conflict, InvalidInput, NotFound
from assay.gold.project_config import DEFAULT_JUDGING_RATINGS, judging_ratings
from assay.judging.reports import Report, get_documents, get_report, topic_doc_ids
from assay.people.actors import AUTHOR_NAME
from assay.records import Project
from assay.store.db import reading, transaction, utcnow
from assay.store.import_lock import check_writable
from assay.store.judging_schema import judgments
from assay.store.schema import accounts
from assay.store.workspace import Workspace

MODES = ("report", "document", "citation")


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    text: str
    sentence_idx: int | None = None

    def as_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"start": self.start, "end": self.end, "text": self.text}
        if self.sentence_idx is not None:
            shown["sentence_idx"] = self.sentence_idx
        return shown

    @classmethod
    def from_json(cls, value: Any, where: str) -> Span:
        if not isinstance(value, dict):
            raise InvalidInput(f"{where}: a span must be an object with start, end and text")
        start, end, text = value.get("start"), value.get("end"), value.get("text")
        index = value.get("sentence_idx")
        if not _is_int(start) or not _is_int(end):
            raise InvalidInput(f"{where}: start and end must be integers")
        if not isinstance(text, str):
            raise InvalidInput(f"{where}: text must be a string")
        if index is not None and not _is_int(index):
            raise InvalidInput(f"{where}: sentence_idx must be an integer")
        return cls(start, end, text, index)


@dataclass(frozen=True, slots=True)
class Unit:
    mode: str
    topic_id: str
    run_id: str | None = None
    doc_id: str | None = None
    sentence_idx: int | None = None

    @property
    def key(self) -> str:
        """The unit as a JSON array: unique whatever characters the ids hold."""
        parts: list[Any] = [self.mode, self.topic_id]
        if self.mode == "report":
            parts.append(self.run_id)
        elif self.mode == "document":
            parts.append(self.doc_id)
        else:
            parts += [self.run_id, self.sentence_idx, self.doc_id]
        return json.dumps(parts, ensure_ascii=False)

    @classmethod
    def report(cls, topic_id: str, run_id: str) -> Unit:
        return cls("report", topic_id, run_id=run_id)

    @classmethod
    def document(cls, topic_id: str, doc_id: str) -> Unit:
        return cls("document", topic_id, doc_id=doc_id)

    @classmethod
    def citation(cls, topic_id: str, run_id: str, sentence_idx: int, doc_id: str | None) -> Unit:
        return cls("citation", topic_id, run_id=run_id, doc_id=doc_id, sentence_idx=sentence_idx)


@dataclass(frozen=True, slots=True)
class Judgment:
    id: int
    unit: Unit
    judge_id: int
    judge: str
    """The judge's display name (or user name)."""
    rating: str
    comment: str
    spans: tuple[Span, ...]
    report_spans: tuple[Span, ...]
    version: int
    updated_at: datetime

    def judged(self, not_rated: str = DEFAULT_JUDGING_RATINGS[0]) -> bool:
        """autojudge-annotate's rule: a unit counts as judged when it has a span, a rating
        other than "not rated", or a comment."""
        return bool(self.spans or self.report_spans or self.rating != not_rated or self.comment)


# ---------------------------------------------------------------- checks


@dataclass(frozen=True, slots=True)
class UnitTexts:
    """What a unit's spans point into: the report (report mode), the sentence and the cited
    document (citation mode), the document (document mode)."""

    report: Report | None
    spans_text: str | None
    report_spans_text: str | None


def unit_texts(
    ws: Workspace, project: Project, unit: Unit, *, conn: sa.Connection | None = None
) -> UnitTexts:
    """Check that the unit exists in the project and return the texts its spans point into."""
    if unit.mode not in MODES:
        raise InvalidInput(f"unknown judging mode {unit.mode!r}; choose one of: {', '.join(MODES)}")
    if unit.mode == "document":
        if not unit.doc_id:
            raise InvalidInput("a document judgment needs a doc_id")
        if unit.doc_id not in topic_doc_ids(ws, project, unit.topic_id, conn=conn):
            raise NotFound(f"topic {unit.topic_id!r} has no document {unit.doc_id!r}")
        doc = get_documents(ws, project, [unit.doc_id], conn=conn)[unit.doc_id]
        return UnitTexts(None, doc.text, None)
    if not unit.run_id:
        raise InvalidInput(f"a {unit.mode} judgment needs a run_id")
    report = get_report(ws, project, unit.topic_id, unit.run_id, conn=conn)
    if unit.mode == "report":
        return UnitTexts(report, report.text, None)
    index = unit.sentence_idx
    if index is None or not 0 <= index < len(report.sentences):
        raise InvalidInput(
            f"sentence_idx {index!r} is out of range: "
            f"the report has {len(report.sentences)} sentences"
        )
    sentence = report.sentences[index]
    if unit.doc_id is None:
        if sentence.citations:
            raise InvalidInput(f"sentence {index} cites documents: name the doc_id judged")
        return UnitTexts(report, None, sentence.text)
    if unit.doc_id not in sentence.citations:
        raise InvalidInput(f"sentence {index} does not cite {unit.doc_id!r}")
    held = get_documents(ws, project, [unit.doc_id], conn=conn)
    shown = held[unit.doc_id].text if unit.doc_id in held else None
    return UnitTexts(report, shown, sentence.text)


def check_spans(
    spans: Sequence[Span], text: str | None, where: str, *, report: Report | None = None
) -> None:
    """Refuse spans that do not match ``text`` (see the module docstring)."""
    if spans and text is None:
        raise InvalidInput(
            f"{where}: there is no text to mark spans in (the document is not in the project)"
        )
    seen: set[tuple[int, int]] = set()
    for number, span in enumerate(spans, 1):
        here = f"{where} {number}"
        assert text is not None
        if not 0 <= span.start < span.end <= len(text):
            raise InvalidInput(
                f"{here}: offsets {span.start}–{span.end} lie outside the text "
                f"({len(text)} characters)"
            )
        if text[span.start : span.end] != span.text:
            raise InvalidInput(
                f"{here}: text {span.text!r} does not match the text at {span.start}–{span.end} "
                f"({text[span.start : span.end]!r})"
            )
        if not span.text.strip() or span.text != span.text.strip():
            raise InvalidInput(f"{here}: a span must be trimmed of whitespace and not empty")
        if (span.start, span.end) in seen:
            raise InvalidInput(f"{here}: repeats the span at {span.start}–{span.end}")
        seen.add((span.start, span.end))
        if span.sentence_idx is not None:
            if report is None:
                raise InvalidInput(f"{here}: sentence_idx belongs to report spans only")
            starts = report.starts
            index = span.sentence_idx
            if not 0 <= index < len(starts):
                raise InvalidInput(f"{here}: sentence_idx {index} is out of range")
            end = starts[index] + len(report.sentences[index].text)
            if not (starts[index] <= span.start and span.end <= end):
                raise InvalidInput(f"{here}: lies outside sentence {index}")


# ---------------------------------------------------------------- reads and writes


def _select() -> sa.Select[Any]:
    return sa.select(judgments, AUTHOR_NAME.label("judge")).join(
        accounts, accounts.c.id == judgments.c.judge_id
    )


def _judgment(row: Any) -> Judgment:
    unit = Unit(row.mode, row.topic_id, row.run_id, row.doc_id, row.sentence_idx)
    return Judgment(
        row.id,
        unit,
        row.judge_id,
        row.judge,
        row.rating,
        row.comment,
        tuple(Span.from_json(s, "stored span") for s in row.spans),
        tuple(Span.from_json(s, "stored span") for s in row.report_spans),
        row.version,
        row.updated_at,
    )


def get_judgment(
    ws: Workspace,
    project: Project,
    unit: Unit,
    judge_id: int,
    *,
    conn: sa.Connection | None = None,
) -> Judgment | None:
    query = _select().where(
        judgments.c.project_id == project.id,
        judgments.c.unit_key == unit.key,
        judgments.c.judge_id == judge_id,
    )
    with reading(ws.engine, conn) as reader:
        row = reader.execute(query).first()
    return _judgment(row) if row is not None else None


def list_judgments(
    ws: Workspace,
    project: Project,
    *,
    mode: str | None = None,
    topic_id: str | None = None,
    run_id: str | None = None,
    judge_id: int | None = None,
    conn: sa.Connection | None = None,
) -> list[Judgment]:
    """The project's judgments, filtered, oldest first."""
    query = _select().where(judgments.c.project_id == project.id)
    for column, value in (
        (judgments.c.mode, mode),
        (judgments.c.topic_id, topic_id),
        (judgments.c.run_id, run_id),
        (judgments.c.judge_id, judge_id),
    ):
        if value is not None:
            query = query.where(column == value)
    with reading(ws.engine, conn) as reader:
        return [_judgment(row) for row in reader.execute(query.order_by(judgments.c.id))]


def save_judgment(
    ws: Workspace,
    project: Project,
    unit: Unit,
    *,
    judge_id: int,
    version: int,
    rating: str | None = None,
    comment: str = "",
    spans: Sequence[Span] = (),
    report_spans: Sequence[Span] = (),
    conn: sa.Connection | None = None,
) -> Judgment:
    """Create (``version`` 0) or replace one judge's judgment of a unit, after checking the
    unit, the rating and every span."""
    scale = judging_ratings(project)
    rating = scale[0] if rating is None else rating
    if rating not in scale:
        raise InvalidInput(f"rating {rating!r} is not on the project's scale: {', '.join(scale)}")
    if unit.mode != "citation" and report_spans:
        raise InvalidInput("report_spans belong to citation judgments only")
    with transaction(ws.engine, conn) as writer:
        check_writable(writer, project.id)
        texts = unit_texts(ws, project, unit, conn=writer)
        report = texts.report if unit.mode == "report" else None
        check_spans(spans, texts.spans_text, "span", report=report)
        check_spans(report_spans, texts.report_spans_text, "report span")
        now = utcnow()
        values = {
            "rating": rating,
            "comment": comment,
            "spans": [s.as_json() for s in spans],
            "report_spans": [s.as_json() for s in report_spans],
            "updated_at": now,
        }
        where = (
            judgments.c.project_id == project.id,
            judgments.c.unit_key == unit.key,
            judgments.c.judge_id == judge_id,
        )
        if version == 0:
            if writer.scalar(sa.select(judgments.c.version).where(*where)) is not None:
                raise Conflict(
                    "this judgment was saved meanwhile (reload to see it)",
                    key="raised.judgment_saved_meanwhile",
                )
            insert = judgments.insert().values(
                project_id=project.id,
                mode=unit.mode,
                unit_key=unit.key,
                topic_id=unit.topic_id,
                run_id=unit.run_id,
                doc_id=unit.doc_id,
                sentence_idx=unit.sentence_idx,
                judge_id=judge_id,
                version=1,
                created_at=now,
                **values,
            )
            try:
                with writer.begin_nested():
                    writer.execute(insert)
            except sa.exc.IntegrityError:
                raise Conflict(
                    "this judgment was saved meanwhile (reload to see it)",
                    key="raised.judgment_saved_meanwhile",
                ) from None
        else:
            done = writer.execute(
                judgments.update()
                .where(*where, judgments.c.version == version)
                .values(version=version + 1, **values)
            )
            if done.rowcount != 1:
                raise Conflict(
                    f"this judgment changed since version {version} was read (reload to see it)",
                    key="raised.judgment_changed",
                    version=version,
                )
        saved = get_judgment(ws, project, unit, judge_id, conn=writer)
    assert saved is not None
    return saved
