"""Alembic migrations; applied by :func:`assay.db.migrate` whenever a workspace opens."""
