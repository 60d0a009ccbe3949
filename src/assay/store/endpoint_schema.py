"""The registry of outgoing endpoints (issue 32): the URLs a workspace admin allows the
server to send requests (and API keys) to in team mode. Same metadata as
:mod:`assay.store.schema`; migration 0027 makes it.

A project lead chooses among these; only a workspace admin adds or removes one
(:mod:`assay.llm.endpoints`). ``allow_private``: the admin allows this host although it is
a loopback, private or link-local address (an intranet model server).
"""

from __future__ import annotations

import sqlalchemy as sa

from assay.store.schema import Timestamp, metadata

outgoing_endpoints = sa.Table(
    "outgoing_endpoints",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(100), nullable=False, unique=True),
    sa.Column("url", sa.String(2000), nullable=False),
    sa.Column("allow_private", sa.Boolean, nullable=False),
    sa.Column("note", sa.String(500), nullable=False),
    sa.Column("created_by", sa.Integer, sa.ForeignKey("accounts.id"), nullable=True),
    sa.Column("created_at", Timestamp, nullable=False),
)
