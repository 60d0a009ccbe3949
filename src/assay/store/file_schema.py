"""Files of the workspace folder kept in the database (team mode on several machines): one
row per part of a file, its ``name`` relative to the workspace folder (``blobs/<sha256>``,
``imports/<job>/<file>``). Same metadata as :mod:`assay.store.schema`; migration 0028 makes it.
The table exists on SQLite too but stays empty there: the folder is the store.
"""

from __future__ import annotations

import sqlalchemy as sa

from assay.store.schema import metadata

stored_files = sa.Table(
    "stored_files",
    metadata,
    sa.Column("name", sa.String(500), primary_key=True),
    sa.Column("part", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
)
