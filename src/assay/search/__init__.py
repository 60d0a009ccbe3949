"""Search indexes over a project's chunks.

A backend implements :class:`SearchIndex`; ``assay.search.indexes`` decides where indexes live
and keeps them in step with the database. Backends take plain records, never rows.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from assay.errors import InvalidInput
from assay.records import Hit, IndexedDocument


class SearchIndex(Protocol):
    def update(self, add: Sequence[IndexedDocument], delete: Collection[str] = ()) -> None:
        """Drop the chunks of ``delete`` and of every document in ``add``, then add ``add``.

        Durable when it returns; doing it twice changes nothing.
        """

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The best ``k`` chunks, rank 1 first. Plain words: no query syntax can fail."""

    def indexed(self) -> dict[str, str]:
        """``doc_id → fingerprint`` of every document the index holds."""


def planned_update(
    add: Sequence[IndexedDocument], delete: Collection[str], index: str
) -> tuple[dict[str, IndexedDocument], set[str]]:
    """What an ``update`` of the ``index`` backend writes: the documents to add by doc_id (the
    last one named wins), each chunk checked to belong to its document, and the doc_ids
    whose chunks go first."""
    latest = {doc.doc_id: doc for doc in add}
    for doc in latest.values():
        for chunk in doc.chunks:
            if chunk.doc_id != doc.doc_id:
                raise InvalidInput(
                    f"Chunk {chunk.chunk_id!r} says it belongs to document {chunk.doc_id!r} "
                    f"but was handed to the {index} index inside document {doc.doc_id!r}."
                )
    return latest, set(delete) | set(latest)
