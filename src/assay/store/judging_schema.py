"""The tables of judging mode (issue 15): TREC RAG topics, the reports of the runs that answered
them, the documents those reports cite, and human judgments of all three. Same metadata as
:mod:`assay.store.schema`; migration 0013 makes them.

Ids from the TREC files (``topic_id``, ``run_id``, ``doc_id``) are kept as the strings the
files hold; a judged unit is named by them, so judgments exported and imported elsewhere stay
comparable.
"""

from __future__ import annotations

import sqlalchemy as sa

from assay.store.schema import Timestamp, metadata


def _project_id() -> sa.Column[int]:
    return sa.Column(
        "project_id",
        sa.Integer,
        sa.ForeignKey("projects.id", ondelete="CASCADE"),
        nullable=False,
    )


# A TREC RAG request (autojudge-base ``Request``): ``topic_id`` is its ``request_id``; fields
# other than the four shown (collection_ids, limit, word_limit, ...) are kept in ``extra``.
judging_topics = sa.Table(
    "judging_topics",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    _project_id(),
    sa.Column("topic_id", sa.String(200), nullable=False),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("problem_statement", sa.Text, nullable=False),
    sa.Column("background", sa.Text, nullable=False),
    sa.Column("extra", sa.JSON, nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.UniqueConstraint("project_id", "topic_id"),
)

# One run's report for one topic. ``sentences`` is the normalised list
# ``[{"text": ..., "citations": [doc_id, ...]}]`` (citations in priority order, whatever style
# the file used); ``doc_ids`` every document the report cites or embeds, in first-seen order;
# ``source`` the file name and line it came from; ``own_documents`` the documents the run
# embeds in a version other than the project's (``{doc_id: {text, title, url}}``, NULL when
# none; migration 0021), so exports give each run its own.
judging_reports = sa.Table(
    "judging_reports",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    _project_id(),
    sa.Column("topic_id", sa.String(200), nullable=False),
    sa.Column("run_id", sa.String(200), nullable=False),
    sa.Column("team_id", sa.String(200), nullable=False),
    sa.Column("sentences", sa.JSON, nullable=False),
    sa.Column("doc_ids", sa.JSON, nullable=False),
    sa.Column("metadata", sa.JSON, nullable=False),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("own_documents", sa.JSON, nullable=True),
    sa.UniqueConstraint("project_id", "topic_id", "run_id"),
)

# A document a run embedded, as a document of the project: its text there is
# ``title + "\n\n" + text`` (the text judges select spans in, as autojudge-annotate shows it),
# or ``text`` alone when it has no title. ``title`` and ``url`` are the run's own fields.
judging_documents = sa.Table(
    "judging_documents",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    _project_id(),
    sa.Column("doc_id", sa.String(500), nullable=False),
    sa.Column(
        "document_id",
        sa.String(36),
        sa.ForeignKey("documents.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("title", sa.Text, nullable=True),
    sa.Column("url", sa.Text, nullable=True),
    sa.UniqueConstraint("project_id", "doc_id"),
)

# One judge's judgment of one unit. ``mode``: report (topic × run), document (topic × doc_id)
# or citation (topic × run × sentence × cited doc_id; doc_id None for a sentence without
# citations). ``unit_key`` is the unit as a JSON array (unique per judge, whatever the ids
# contain). ``spans``: ``[{start, end, text[, sentence_idx]}]`` over the report text (report),
# the document text (document, citation); ``report_spans`` over the sentence (citation).
judgments = sa.Table(
    "judgments",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    _project_id(),
    sa.Column("mode", sa.String(20), nullable=False),
    sa.Column("unit_key", sa.Text, nullable=False),
    sa.Column("topic_id", sa.String(200), nullable=False),
    sa.Column("run_id", sa.String(200), nullable=True),
    sa.Column("doc_id", sa.String(500), nullable=True),
    sa.Column("sentence_idx", sa.Integer, nullable=True),
    sa.Column("judge_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("rating", sa.String(200), nullable=False),
    sa.Column("comment", sa.Text, nullable=False),
    sa.Column("spans", sa.JSON, nullable=False),
    sa.Column("report_spans", sa.JSON, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
    sa.UniqueConstraint("project_id", "unit_key", "judge_id"),
    sa.Index(None, "project_id", "mode", "topic_id"),
)

# A lead's assignment of one topic, in one mode, to one judge: the judge's overview lists it
# first and marks it; progress per judge follows from their judgments. Several judges may
# share a topic (agreement needs them to).
judging_assignments = sa.Table(
    "judging_assignments",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    _project_id(),
    sa.Column("topic_id", sa.String(200), nullable=False),
    sa.Column("mode", sa.String(20), nullable=False),
    sa.Column(
        "judge_id", sa.Integer, sa.ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("assigned_by", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.UniqueConstraint("project_id", "topic_id", "mode", "judge_id"),
)
