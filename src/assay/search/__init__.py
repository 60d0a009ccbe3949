"""Search indexes over a project's chunks.

A backend implements :class:`SearchIndex`; ``assay.search.indexes`` decides where indexes live
and keeps them in step with the database. Backends take plain records, never rows.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

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
