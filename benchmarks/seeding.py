"""Big projects for benchmarks, made by bulk insert rather than by ingesting files."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

import sqlalchemy as sa

from assay.people.actors import account_ids
from assay.store.db import utcnow
from assay.store.schema import chunkings, chunks, documents

BATCH = 2000


def seed_documents(
    engine: sa.Engine, project_id: int, named_texts: Iterable[tuple[str, str]], chunk_chars: int
) -> None:
    """Insert ``(name, text)`` documents, each with one chunk of its first ``chunk_chars``
    characters in the project's first chunking."""
    now = utcnow()
    texts = iter(named_texts)
    with engine.begin() as conn:
        chunking_id = conn.scalar(
            sa.select(chunkings.c.id).where(chunkings.c.project_id == project_id)
        )
        author = account_ids(conn, ["seed"])["seed"]
        while batch := list(islice(texts, BATCH)):
            rows = list(_rows(project_id, author, batch, now))
            conn.execute(documents.insert(), rows)
            conn.execute(
                chunks.insert(),
                [
                    {
                        "chunking_id": chunking_id,
                        "chunk_id": f"{row['id']}-0",
                        "doc_id": row["id"],
                        "ordinal": 0,
                        "start": 0,
                        "end": min(chunk_chars, len(row["text"])),
                    }
                    for row in rows
                ],
            )


def _rows(
    project_id: int, author: int, batch: list[tuple[str, str]], now: Any
) -> Iterator[dict[str, Any]]:
    for name, text in batch:
        yield {
            "id": str(uuid.uuid4()),
            "project_id": project_id,
            "name": name,
            "media_type": "text/plain",
            "size": len(text),
            "sha256": hashlib.sha256(text.encode()).hexdigest(),
            "text": text,
            "parse_info": {},
            "notes": "",
            "metadata": {},
            "author_id": author,
            "created_at": now,
            "updated_at": now,
        }
