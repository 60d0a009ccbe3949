"""Reading what judges judge: topics, run reports, and the documents the reports cite."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from assay.errors import NotFound
from assay.formats.trec_rag import Sentence, Topic, report_text, sentence_starts
from assay.records import Project
from assay.store.db import reading
from assay.store.judging_schema import judging_documents, judging_reports, judging_topics
from assay.store.schema import documents
from assay.store.workspace import Workspace


@dataclass(frozen=True, slots=True)
class Report:
    topic_id: str
    run_id: str
    team_id: str
    sentences: tuple[Sentence, ...]
    doc_ids: tuple[str, ...]
    """Every doc id the report cites or embeds, first seen first."""
    metadata: dict[str, Any]
    source: str
    """The file and line it was imported from."""
    own_documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The documents its run embeds in a version other than the project's: ``{doc id:
    {text, title, url}}`` (autojudge exports give each run its own)."""

    @property
    def text(self) -> str:
        """The sentences joined by a space: report spans are offsets into this text."""
        return report_text(s.text for s in self.sentences)

    @property
    def starts(self) -> list[int]:
        """Where each sentence starts in :attr:`text`."""
        return sentence_starts(s.text for s in self.sentences)


@dataclass(frozen=True, slots=True)
class JudgedDocument:
    doc_id: str
    document_id: str
    """The project document that holds its text."""
    title: str | None
    url: str | None
    text: str
    """``title + "\\n\\n" + text`` (the run's text), as the project stores it: document and
    citation spans are offsets into this text."""

    @property
    def body(self) -> str:
        """The run's own ``text`` field: :attr:`text` without the title line."""
        prefix = f"{self.title}\n\n" if self.title else ""
        return self.text[len(prefix) :] if self.text.startswith(prefix) else self.text


def _topic(row: Any) -> Topic:
    return Topic(row.topic_id, row.title, row.problem_statement, row.background, row.extra)


def list_topics(
    ws: Workspace, project: Project, *, conn: sa.Connection | None = None
) -> list[Topic]:
    query = (
        sa.select(judging_topics)
        .where(judging_topics.c.project_id == project.id)
        .order_by(judging_topics.c.id)
    )
    with reading(ws.engine, conn) as reader:
        return [_topic(row) for row in reader.execute(query)]


def get_topic(
    ws: Workspace, project: Project, topic_id: str, *, conn: sa.Connection | None = None
) -> Topic:
    query = sa.select(judging_topics).where(
        judging_topics.c.project_id == project.id, judging_topics.c.topic_id == topic_id
    )
    with reading(ws.engine, conn) as reader:
        row = reader.execute(query).first()
    if row is None:
        raise NotFound(
            f"project {project.name!r} has no judging topic {topic_id!r}",
            key="raised.no_judging_topic",
            project=project.name,
            topic_id=topic_id,
        )
    return _topic(row)


def _report(row: Any) -> Report:
    sentences = tuple(Sentence(s["text"], tuple(s["citations"])) for s in row.sentences)
    return Report(
        row.topic_id,
        row.run_id,
        row.team_id,
        sentences,
        tuple(row.doc_ids),
        row.metadata,
        row.source,
        row.own_documents or {},
    )


def list_reports(
    ws: Workspace,
    project: Project,
    *,
    topic_id: str | None = None,
    conn: sa.Connection | None = None,
) -> list[Report]:
    """The project's reports (of one topic), by topic then run id."""
    query = sa.select(judging_reports).where(judging_reports.c.project_id == project.id)
    if topic_id is not None:
        query = query.where(judging_reports.c.topic_id == topic_id)
    query = query.order_by(judging_reports.c.topic_id, judging_reports.c.run_id)
    with reading(ws.engine, conn) as reader:
        return [_report(row) for row in reader.execute(query)]


def get_report(
    ws: Workspace,
    project: Project,
    topic_id: str,
    run_id: str,
    *,
    conn: sa.Connection | None = None,
) -> Report:
    query = sa.select(judging_reports).where(
        judging_reports.c.project_id == project.id,
        judging_reports.c.topic_id == topic_id,
        judging_reports.c.run_id == run_id,
    )
    with reading(ws.engine, conn) as reader:
        row = reader.execute(query).first()
    if row is None:
        raise NotFound(
            f"project {project.name!r} has no report of run {run_id!r} for topic {topic_id!r}"
        )
    return _report(row)


def get_documents(
    ws: Workspace,
    project: Project,
    doc_ids: Iterable[str],
    *,
    conn: sa.Connection | None = None,
) -> dict[str, JudgedDocument]:
    """The documents the project holds among ``doc_ids`` (missing ones are left out), in
    the order ``doc_ids`` names them: files written from them must not depend on the order
    a database happens to return rows in (PostgreSQL's varies with its plan)."""
    wanted = list(dict.fromkeys(doc_ids))
    if not wanted:
        return {}
    query = (
        sa.select(
            judging_documents.c.doc_id,
            judging_documents.c.document_id,
            judging_documents.c.title,
            judging_documents.c.url,
            documents.c.text,
        )
        .join(documents, documents.c.id == judging_documents.c.document_id)
        .where(judging_documents.c.project_id == project.id)
        .where(judging_documents.c.doc_id.in_(wanted))
    )
    with reading(ws.engine, conn) as reader:
        found = {row.doc_id: JudgedDocument(*row) for row in reader.execute(query)}
    return {d: found[d] for d in wanted if d in found}


def topic_doc_ids(
    ws: Workspace, project: Project, topic_id: str, *, conn: sa.Connection | None = None
) -> list[str]:
    """The documents of a topic (document mode's units): every doc id its reports cite or
    embed that the project holds, in the order the runs (by run id) first name them."""
    named = [
        d
        for report in list_reports(ws, project, topic_id=topic_id, conn=conn)
        for d in report.doc_ids
    ]
    query = sa.select(judging_documents.c.doc_id).where(
        judging_documents.c.project_id == project.id, judging_documents.c.doc_id.in_(set(named))
    )
    with reading(ws.engine, conn) as reader:
        held = set(reader.scalars(query))  # ids only: the texts are not needed to list them
    return [d for d in dict.fromkeys(named) if d in held]
