"""Alembic migrations; applied by :func:`assay.store.db.migrate` whenever a workspace opens."""
