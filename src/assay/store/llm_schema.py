"""The tables of model traffic (migration 0024): the response cache and the endpoint slot leases.

``llm_responses`` holds whole replies of chat endpoints keyed by the sha256 of what decides
them (endpoint, model, messages, parameters, and the project they were asked for), so a
deterministic request asked again is answered without a call, on any machine of a team.
``endpoint_slots`` bounds the requests in flight to one endpoint over every worker process of
a PostgreSQL workspace: a request holds one numbered slot (below the endpoint's limit) until
it ends; a lease that outlives ``expires_at`` (its process was killed) is free again.
"""

from __future__ import annotations

import sqlalchemy as sa

from assay.store.schema import Timestamp, metadata

llm_responses = sa.Table(
    "llm_responses",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("key", sa.String(64), nullable=False, unique=True),
    # the project the request was made for (NULL: none); deleting the project drops its entries
    sa.Column(
        "project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=True
    ),
    sa.Column("endpoint", sa.String(500), nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("reply", sa.JSON, nullable=False),
    sa.Column("size", sa.Integer, nullable=False),  # bytes of the reply as JSON text
    sa.Column("created_at", Timestamp, nullable=False),
    sa.Index(None, "project_id"),
)

endpoint_slots = sa.Table(
    "endpoint_slots",
    metadata,
    sa.Column("endpoint", sa.String(500), primary_key=True),
    sa.Column("slot", sa.Integer, primary_key=True),
    sa.Column("token", sa.String(36), nullable=False),  # the lease's own id, to give it back
    sa.Column("holder", sa.String(300), nullable=False),  # host:pid of the process
    sa.Column("expires_at", Timestamp, nullable=False),
)
