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
from assay.judging.judgments import MODES, Judgment, list_judgments
from assay.judging.reports import JudgedDocument, get_documents, get_report
from assay.records import Project
from assay.store.db import reading
from assay.store.workspace import Workspace


def run_document(doc: JudgedDocument) -> RunDocument:
    """A held document as the run embedded it (its own text, without the title line)."""
    return RunDocument(doc.doc_id, doc.body, doc.title, doc.url)


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
        reports: dict[tuple[str, str], RunReport] = {}
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
    reports: dict[tuple[str, str], RunReport],
) -> dict[str, Any]:
    unit = judgment.unit
    marks = Marks(
        judgment.judge,
        judgment.rating,
        judgment.comment,
        tuple(s.as_json() for s in judgment.spans),
        tuple(s.as_json() for s in judgment.report_spans),
    )
    if unit.mode == "document":
        assert unit.doc_id is not None
        held = get_documents(ws, project, [unit.doc_id], conn=conn)[unit.doc_id]
        return document_record(dataset, marks, unit.topic_id, run_document(held))
    assert unit.run_id is not None
    key = (unit.topic_id, unit.run_id)
    if key not in reports:
        stored = get_report(ws, project, unit.topic_id, unit.run_id, conn=conn)
        docs = get_documents(ws, project, stored.doc_ids, conn=conn)
        reports[key] = RunReport(
            stored.topic_id,
            stored.run_id,
            stored.team_id,
            stored.sentences,
            {d: run_document(doc) for d, doc in docs.items()},
        )
    report = reports[key]
    if unit.mode == "report":
        return report_record(dataset, marks, report)
    assert unit.sentence_idx is not None
    document = report.documents.get(unit.doc_id) if unit.doc_id is not None else None
    return citation_record(dataset, marks, report, unit.sentence_idx, document, unit.doc_id)


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
