"""The tables of the team workflow (issue 14): assignments and queues, reviews, comments and
frozen dataset versions. Same metadata as :mod:`assay.store.schema`; migration 0012 makes them
(0014: the index of held pool tasks).
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


def _item_id() -> sa.Column[str]:
    return sa.Column(
        "item_id", sa.String(36), sa.ForeignKey("items.id", ondelete="CASCADE"), nullable=False
    )


# One task in a queue: annotate an item (under overlap, the annotator's own copy of it) or
# review one. ``account_id`` None puts it in the project's shared pool, where the first
# annotator who starts it reserves it (holder, locked_until); an expired reservation is free.
assignments = sa.Table(
    "assignments",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    _project_id(),
    _item_id(),
    sa.Column("task", sa.String(20), nullable=False),  # annotate | review
    sa.Column("account_id", sa.Integer, sa.ForeignKey("accounts.id", ondelete="CASCADE")),
    sa.Column("state", sa.String(20), nullable=False),  # open | done | skipped
    sa.Column("position", sa.Integer, nullable=False),  # order within the queue
    sa.Column("reason", sa.Text, nullable=False),  # why it was skipped, or sent back
    sa.Column("holder_id", sa.Integer, sa.ForeignKey("accounts.id", ondelete="SET NULL")),
    sa.Column("locked_until", Timestamp, nullable=True),
    sa.Column("assigned_by", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
    sa.Column("done_at", Timestamp, nullable=True),
    sa.Index(None, "project_id", "task", "account_id", "state", "position"),
    sa.Index(None, "item_id"),
    sa.Index(None, "holder_id", "project_id", "task", "account_id"),  # the pool tasks one holds
)

# A reviewer's verdict on a submitted item: accept, accept_edited (``changes`` holds the
# field-level diff of the reviewer's edits against what was submitted) or reject (``reason``).
reviews = sa.Table(
    "reviews",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    _project_id(),
    _item_id(),
    sa.Column("reviewer_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("verdict", sa.String(20), nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("submitted_version", sa.Integer, nullable=False),
    sa.Column("changes", sa.JSON, nullable=False),
    sa.Column("at", Timestamp, nullable=False),
    sa.Index(None, "project_id", "item_id", "at"),
)

# A comment on an item, general (target "item") or anchored to a span of one of its texts:
# target question | answer | evidence, the turn's ordinal, the evidence ordinal, character
# offsets and the quoted text (when the text changes so that the quote no longer sits there,
# the comment is shown as outdated). Replies name their thread's first comment (parent_id).
comments = sa.Table(
    "comments",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    _project_id(),
    _item_id(),
    sa.Column("parent_id", sa.Integer, sa.ForeignKey("comments.id", ondelete="CASCADE")),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("target", sa.String(20), nullable=False),
    sa.Column("turn", sa.Integer, nullable=True),
    sa.Column("evidence", sa.Integer, nullable=True),
    sa.Column("start", sa.Integer, nullable=True),
    sa.Column("end", sa.Integer, nullable=True),
    sa.Column("quote", sa.Text, nullable=False),
    sa.Column("resolved", sa.Boolean, nullable=False),
    sa.Column("resolved_by", sa.Integer, sa.ForeignKey("accounts.id")),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
    sa.Index(None, "item_id", "created_at"),
)

# A frozen snapshot of a project's accepted gold: the native bundle stored as a blob
# (``blob`` is its sha256) and ``hash``, the content hash printed on every export made from it.
dataset_versions = sa.Table(
    "dataset_versions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    _project_id(),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("hash", sa.String(64), nullable=False),
    sa.Column("blob", sa.String(64), nullable=False),
    sa.Column("item_count", sa.Integer, nullable=False),
    sa.Column("evidence_count", sa.Integer, nullable=False),
    sa.Column("chunking", sa.String(200), nullable=True),
    sa.Column("summary", sa.JSON, nullable=False),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.UniqueConstraint("project_id", "name"),
)

# Dashboard and agreement figures as last computed (migration 0025): ``name`` says which
# (with its parameters), ``mark`` the project's change mark they were computed at
# (:mod:`assay.review.figure_cache`); served again while the mark stands, in every process.
figure_cache = sa.Table(
    "figure_cache",
    metadata,
    _project_id(),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("mark", sa.String(400), nullable=False),
    sa.Column("value", sa.JSON, nullable=False),
    sa.Column("computed_at", Timestamp, nullable=False),
    sa.PrimaryKeyConstraint("project_id", "name"),
)
