"""Alembic environment: runs on the connection that :func:`assay.store.db.migrate` hands over."""

from __future__ import annotations

from alembic import context

from assay.store import (  # their tables join the metadata
    candidates_schema,  # noqa: F401
    endpoint_schema,  # noqa: F401
    file_schema,  # noqa: F401
    invite_schema,  # noqa: F401
    jobs_schema,  # noqa: F401
    judging_schema,  # noqa: F401
    llm_schema,  # noqa: F401
    review_schema,  # noqa: F401
    suggestion_schema,  # noqa: F401
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
