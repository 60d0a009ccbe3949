"""A project's judgments in and out as autojudge-annotate's JSON Lines
(:mod:`assay.formats.autojudge`).

**In**: judgments made elsewhere (autojudge-annotate's page, the offline page, another Assay)
merged into a project by judge, in one transaction.

Each line's ``username`` is a judge: the account of that user name, else of that display
name, else a new account (as imports find authors, :mod:`assay.people.actors`); a line
without one is the importing account's. A judge's line replaces that judge's judgment of the
unit (other judges' judgments of it stay); the same judgment again is left alone.

Every line is checked before anything is written: its topic, run, document and sentence
must be in the project, its rating on the project's scale, its spans must match the judged
text (:func:`assay.judging.judgments.check_spans`), and a judge judges a unit once per file.
Strict (the default): any problem refuses the whole file, listing them (file, line, field);
the project is unchanged. Lenient: those lines are skipped and reported.

**Out**: only judged units go out (a span, a rating other than the scale's first, or a
comment: the page's rule), one line per judge and unit, in the modes asked, report then
document then citation, each in the order the judgments were first made. ``username`` is
the judge's name as exports show it (display name, else user name), which the importer finds
again. A report's ``documents`` are the documents it names that the project holds, with the
run's own text (without the title line).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from assay.errors import AssayError, InvalidInput
from assay.formats import Issue
from assay.formats.autojudge import (
    JudgmentRecord,
    Marks,
    citation_record,
    document_record,
    read_judgments,
    report_record,
    write_records,
)
from assay.formats.trec_rag import RunDocument, RunReport
from assay.gold.project_config import judging_ratings
from assay.judging.judgments import (
    MODES,
    Judgment,
    Span,
    Unit,
    check_spans,
    list_judgments,
    save_judgment,
)
from assay.judging.reports import (
    JudgedDocument,
    Report,
    get_documents,
    get_report,
    list_reports,
    list_topics,
)
from assay.judging.run_import import refusal
from assay.people.actors import account_ids, acting_account
from assay.records import Project
from assay.store.db import reading, transaction
from assay.store.import_lock import check_writable
from assay.store.workspace import Workspace


class JudgmentImportReport:
    added: int = 0
    updated: int = 0
    """Judgments of a judge the project held, replaced by the file's."""
    unchanged: int = 0
    judges: list[str] = field(default_factory=list)
    """The names of the judges whose lines were imported."""
    datasets: list[str] = field(default_factory=list)
    """The ``dataset`` labels the lines carried."""
    issues: list[Issue] = field(default_factory=list)
    """Lines refused (lenient imports), and warnings (spans moved to the project's version of
    their document)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "judges": self.judges,
            "datasets": self.datasets,
            "issues": [
                {"where": i.where, "message": i.message, "severity": i.severity}
                for i in self.issues
            ],
        }


@dataclass(frozen=True, slots=True)
class _Checked:
    record: JudgmentRecord
    unit: Unit
    spans: tuple[Span, ...]
    report_spans: tuple[Span, ...]


def import_judgments(
    ws: Workspace,
    project: Project,
    path: Path,
    *,
    lenient: bool = False,
    author: int | None = None,
) -> JudgmentImportReport:
    """Read autojudge JSON Lines (a file or a folder of them, gzip accepted) and merge them
    into the project's judgments; ``author`` is who lines without a username belong to
    (default: the acting account)."""
    records, issues = read_judgments(path)
    report = JudgmentImportReport()
    with transaction(ws.engine, None) as conn:
        check_writable(conn, project.id)
        checker = _Checker(ws, project, conn)
        checked: list[_Checked] = []
        first: dict[tuple[str, str], str] = {}
        for record in records:
            try:
                found = checker.check(record)
            except AssayError as exc:
                issues.append(Issue(record.where, str(exc)))
                continue
            key = (record.marks.username, found.unit.key)
            if key in first:
                issues.append(
                    Issue(
                        record.where,
                        f"a second judgment of the same unit by {record.marks.username!r} "
                        f"(the first is at {first[key]})",
                    )
                )
                continue
            first[key] = record.where
            checked.append(found)
        if issues and not lenient:
            raise InvalidInput(refusal(issues))
        report.issues = issues + checker.warnings
        judges = account_ids(conn, [c.record.marks.username for c in checked])
        default = author if author is not None else acting_account(ws, conn=conn)
        stored = {(j.unit.key, j.judge_id): j for j in list_judgments(ws, project, conn=conn)}
        for item in checked:
            marks = item.record.marks
            judge_id = judges.get(marks.username, default)
            held = stored.get((item.unit.key, judge_id))
            if held is not None and (
                (held.rating, held.comment, held.spans, held.report_spans)
                == (marks.rating, marks.comment, item.spans, item.report_spans)
            ):
                report.unchanged += 1
                continue
            stored[(item.unit.key, judge_id)] = save_judgment(
                ws,
                project,
                item.unit,
                judge_id=judge_id,
                version=held.version if held is not None else 0,
                rating=marks.rating,
                comment=marks.comment,
                spans=item.spans,
                report_spans=item.report_spans,
                conn=conn,
            )
            if held is None:
                report.added += 1
            else:
                report.updated += 1
    report.judges = sorted({c.record.marks.username for c in checked})
    report.datasets = sorted({c.record.dataset for c in checked if c.record.dataset})
    return report


class _Checker:
    """Checks lines against the project, naming the field of each problem; reads each
    topic's reports and documents once."""

    def __init__(self, ws: Workspace, project: Project, conn: sa.Connection) -> None:
        self.ws, self.project, self.conn = ws, project, conn
        self.scale = judging_ratings(project)
        self.topics = {t.topic_id for t in list_topics(ws, project, conn=conn)}
        self.reports: dict[str, dict[str, Report]] = {}
        self.documents: dict[str, dict[str, str]] = {}
        """Per topic: doc id → the text its spans point into."""
        self.warnings: list[Issue] = []
        """Spans moved to the project's version of their document."""

    def _topic(self, topic_id: str) -> tuple[dict[str, Report], dict[str, str]]:
        if topic_id not in self.topics:
            raise InvalidInput(
                f"field 'topic_id': the project has no judging topic {topic_id!r} "
                "(import its topics and runs first: assay judge import-runs)"
            )
        if topic_id not in self.reports:
            reports = list_reports(self.ws, self.project, topic_id=topic_id, conn=self.conn)
            self.reports[topic_id] = {r.run_id: r for r in reports}
            named = [d for r in reports for d in r.doc_ids]
            held = get_documents(self.ws, self.project, named, conn=self.conn)
            self.documents[topic_id] = {d: doc.text for d, doc in held.items()}
        return self.reports[topic_id], self.documents[topic_id]

    def check(self, record: JudgmentRecord) -> _Checked:
        if record.marks.rating not in self.scale:
            raise InvalidInput(
                f"field 'rating': {record.marks.rating!r} is not on the project's scale: "
                f"{', '.join(self.scale)}"
            )
        reports, documents = self._topic(record.topic_id)
        spans = _spans(record.marks.spans, "spans")
        report_spans = _spans(record.marks.report_spans, "report_spans")
        if record.mode == "document":
            assert record.doc_id is not None
            if record.doc_id not in documents:
                raise InvalidInput(
                    f"field 'docid': topic {record.topic_id!r} has no document "
                    f"{record.doc_id!r} in the project"
                )
            spans = self._moved(record, spans, documents[record.doc_id])
            check_spans(spans, documents[record.doc_id], "field 'spans' span")
            return _Checked(record, Unit.document(record.topic_id, record.doc_id), spans, ())
        run_field = "run_id" if record.mode == "report" else "citation.report.run_id"
        assert record.run_id is not None
        report = reports.get(record.run_id)
        if report is None:
            raise InvalidInput(
                f"field {run_field!r}: the project has no report of run {record.run_id!r} "
                f"for topic {record.topic_id!r}"
            )
        if record.mode == "report":
            check_spans(spans, report.text, "field 'spans' span", report=report)
            return _Checked(record, Unit.report(record.topic_id, record.run_id), spans, ())
        return self._citation(record, report, documents, spans, report_spans)

    def _citation(
        self,
        record: JudgmentRecord,
        report: Report,
        documents: dict[str, str],
        spans: tuple[Span, ...],
        report_spans: tuple[Span, ...],
    ) -> _Checked:
        index, doc_id = record.sentence_idx, record.doc_id
        assert index is not None and record.run_id is not None
        if not 0 <= index < len(report.sentences):
            raise InvalidInput(
                f"field 'citation.sentence_idx': {index} is out of range (the report of run "
                f"{record.run_id!r} has {len(report.sentences)} sentences)"
            )
        cited = report.sentences[index].citations
        if doc_id is None and cited:
            raise InvalidInput(
                f"field 'citation.docid': sentence {index} cites documents; name the one judged"
            )
        if doc_id is not None and doc_id not in cited:
            raise InvalidInput(f"field 'citation.docid': sentence {index} does not cite {doc_id!r}")
        shown = documents.get(doc_id) if doc_id is not None else None
        if shown is not None:
            spans = self._moved(record, spans, shown)
        check_spans(spans, shown, "field 'spans' span")
        check_spans(report_spans, report.sentences[index].text, "field 'report_spans' span")
        unit = Unit.citation(record.topic_id, record.run_id, index, doc_id)
        return _Checked(record, unit, spans, report_spans)

    def _moved(
        self, record: JudgmentRecord, spans: tuple[Span, ...], held: str
    ) -> tuple[Span, ...]:
        """Document spans marked in another version of the document (the one the line
        carries: runs embed passages of different lengths, the project keeps the longest),
        moved to where their text is in the project's version when it is there once, with a
        warning. Other spans are left for :func:`check_spans` to judge."""
        judged = record.judged_text
        if judged is None or judged == held:
            return spans
        moved = []
        for number, span in enumerate(spans, 1):
            here = held[span.start : span.end] == span.text
            if here or judged[span.start : span.end] != span.text:
                moved.append(span)
                continue
            where = f"field 'spans' span {number}: marked in another version of document"
            found = held.count(span.text)
            if found != 1:
                times = "not found" if not found else "found more than once"
                raise InvalidInput(
                    f"{where} {record.doc_id!r}, and its text is {times} in the project's"
                )
            start = held.index(span.text)
            end = start + len(span.text)
            moved.append(Span(start, end, span.text, span.sentence_idx))
            message = (
                f"{where} {record.doc_id!r}: moved from {span.start}–{span.end} to {start}–{end}"
            )
            self.warnings.append(Issue(record.where, message, "warning"))
        return tuple(moved)


def _spans(values: tuple[dict[str, Any], ...], name: str) -> tuple[Span, ...]:
    return tuple(Span.from_json(v, f"field '{name}[{i}]'") for i, v in enumerate(values))


# ---------------------------------------------------------------- out


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
