"""TREC RAG topics and runs into a project, in one transaction.

Topics are stored as they are (a topic imported again takes the new title and fields).
Reports must name a topic of the project (imported before or in the same call). A report for
a topic and run the project already holds is left alone when it is the same and refused when
it differs. The documents a run embeds become documents of the project (``<doc id>.txt``,
text ``title + "\\n\\n" + text``), one per doc id, so search, the document view and evidence
offsets work on them. Runs may embed the same doc id with different text (one passage longer
than another): the longest is kept and a warning says so; a doc id the project holds already
keeps its document. A report keeps the versions its run embeds that differ from the
project's (``own_documents``), so exports give each run its own. A run that embeds no documents
may cite doc ids the project does not hold; they are listed as missing, and their citations
are judged without the document.

Strict (the default): any problem refuses the whole import and the error lists them (file,
line, field); the project is unchanged. Lenient: refused lines are skipped and reported, the
rest is stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from assay.corpus.ingest import ingest_bytes
from assay.errors import InvalidInput
from assay.formats import Issue
from assay.formats.trec_rag import RunDocument, RunReport, Topic, read_runs, read_topics
from assay.judging.reports import get_documents
from assay.people.actors import acting_account
from assay.records import Project
from assay.store.db import transaction, utcnow
from assay.store.import_lock import check_writable
from assay.store.judging_schema import judging_documents, judging_reports, judging_topics
from assay.store.workspace import Workspace

SHOWN_ISSUES = 20
"""How many problems a refused import lists (and then how many more there are)."""


@dataclass
class RunImportReport:
    topics_added: int = 0
    topics_updated: int = 0
    reports_added: int = 0
    reports_unchanged: int = 0
    documents_added: int = 0
    documents_reused: int = 0
    missing_documents: list[str] = field(default_factory=list)
    """Cited doc ids that neither the runs nor the project hold."""
    issues: list[Issue] = field(default_factory=list)
    """Lines refused (lenient imports) and warnings (a doc id embedded again with other text)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "topics_added": self.topics_added,
            "topics_updated": self.topics_updated,
            "reports_added": self.reports_added,
            "reports_unchanged": self.reports_unchanged,
            "documents_added": self.documents_added,
            "documents_reused": self.documents_reused,
            "missing_documents": self.missing_documents,
            "issues": [
                {"where": i.where, "message": i.message, "severity": i.severity}
                for i in self.issues
            ],
        }


def import_judging_inputs(
    ws: Workspace,
    project: Project,
    *,
    topics: Path | None = None,
    runs: Iterable[Path] = (),
    lenient: bool = False,
    author: int | None = None,
) -> RunImportReport:
    """Read topics and run files (files or folders, gzip accepted) and store them."""
    read_t, issues = read_topics(topics) if topics is not None else ([], [])
    read_r, run_issues = read_runs(list(runs))
    issues += run_issues
    report = RunImportReport()
    with transaction(ws.engine, None) as conn:
        check_writable(conn, project.id)
        author = author if author is not None else acting_account(ws, conn=conn)
        _store_topics(conn, project.id, read_t, report)
        known = set(conn.scalars(_topic_ids(project.id)))
        stored = _stored_reports(conn, project.id)
        fresh: list[RunReport] = []
        for run in read_r:
            problem = _report_problem(run, known, stored)
            if problem == "same":
                report.reports_unchanged += 1
            elif problem:
                issues.append(Issue(run.where, problem))
            else:
                fresh.append(run)
        if issues and not lenient:
            raise InvalidInput(refusal(issues))
        report.issues = issues
        doc_map = _store_documents(ws, conn, project, fresh, author, report)
        for run in fresh:
            _insert_report(conn, project.id, run, doc_map)
            report.reports_added += 1
        report.missing_documents = sorted(
            {d for run in fresh for d in run.doc_ids if d not in doc_map}
        )
    return report


def refusal(issues: list[Issue]) -> str:
    lines = [str(i) for i in issues[:SHOWN_ISSUES]]
    more = len(issues) - SHOWN_ISSUES
    if more > 0:
        lines.append(f"... and {more} more")
    return (
        f"nothing imported: {len(issues)} problem(s); fix them or import with --lenient "
        "to skip those lines:\n" + "\n".join(lines)
    )


def _topic_ids(project_id: int) -> sa.Select[Any]:
    return sa.select(judging_topics.c.topic_id).where(judging_topics.c.project_id == project_id)


def _store_topics(
    conn: sa.Connection, project_id: int, topics: list[Topic], report: RunImportReport
) -> None:
    existing = set(conn.scalars(_topic_ids(project_id)))
    for topic in topics:
        values = {
            "title": topic.title,
            "problem_statement": topic.problem_statement,
            "background": topic.background,
            "extra": topic.extra,
        }
        if topic.topic_id in existing:
            conn.execute(
                judging_topics.update()
                .where(
                    judging_topics.c.project_id == project_id,
                    judging_topics.c.topic_id == topic.topic_id,
                )
                .values(**values)
            )
            report.topics_updated += 1
        else:
            conn.execute(
                judging_topics.insert().values(
                    project_id=project_id,
                    topic_id=topic.topic_id,
                    created_at=utcnow(),
                    **values,
                )
            )
            report.topics_added += 1


def _sentences_json(run: RunReport) -> list[dict[str, Any]]:
    return [{"text": s.text, "citations": list(s.citations)} for s in run.sentences]


def _stored_reports(conn: sa.Connection, project_id: int) -> dict[tuple[str, str], Any]:
    rows = conn.execute(
        sa.select(
            judging_reports.c.topic_id,
            judging_reports.c.run_id,
            judging_reports.c.team_id,
            judging_reports.c.sentences,
            judging_reports.c.source,
        ).where(judging_reports.c.project_id == project_id)
    )
    return {(r.topic_id, r.run_id): r for r in rows}


def _report_problem(
    run: RunReport, known: set[str], stored: dict[tuple[str, str], Any]
) -> str | None:
    """Why a report cannot be stored, "same" when the project holds it already, else None."""
    if run.topic_id not in known:
        return (
            f"topic {run.topic_id!r} of run {run.run_id!r} is not a topic of the project; "
            "import its topics first (or with --topics)"
        )
    held = stored.get((run.topic_id, run.run_id))
    if held is None:
        return None
    if held.team_id == run.team_id and held.sentences == _sentences_json(run):
        return "same"
    return (
        f"the project already holds a different report for topic {run.topic_id!r} and run "
        f"{run.run_id!r} (from {held.source})"
    )


def _store_documents(
    ws: Workspace,
    conn: sa.Connection,
    project: Project,
    runs: list[RunReport],
    author: int,
    report: RunImportReport,
) -> dict[str, RunDocument]:
    """doc id → the project's version of every doc id the runs name that the project holds
    now, adding the embedded documents it did not hold."""
    named = {d for run in runs for d in run.doc_ids}
    held = {
        doc_id: RunDocument(doc_id, doc.body, doc.title, doc.url)
        for doc_id, doc in get_documents(ws, project, named, conn=conn).items()
    }
    chosen: dict[str, RunDocument] = {}
    for run in runs:
        for doc_id, doc in run.documents.items():
            seen = chosen.setdefault(doc_id, doc)
            if seen == doc:
                continue
            if len(doc.shown_text) > len(seen.shown_text):
                chosen[doc_id] = doc
            report.issues.append(
                Issue(
                    run.where,
                    f"document {doc_id!r} differs from the one another run embeds; "
                    "the longest text is kept (judges mark spans in it; exports give each "
                    "run its own)",
                    "warning",
                )
            )
    for doc_id, doc in chosen.items():
        if doc_id in held:
            report.documents_reused += 1
            continue
        document = ingest_bytes(
            ws,
            project,
            doc_id.replace("/", "_") + ".txt",
            doc.shown_text.encode("utf-8"),
            metadata={"trec_doc_id": doc_id, "title": doc.title, "url": doc.url},
            author=author,
            conn=conn,
        )
        conn.execute(
            judging_documents.insert().values(
                project_id=project.id,
                doc_id=doc_id,
                document_id=document.id,
                title=doc.title,
                url=doc.url,
            )
        )
        held[doc_id] = doc
        report.documents_added += 1
    return held


def _own_documents(run: RunReport, held: dict[str, RunDocument]) -> dict[str, Any] | None:
    """The documents the run embeds in a version other than the project's, as
    ``{doc id: {text, title, url}}`` (None when there are none)."""
    own = {
        doc_id: {"text": doc.text, "title": doc.title, "url": doc.url}
        for doc_id, doc in run.documents.items()
        if doc_id in held and _version(doc) != _version(held[doc_id])
    }
    return own or None


def _version(doc: RunDocument) -> tuple[str, str | None, str | None]:
    return (doc.shown_text, doc.title or None, doc.url or None)


def _insert_report(
    conn: sa.Connection, project_id: int, run: RunReport, held: dict[str, RunDocument]
) -> None:
    conn.execute(
        judging_reports.insert().values(
            project_id=project_id,
            topic_id=run.topic_id,
            run_id=run.run_id,
            team_id=run.team_id,
            sentences=_sentences_json(run),
            doc_ids=list(run.doc_ids),
            metadata=run.metadata,
            source=run.where,
            created_at=utcnow(),
            own_documents=_own_documents(run, held),
        )
    )
