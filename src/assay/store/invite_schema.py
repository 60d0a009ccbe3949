"""The table of invitations (migration 0022): a one-time link a workspace admin hands to
someone, who opens it, chooses a password and has an account. Same metadata as
:mod:`assay.store.schema`.

The link's secret is never stored, only its SHA-256 (as for sessions and API tokens). An
invite names the account it makes (user name, display name, admin or not, optionally a role
in one project); ``used_at`` and ``account_id`` say that it was used and for which account.
"""

from __future__ import annotations

import sqlalchemy as sa

from assay.store.schema import Timestamp, metadata

invites = sa.Table(
    "invites",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("username", sa.String(64), nullable=False),
    sa.Column("display_name", sa.String(200), nullable=False),
    sa.Column("is_admin", sa.Boolean, nullable=False),
    sa.Column(
        "project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=True
    ),
    sa.Column("role", sa.String(20), nullable=True),
    sa.Column(
        "created_by", sa.Integer, sa.ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Column("expires_at", Timestamp, nullable=False),
    sa.Column("used_at", Timestamp, nullable=True),
    sa.Column(
        "account_id", sa.Integer, sa.ForeignKey("accounts.id", ondelete="SET NULL"), nullable=True
    ),
)
