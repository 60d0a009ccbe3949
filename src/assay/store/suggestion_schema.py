"""The table of LLM suggestions (issue 17): relevance labels for passages and standalone
rewrites of conversation turns, waiting for a person to accept or reject them. Same metadata
as :mod:`assay.store.schema`; migration 0017 makes it.

A suggestion is not evidence. It names its item and turn (``turn_ordinal``, 0-based like
``turns.ordinal``: turns are rewritten on every save, so their row ids do not last) and, for
a relevance suggestion, the passage by ``(doc_id, start, end)`` with a snapshot of its text.
Accepting one writes evidence (or the rewrite) through the item's normal save; the row stays,
with who decided and when, so acceptance rates can be counted later.
"""

from __future__ import annotations

import sqlalchemy as sa

from assay.store.schema import Timestamp, metadata


def _one_pending(name: str, kind: str, *passage: str) -> sa.Index:
    """A partial unique index: one pending suggestion of ``kind`` per turn (and passage)."""
    where = sa.text(f"state = 'pending' AND kind = '{kind}'")
    columns = ("item_id", "turn_ordinal", *passage)
    return sa.Index(name, *columns, unique=True, postgresql_where=where, sqlite_where=where)


suggestions = sa.Table(
    "suggestions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "project_id",
        sa.Integer,
        sa.ForeignKey("projects.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column(
        "item_id", sa.String(36), sa.ForeignKey("items.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("turn_ordinal", sa.Integer, nullable=False),
    # "relevance" (label and reason for a passage) or "rewrite" (a standalone question)
    sa.Column("kind", sa.String(20), nullable=False),
    # the passage (relevance only): no foreign key, so a decided record outlives its document
    sa.Column("doc_id", sa.String(36), nullable=True),
    sa.Column("start", sa.Integer, nullable=True),
    sa.Column("end", sa.Integer, nullable=True),
    # the passage's text when suggested (relevance), or the suggested rewrite
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("label", sa.String(20), nullable=True),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("prompt_hash", sa.String(64), nullable=False),
    sa.Column("params", sa.JSON, nullable=False),
    # pending, accepted, rejected, or replaced (another one waits in its place: a newer
    # rewrite of the turn, or a suggestion for the same passage stored first; 0019)
    sa.Column("state", sa.String(20), nullable=False),
    # a rewrite as accepted (the annotator may edit it first); None otherwise
    sa.Column("final_text", sa.Text, nullable=True),
    sa.Column("created_by", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("decided_by", sa.Integer, sa.ForeignKey("accounts.id"), nullable=True),
    sa.Column("decided_at", Timestamp, nullable=True),
    sa.Index(None, "item_id", "turn_ordinal"),
    sa.Index(None, "project_id", "kind", "state"),
    # at most one pending suggestion per passage of a turn, one pending rewrite per turn
    # (migration 0019): two requests at once cannot both store theirs
    _one_pending("ux_suggestions_pending_passage", "relevance", "doc_id", "start", "end"),
    _one_pending("ux_suggestions_pending_rewrite", "rewrite"),
)
