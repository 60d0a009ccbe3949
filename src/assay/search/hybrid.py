"""Hybrid search: several indexes fused by weighted reciprocal rank fusion (RRF).

RRF looks only at ranks, so BM25 scores and cosines, which live on unrelated scales, need no
calibration: a chunk scores ``sum_i w_i / (k + rank_i)`` over the member rankings it appears
in (Cormack, Clarke and Büttcher, SIGIR 2009, with a weight per ranking).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence

from assay.errors import InvalidInput
from assay.records import Hit, IndexedDocument
from assay.search import SearchIndex

K_RRF = 60
"""The constant of the original RRF paper; larger values flatten the gap between ranks."""

DEPTH = 100


def rrf(
    rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int = K_RRF
) -> list[tuple[str, float]]:
    """Fuse rankings (name -> ids, best first) into ``(id, score)`` pairs, best first.

    ``score(id) = sum over rankings of weights[name] / (k + rank)``, rank counted from 1.
    A ranking without a weight counts with weight 1. An id listed twice in one ranking counts
    at its first place. Ties go to the id with the better best rank, then to the id that
    comes first in the first ranking holding it (the order of `rankings`).
    """
    if k < 0:
        raise InvalidInput(f"The RRF constant k must not be negative, got {k}.")
    scores: dict[str, float] = {}
    best_rank: dict[str, int] = {}
    for name, ids in rankings.items():
        weight = float(weights.get(name, 1.0))
        seen: set[str] = set()
        for rank, item in enumerate(ids, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
            best_rank[item] = min(best_rank.get(item, rank), rank)
    first_seen = {item: n for n, item in enumerate(scores)}
    return sorted(
        scores.items(), key=lambda pair: (-pair[1], best_rank[pair[0]], first_seen[pair[0]])
    )


class HybridIndex:
    """Searches every member index `depth` deep and fuses their rankings with weighted RRF.

    A fused hit keeps the text, snippet and highlights of the member that comes first in
    `indexes` among those that found the chunk, so put the keyword index first: its
    highlights mark the matched words. ``rank`` and ``score`` are the fused ones. A member
    with weight 0 is not queried. ``update`` goes to every member; ``indexed`` reports a
    document only where all members hold it with the same fingerprint, so the sync code
    refills any member that fell behind.
    """

    def __init__(
        self,
        indexes: Mapping[str, SearchIndex],
        weights: Mapping[str, float],
        k_rrf: int = K_RRF,
        depth: int = DEPTH,
    ) -> None:
        if not indexes:
            raise InvalidInput("A hybrid index needs at least one member index.")
        unknown = sorted(set(weights) - set(indexes))
        if unknown:
            raise InvalidInput(
                f"Hybrid weights name {', '.join(map(repr, unknown))}, which are not member "
                f"indexes; the members are: {', '.join(indexes)}."
            )
        for name, weight in weights.items():
            if not weight >= 0:
                raise InvalidInput(
                    f"The hybrid weight of {name!r} must be a number >= 0, not {weight!r}."
                )
        if not any(weights.get(name, 1.0) > 0 for name in indexes):
            raise InvalidInput("At least one hybrid weight must be above 0.")
        if k_rrf < 0 or depth < 1:
            raise InvalidInput(
                f"Hybrid search needs k_rrf >= 0 and depth >= 1, got {k_rrf} and {depth}."
            )
        self.indexes = dict(indexes)
        self.weights = {name: float(weights.get(name, 1.0)) for name in indexes}
        self.k_rrf = k_rrf
        self.depth = depth

    def __repr__(self) -> str:
        return f"HybridIndex({self.weights!r}, k_rrf={self.k_rrf}, depth={self.depth})"

    def update(self, add: Sequence[IndexedDocument], delete: Collection[str] = ()) -> None:
        for index in self.indexes.values():
            index.update(add, delete)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Best k chunks by fused rank, rank 1 first; each member is searched
        ``max(depth, k)`` deep."""
        if k < 1:
            raise InvalidInput(f"k must be at least 1 to search the hybrid index, not {k}.")
        found: dict[str, Hit] = {}
        rankings: dict[str, list[str]] = {}
        for name, index in self.indexes.items():
            if self.weights[name] <= 0:
                continue
            hits = index.search(query, max(self.depth, k))
            rankings[name] = [hit.chunk_id for hit in hits]
            for hit in hits:
                found.setdefault(hit.chunk_id, hit)
        fused = rrf(rankings, self.weights, self.k_rrf)[:k]
        return [
            dataclasses.replace(found[chunk_id], rank=rank, score=score)
            for rank, (chunk_id, score) in enumerate(fused, start=1)
        ]

    def indexed(self) -> dict[str, str]:
        members = [index.indexed() for index in self.indexes.values()]
        first, rest = members[0], members[1:]
        return {
            doc_id: fp
            for doc_id, fp in first.items()
            if all(other.get(doc_id) == fp for other in rest)
        }
