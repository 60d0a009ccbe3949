"""Alembic environment: runs on the connection that :func:`assay.store.db.migrate` hands over."""

from __future__ import annotations

from alembic import context

from assay.store import (  # noqa: F401  (their tables join the metadata)
    endpoint_schema,
    jobs_schema,
    judging_schema,
    review_schema,
    suggestion_schema,
)
from assay.store.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
