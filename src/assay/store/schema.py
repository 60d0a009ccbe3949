"""The database tables, in SQLAlchemy Core.

One schema for SQLite and PostgreSQL: only portable types (JSON, Text, DateTime with time zone).
Alembic migrations in ``assay/migrations`` create exactly these tables; a test compares them.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
    }
)

Timestamp = sa.DateTime(timezone=True)

projects = sa.Table(
    "projects",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("language", sa.String(16), nullable=False),
    sa.Column("settings", sa.JSON, nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
    # the import lock (project_lock): set while an import writes into the project in batches
    sa.Column("import_token", sa.String(36), nullable=True),
    sa.Column("import_holder", sa.String(300), nullable=True),
    sa.Column("import_started_at", Timestamp, nullable=True),
    sa.Column("import_heartbeat_at", Timestamp, nullable=True),
    # bumped by every write that changes what search indexes hold (documents' text, chunkings):
    # an index is fresh when its marker names this number, one row read instead of a scan
    sa.Column("corpus_version", sa.Integer, nullable=False, server_default="0"),
)

# What a running import has written so far, so a failed or killed one can be undone
# (project_lock.undo_import). Rows of a finished import are deleted with its lock.
import_journal = sa.Table(
    "import_journal",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("token", sa.String(36), nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("ref", sa.String(300), nullable=False),
    sa.Column("before", sa.Text, nullable=True),
    sa.Index(None, "token", "kind", "ref"),
)

documents = sa.Table(
    "documents",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column(
        "project_id",
        sa.Integer,
        sa.ForeignKey("projects.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("name", sa.String(500), nullable=False),
    sa.Column("media_type", sa.String(200), nullable=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("parse_info", sa.JSON, nullable=False),
    sa.Column("notes", sa.Text, nullable=False),
    sa.Column("metadata", sa.JSON, nullable=False),
    # who made it (issue 12: every action carries its actor); names are read from accounts
    sa.Column("author_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
    sa.UniqueConstraint("project_id", "name"),
    sa.Index(None, "project_id", "sha256"),
)

chunkings = sa.Table(
    "chunkings",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "project_id",
        sa.Integer,
        sa.ForeignKey("projects.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("method", sa.String(100), nullable=False),
    sa.Column("params", sa.JSON, nullable=False),
    sa.Column("is_default", sa.Boolean, nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.UniqueConstraint("project_id", "name"),
)

chunks = sa.Table(
    "chunks",
    metadata,
    sa.Column(
        "chunking_id",
        sa.Integer,
        sa.ForeignKey("chunkings.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("chunk_id", sa.String(300), primary_key=True),
    sa.Column(
        "doc_id",
        sa.String(36),
        sa.ForeignKey("documents.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("ordinal", sa.Integer, nullable=False),
    sa.Column("start", sa.Integer, nullable=False),
    sa.Column("end", sa.Integer, nullable=False),
    sa.Index(None, "doc_id", "chunking_id", "ordinal"),
)

items = sa.Table(
    "items",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column(
        "project_id",
        sa.Integer,
        sa.ForeignKey("projects.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("origin", sa.String(40), nullable=False),
    sa.Column("query", sa.Text, nullable=False),
    sa.Column("query_type", sa.String(100), nullable=False),
    sa.Column("turn_count", sa.Integer, nullable=False),
    sa.Column("evidence_count", sa.Integer, nullable=False),
    sa.Column("notes", sa.Text, nullable=False),
    sa.Column("extra", sa.JSON, nullable=False),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
    # an annotator's own copy of the item under overlap (review.assignments); gold has none
    sa.Column("copy_of", sa.String(36), sa.ForeignKey("items.id", ondelete="CASCADE")),
    sa.Column("version", sa.Integer, nullable=False),
    # questions, answers and notes in lower case, for the list's free-text filter
    sa.Column("search_text", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
    # list pages sort by a column and the id (tie-break): these indexes cover the ORDER BY
    sa.Index(None, "project_id", "updated_at", "id"),
    sa.Index(None, "project_id", "created_at", "id"),
    sa.Index(None, "project_id", "status", "updated_at", "id"),
    # type filter, type+status filter (and their counts), and sorting those by question
    sa.Index(None, "project_id", "query_type", "status", "query", "id"),
    sa.Index(None, "project_id", "author_id", "updated_at", "id"),
    sa.Index(None, "project_id", "author_id", "created_at", "id"),
    sa.Index(None, "copy_of"),
)

turns = sa.Table(
    "turns",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "item_id", sa.String(36), sa.ForeignKey("items.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("ordinal", sa.Integer, nullable=False),
    sa.Column("query", sa.Text, nullable=False),
    sa.Column("rewrite", sa.Text, nullable=False),
    sa.Column("query_type", sa.String(100), nullable=False),
    sa.Column("enrichments", sa.JSON, nullable=False),
    sa.Column("answer", sa.Text, nullable=False),
    sa.Column("alternatives", sa.JSON, nullable=False),
    sa.Column("original_answer", sa.Text, nullable=False),
    sa.Column("generation", sa.JSON, nullable=False),
    sa.Column("retrieved", sa.JSON, nullable=False),
    sa.UniqueConstraint("item_id", "ordinal"),
)

evidence = sa.Table(
    "evidence",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("turn_id", sa.Integer, sa.ForeignKey("turns.id", ondelete="CASCADE"), nullable=False),
    sa.Column("ordinal", sa.Integer, nullable=False),
    sa.Column(
        # NO ACTION (checked at the end of a statement): deleting a project removes items and
        # documents together, while deleting one document that evidence cites is refused.
        "doc_id",
        sa.String(36),
        sa.ForeignKey("documents.id"),
        nullable=True,
    ),
    sa.Column("start", sa.Integer, nullable=True),
    sa.Column("end", sa.Integer, nullable=True),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("label", sa.String(20), nullable=False),
    sa.Column("grade", sa.Integer, nullable=True),
    sa.Column("group_no", sa.Integer, nullable=False),
    sa.Column("origin", sa.String(40), nullable=False),
    sa.Column("anchor", sa.String(20), nullable=False),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Index(None, "doc_id"),
    sa.Index(None, "turn_id", "ordinal"),
    # the stale evidence alone ("needs review" on every list row; migration 0018)
    sa.Index(
        "ix_evidence_stale_turn_id",
        "turn_id",
        postgresql_where=sa.text("anchor = 'stale'"),
        sqlite_where=sa.text("anchor = 'stale'"),
    ),
)

events = sa.Table(
    "events",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "project_id",
        sa.Integer,
        sa.ForeignKey("projects.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("item_id", sa.String(36), nullable=True),
    sa.Column("actor_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("action", sa.String(60), nullable=False),
    sa.Column("before", sa.JSON, nullable=True),
    sa.Column("after", sa.JSON, nullable=True),
    sa.Column("at", Timestamp, nullable=False),
    sa.Index(None, "project_id", "item_id", "at"),
)

experiments = sa.Table(
    "experiments",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "project_id",
        sa.Integer,
        sa.ForeignKey("projects.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("mode", sa.String(20), nullable=False),
    sa.Column("selection", sa.JSON, nullable=False),
    sa.Column("pipelines", sa.JSON, nullable=False),
    sa.Column("metrics", sa.JSON, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    # set by cancel_experiment, read by the runner between tasks (works across processes)
    sa.Column("stop_requested", sa.Boolean, nullable=False),
    sa.Column("task_count", sa.Integer, nullable=False),
    sa.Column("done_count", sa.Integer, nullable=False),
    sa.Column("error_count", sa.Integer, nullable=False),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
    sa.Column("started_at", Timestamp, nullable=True),
    sa.Column("finished_at", Timestamp, nullable=True),
    # the frozen dataset version the tasks were taken from (None: the live items)
    sa.Column("dataset_version_id", sa.Integer, sa.ForeignKey("dataset_versions.id")),
    # the current run's cap, {"max_cost_usd", "max_requests"} (None: no cap; migration 0026)
    sa.Column("budget", sa.JSON, nullable=True),
    sa.UniqueConstraint("project_id", "name"),
)

experiment_shards = sa.Table(
    "experiment_shards",
    metadata,
    sa.Column(
        "experiment_id",
        sa.Integer,
        sa.ForeignKey("experiments.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("shard", sa.Integer, primary_key=True),
    # task ordinals first_task <= ordinal < end_task
    sa.Column("first_task", sa.Integer, nullable=False),
    sa.Column("end_task", sa.Integer, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),  # todo, doing or done
    sa.Column("worker", sa.String(300), nullable=True),  # host:pid#run of its claimer
    sa.Column("heartbeat_at", Timestamp, nullable=True),
    # what this shard's worker has in flight and spent in the current run
    sa.Column("in_flight", sa.Integer, nullable=False),
    sa.Column("units", sa.Integer, nullable=False),
    sa.Column("requests", sa.Integer, nullable=False),
    sa.Column("cached_requests", sa.Integer, nullable=False),
    sa.Column("input_tokens", sa.BigInteger, nullable=False),
    sa.Column("output_tokens", sa.BigInteger, nullable=False),
    sa.Column("cost_usd", sa.Float, nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
)

experiment_tasks = sa.Table(
    "experiment_tasks",
    metadata,
    sa.Column(
        "experiment_id",
        sa.Integer,
        sa.ForeignKey("experiments.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("task_id", sa.String(300), primary_key=True),
    sa.Column("ordinal", sa.Integer, nullable=False),
    sa.Column("item_id", sa.String(36), nullable=False),
    sa.Column("query_type", sa.String(100), nullable=False),
    # the whole task as it was when the experiment was created: later edits change no run
    sa.Column("data", sa.JSON, nullable=False),
    sa.Index(None, "experiment_id", "ordinal"),
)

experiment_results = sa.Table(
    "experiment_results",
    metadata,
    sa.Column(
        "experiment_id",
        sa.Integer,
        sa.ForeignKey("experiments.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("pipeline", sa.String(200), primary_key=True),
    sa.Column("task_id", sa.String(300), primary_key=True),
    sa.Column("retrieved", sa.JSON, nullable=False),
    sa.Column("answer", sa.Text, nullable=False),
    sa.Column("contexts", sa.JSON, nullable=False),
    sa.Column("timings", sa.JSON, nullable=False),
    sa.Column("metrics", sa.JSON, nullable=False),
    # how the metrics were reached: judge replies and messages, the grain scored (chunk/doc)
    sa.Column("details", sa.JSON, nullable=False),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("created_at", Timestamp, nullable=False),
)

# People (issue 12). An account signs in with a password (Argon2 hash) unless it is the local
# owner of personal mode or an author brought in from an older workspace (``origin``).
accounts = sa.Table(
    "accounts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("username", sa.String(64), nullable=False, unique=True),
    sa.Column("display_name", sa.String(200), nullable=False),
    sa.Column("password_hash", sa.String(300), nullable=True),
    sa.Column("is_admin", sa.Boolean, nullable=False),
    sa.Column("disabled", sa.Boolean, nullable=False),
    sa.Column("origin", sa.String(20), nullable=False),
    # sign-in lockout: failures in a row, and until when the account refuses sign-ins
    sa.Column("failed_logins", sa.Integer, nullable=False),
    sa.Column("locked_until", Timestamp, nullable=True),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
)

# Server-side sessions: the cookie holds a secret, the table only its SHA-256.
sessions = sa.Table(
    "sessions",
    metadata,
    sa.Column("id_hash", sa.String(64), primary_key=True),
    sa.Column(
        "account_id",
        sa.Integer,
        sa.ForeignKey("accounts.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("last_seen_at", Timestamp, nullable=False),
    sa.Column("expires_at", Timestamp, nullable=False),
    sa.Index(None, "account_id"),
)

# Personal API tokens: shown once, stored as their SHA-256.
api_tokens = sa.Table(
    "api_tokens",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "account_id",
        sa.Integer,
        sa.ForeignKey("accounts.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("prefix", sa.String(20), nullable=False),
    sa.Column("scope", sa.String(10), nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("expires_at", Timestamp, nullable=False),
    sa.Column("revoked_at", Timestamp, nullable=True),
    sa.Column("last_used_at", Timestamp, nullable=True),
    sa.Index(None, "account_id"),
)

project_members = sa.Table(
    "project_members",
    metadata,
    sa.Column(
        "project_id",
        sa.Integer,
        sa.ForeignKey("projects.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column(
        "account_id",
        sa.Integer,
        sa.ForeignKey("accounts.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("role", sa.String(20), nullable=False),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
    sa.Index(None, "account_id"),
)

# Workspace-wide switches stored with the data (so every server process sees the same):
# ``team_mode`` (true/false).
workspace_settings = sa.Table(
    "workspace_settings",
    metadata,
    sa.Column("key", sa.String(100), primary_key=True),
    sa.Column("value", sa.JSON, nullable=False),
    sa.Column("updated_at", Timestamp, nullable=False),
)
