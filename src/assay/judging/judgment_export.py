"""A project's judgments as autojudge-annotate's JSON Lines (:mod:`assay.formats.autojudge`).

Only judged units go out (a span, a rating other than the scale's first, or a comment: the
page's rule), one line per judge and unit, in the modes asked, report then document then
citation, each in the order the judgments were first made. ``username`` is the judge's name
as exports show it (display name, else user name), which the importer finds again. A
report's ``documents`` are the documents it names that the project holds, with the run's
own text (without the title line).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from assay.errors import InvalidInput
from assay.formats.autojudge import (
    Marks,
    citation_record,
    document_record,
    report_record,
    write_records,
)
from assay.formats.trec_rag import RunDocument, RunReport
from assay.gold.project_config import judging_ratings
from assay.judging.judgments import MODES, Judgment, Span, list_judgments
from assay.judging.reports import JudgedDocument, get_documents, get_report
from assay.records import Project
from assay.store.db import reading
from assay.store.workspace import Workspace


def run_document(doc: JudgedDocument) -> RunDocument:
    """The project's version of a document (its text without the title line)."""
    return RunDocument(doc.doc_id, doc.body, doc.title, doc.url)


def own_document(doc_id: str, fields: dict[str, Any]) -> RunDocument:
    """A run's own version of a document, as the report keeps it."""
    return RunDocument(
        doc_id, str(fields.get("text") or ""), fields.get("title"), fields.get("url")
    )


def spans_into(spans: tuple[Span, ...], text: str, marked_in: str) -> tuple[Span, ...] | None:
    """The spans marked in ``marked_in`` placed in another version ``text`` of their
    document: kept where their text is at their offsets in both, else moved to where it is
    in ``text`` when it is there once and once in ``marked_in`` (so an import moves it back
    to the same place); None when one cannot be placed."""
    placed = []
    for span in spans:
        if text[span.start : span.end] == span.text:
            placed.append(span)
        elif text.count(span.text) == 1 and marked_in.count(span.text) == 1:
            start = text.index(span.text)
            placed.append(Span(start, start + len(span.text), span.text, span.sentence_idx))
        else:
            return None
    return tuple(placed)


def judgment_records(
    ws: Workspace,
    project: Project,
    *,
    modes: Iterable[str] = MODES,
    dataset: str | None = None,
    topic_ids: Iterable[str] = (),
    judge_id: int | None = None,
) -> Iterator[dict[str, Any]]:
    """The records of the judged units (of ``topic_ids`` when given, of one judge when
    ``judge_id`` is given); ``dataset`` defaults to the project's name. The modes are
    checked at once; the records are read as they are taken."""
    modes = list(dict.fromkeys(modes))
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise InvalidInput(f"unknown judging mode {unknown[0]!r}; choose from: {', '.join(MODES)}")
    label = project.name if dataset is None else dataset
    return _records(ws, project, modes, label, set(topic_ids), judge_id)


def _records(
    ws: Workspace,
    project: Project,
    modes: list[str],
    dataset: str,
    topics: set[str],
    judge_id: int | None,
) -> Iterator[dict[str, Any]]:
    not_rated = judging_ratings(project)[0]
    with reading(ws.engine, None) as conn:
        reports: dict[tuple[str, str], tuple[RunReport, dict[str, RunDocument]]] = {}
        for mode in modes:
            for judgment in list_judgments(ws, project, mode=mode, judge_id=judge_id, conn=conn):
                if topics and judgment.unit.topic_id not in topics:
                    continue
                if judgment.judged(not_rated):
                    yield _record(ws, project, conn, judgment, dataset, reports)


def _record(
    ws: Workspace,
    project: Project,
    conn: sa.Connection,
    judgment: Judgment,
    dataset: str,
    reports: dict[tuple[str, str], tuple[RunReport, dict[str, RunDocument]]],
) -> dict[str, Any]:
    unit = judgment.unit
    marks = _marks(judgment, judgment.spans)
    if unit.mode == "document":
        assert unit.doc_id is not None
        held = get_documents(ws, project, [unit.doc_id], conn=conn)[unit.doc_id]
        return document_record(dataset, marks, unit.topic_id, run_document(held))
    assert unit.run_id is not None
    key = (unit.topic_id, unit.run_id)
    if key not in reports:
        reports[key] = _run_report(ws, project, conn, unit.topic_id, unit.run_id)
    report, projects = reports[key]
    if unit.mode == "report":
        return report_record(dataset, marks, report)
    assert unit.sentence_idx is not None
    document = report.documents.get(unit.doc_id) if unit.doc_id is not None else None
    if document is not None and unit.doc_id in projects:
        project_version = projects[unit.doc_id]
        placed = spans_into(judgment.spans, document.shown_text, project_version.shown_text)
        if placed is None:  # marked where the run's version has no such text
            document = project_version
        else:
            marks = _marks(judgment, placed)
    return citation_record(dataset, marks, report, unit.sentence_idx, document, unit.doc_id)


def _marks(judgment: Judgment, spans: tuple[Span, ...]) -> Marks:
    return Marks(
        judgment.judge,
        judgment.rating,
        judgment.comment,
        tuple(s.as_json() for s in spans),
        tuple(s.as_json() for s in judgment.report_spans),
    )


def _run_report(
    ws: Workspace, project: Project, conn: sa.Connection, topic_id: str, run_id: str
) -> tuple[RunReport, dict[str, RunDocument]]:
    """A report with its run's own documents, and the project's versions of those that
    differ (which the citation spans were marked in)."""
    stored = get_report(ws, project, topic_id, run_id, conn=conn)
    docs = get_documents(ws, project, stored.doc_ids, conn=conn)
    own = {d: own_document(d, stored.own_documents[d]) for d in docs if d in stored.own_documents}
    projects = {d: run_document(docs[d]) for d in own}
    shown = {d: own.get(d) or run_document(doc) for d, doc in docs.items()}
    report = RunReport(stored.topic_id, stored.run_id, stored.team_id, stored.sentences, shown)
    return report, projects


def export_judgments(
    ws: Workspace,
    project: Project,
    out: Path,
    *,
    modes: Iterable[str] = MODES,
    dataset: str | None = None,
    topic_ids: Iterable[str] = (),
    judge_id: int | None = None,
) -> int:
    """Write :func:`judgment_records` to ``out``; returns how many lines were written."""
    records = judgment_records(
        ws, project, modes=modes, dataset=dataset, topic_ids=topic_ids, judge_id=judge_id
    )
    with out.open("w", encoding="utf-8") as handle:
        return write_records(records, handle)
