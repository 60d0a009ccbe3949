"""Files of the workspace folder kept in the database too, so that in team mode every server
and worker may have a folder of its own on its own machine.

With the workspace database on PostgreSQL the folder is a cache: a process that writes a file
other processes read (an original, an uploaded run file, an import's upload, an export) saves
it in ``stored_files`` as well, in parts of 1 MB so that a big file is never held whole; a
process that misses the file in its own folder fetches it from there into its folder. A file
is saved in one transaction, so a reader sees all its parts or none. On SQLite there is one
folder and nothing is mirrored (:func:`shared_files` gives None).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert

from assay.store.file_schema import stored_files

PART = 1 << 20
"""Bytes per row of a stored file."""


def shared_files(engine: sa.Engine) -> SharedFiles | None:
    """The database copy of the folder's shared files: only when the database is PostgreSQL
    (a SQLite database lives in the folder, which is the one store)."""
    return SharedFiles(engine) if engine.dialect.name == "postgresql" else None


class SharedFiles:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def save(self, name: str, source: Path) -> None:
        """Store the file ``source`` as ``name`` (relative to the workspace folder) unless it is
        stored already: names are content hashes or a job's own, so equal names mean equal
        bytes. Two processes saving one name at once leave one copy."""
        with self.engine.begin() as conn:
            if self._has(conn, name):
                return
            with source.open("rb") as reading:
                part = 0
                while True:
                    data = reading.read(PART)
                    conn.execute(
                        insert(stored_files)
                        .values(name=name, part=part, data=data)
                        .on_conflict_do_nothing()
                    )
                    part += 1
                    if len(data) < PART:
                        break

    def fetch(self, name: str, target: Path) -> bool:
        """Write the stored file ``name`` to ``target`` (through a temporary file renamed into
        place, as the blob store does); False when it is not stored."""
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        found = False
        try:
            with os.fdopen(fd, "wb") as handle, self.engine.connect() as conn:
                rows = conn.execution_options(stream_results=True, yield_per=4).execute(
                    sa.select(stored_files.c.data)
                    .where(stored_files.c.name == name)
                    .order_by(stored_files.c.part)
                )
                for row in rows:
                    handle.write(row.data)
                    found = True
            if found:
                os.replace(tmp, target)
        finally:
            if not found:
                Path(tmp).unlink(missing_ok=True)
        return found

    def delete(self, names: Iterable[str]) -> None:
        names = list(names)
        with self.engine.begin() as conn:
            for start in range(0, len(names), 500):
                batch = names[start : start + 500]
                conn.execute(stored_files.delete().where(stored_files.c.name.in_(batch)))

    def delete_under(self, folder: str) -> None:
        """Delete every stored file whose name starts with ``folder/``."""
        self.delete(self.names_under(folder))

    def names_under(self, folder: str) -> set[str]:
        prefix = folder.rstrip("/") + "/"
        with self.engine.connect() as conn:
            return set(
                conn.scalars(
                    sa.select(stored_files.c.name).where(
                        stored_files.c.part == 0,
                        sa.func.substr(stored_files.c.name, 1, len(prefix)) == prefix,
                    )
                )
            )

    def _has(self, conn: sa.Connection, name: str) -> bool:
        found = conn.scalar(
            sa.select(1).where(stored_files.c.name == name, stored_files.c.part == 0)
        )
        return found is not None
