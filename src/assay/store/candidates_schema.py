"""The tables of production candidates (issue 33): questions imported from query logs and
traces, their near-duplicate groups and the topic clusters of those groups. Same metadata as
:mod:`assay.store.schema`; migration 0023 makes them.

A candidate is not gold. It keeps the question and the production answer as scrubbed
(:mod:`assay.candidates.scrubbing`), the retrieved passages (anchored in a document where
they match, else listed as ``unlocated``), the user's feedback and, once a lead takes it into
the gold, the item it became. Groups and clusters are derived data: every import computes
them again for the whole project (:mod:`assay.candidates.grouping`). A group's id is the id
of its first candidate, so it stays the same as long as that candidate is in it.
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


# One import of a log: what it read, stored and masked, and the problems it found.
candidate_imports = sa.Table(
    "candidate_imports",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    _project_id(),
    sa.Column("name", sa.String(300), nullable=False),  # the file's name
    sa.Column("shape", sa.String(20), nullable=False),  # jsonl | openinference | langfuse
    sa.Column("lines", sa.Integer, nullable=False),
    sa.Column("stored", sa.Integer, nullable=False),
    sa.Column("skipped", sa.Integer, nullable=False),
    # {"masks": {kind: count}, "passages": {...}, "problems": [...], "sessions": n}
    sa.Column("report", sa.JSON, nullable=False),
    sa.Column("created_by", sa.Integer, sa.ForeignKey("accounts.id"), nullable=True),
    sa.Column("created_at", Timestamp, nullable=False),
)

# One production question (a turn of a session when the log has sessions).
candidates = sa.Table(
    "candidates",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    _project_id(),
    sa.Column(
        "import_id",
        sa.Integer,
        sa.ForeignKey("candidate_imports.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("line", sa.Integer, nullable=False),  # 1-based line of the file
    sa.Column("session", sa.String(200), nullable=False),  # "" when the log has none
    sa.Column("turn", sa.Integer, nullable=False),  # 1-based within the session
    sa.Column("question", sa.Text, nullable=False),  # scrubbed
    sa.Column("norm", sa.Text, nullable=False),  # normalised for grouping
    sa.Column("answer", sa.Text, nullable=False),  # the production answer, scrubbed
    # [{"doc_id", "start", "end", "text", "anchor": ok|unlocated, "source", "score", "rank"}]
    sa.Column("passages", sa.JSON, nullable=False),
    sa.Column("feedback", sa.SmallInteger, nullable=True),  # -1, 0, 1; None: none given
    sa.Column("asked_at", Timestamp, nullable=True),
    sa.Column("group_id", sa.Integer, nullable=True),  # the id of its group's first candidate
    sa.Column("item_id", sa.String(36), sa.ForeignKey("items.id", ondelete="SET NULL")),
    sa.Column("extra", sa.JSON, nullable=False),
    sa.Index(None, "project_id", "group_id"),
    sa.Index(None, "project_id", "session", "turn"),
    sa.Index(None, "import_id"),
    sa.Index(None, "item_id"),
)

# Near-duplicate questions folded into one; ``id`` is the first candidate's id.
candidate_groups = sa.Table(
    "candidate_groups",
    metadata,
    _project_id(),
    sa.Column("id", sa.Integer, nullable=False),
    sa.Column("question", sa.Text, nullable=False),  # the first candidate's question
    sa.Column("size", sa.Integer, nullable=False),  # how many candidates
    sa.Column("negative", sa.Integer, nullable=False),  # of them with negative feedback
    sa.Column("positive", sa.Integer, nullable=False),
    sa.Column("cluster", sa.Integer, nullable=False),  # topic cluster number
    sa.Column("documents", sa.JSON, nullable=False),  # doc ids its anchored passages cite
    sa.Column("multi_turn", sa.Boolean, nullable=False),  # part of a session of 2+ turns
    sa.Column("item_id", sa.String(36), sa.ForeignKey("items.id", ondelete="SET NULL")),
    sa.PrimaryKeyConstraint("project_id", "id"),
    sa.Index(None, "project_id", "cluster"),
)

# Topic clusters of the groups' questions, with the words that name them.
candidate_clusters = sa.Table(
    "candidate_clusters",
    metadata,
    _project_id(),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("label", sa.String(200), nullable=False),
    sa.Column("groups", sa.Integer, nullable=False),
    sa.Column("questions", sa.Integer, nullable=False),
    sa.Column("centroid", sa.JSON, nullable=False),  # list of floats (the feature space)
    sa.PrimaryKeyConstraint("project_id", "number"),
)
