"""Near-duplicate questions by MinHash and locality-sensitive hashing, in numpy.

A question is normalised (:func:`normalise`: Unicode NFKC, case folded, punctuation out,
white space collapsed) and cut into overlapping 5-byte shingles. Its signature is the
minimum of :data:`PERMUTATIONS` random hash functions over its shingles; two signatures agree
in a position with the probability that the two shingle sets' Jaccard similarity gives.
Signatures are cut into :data:`BANDS` bands of :data:`ROWS` values; questions sharing a band
are compared, and joined when their signatures agree in at least :data:`THRESHOLD` of the
positions (an estimate of a Jaccard similarity of 0.7: a typo or an added word in a question of
ten words keeps it near 0.8, two different questions about the same thing rarely pass 0.5).
Joined pairs are closed over (union-find), so a group holds every question linked to it.

Own code rather than ``datasketch``: the banding is a sort per band over all signatures at
once (no Python dictionary of buckets), which keeps 100,000 questions at a few tens of MB.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Sequence

import numpy as np

PERMUTATIONS = 64
BANDS = 16
ROWS = PERMUTATIONS // BANDS
THRESHOLD = 0.7
SHINGLE = 5
BATCH = 250
ALL_PAIRS_UP_TO = 32
"""A band bucket this small compares all its pairs; a larger one compares neighbours."""

_rng = np.random.default_rng(33)
_A = _rng.integers(1, 2**63 - 1, PERMUTATIONS, dtype=np.uint64) | np.uint64(1)  # odd
_B = _rng.integers(0, 2**63 - 1, PERMUTATIONS, dtype=np.uint64)
_SHIFT = np.uint64(32)
_MIX = _rng.integers(1, 2**63 - 1, ROWS, dtype=np.uint64) | np.uint64(1)
_PUNCT = re.compile(r"[^\w\s]+")


def normalise(text: str) -> str:
    """The form questions are compared in: ``"What's the  REFUND policy?"`` and ``"whats the
    refund policy"`` are equal."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _PUNCT.sub("", text.replace("'", "").replace("’", ""))
    return " ".join(text.split())


def signatures(norms: Sequence[str]) -> np.ndarray:
    """The MinHash signature of each text, an ``(n, PERMUTATIONS)`` uint32 array. Shingles are
    the text's 5-byte windows (UTF-8, padded with a space each side), read as 40-bit numbers
    for a whole batch of texts at once."""
    out = np.empty((len(norms), PERMUTATIONS), dtype=np.uint32)
    for first in range(0, len(norms), BATCH):
        texts = [f" {norm} ".encode().ljust(SHINGLE) for norm in norms[first : first + BATCH]]
        lengths = np.array([len(t) for t in texts], dtype=np.int64)
        data = np.frombuffer(b"".join(texts), dtype=np.uint8).astype(np.uint64)
        counts = lengths - SHINGLE + 1
        offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        at = np.repeat(offsets - starts, counts) + np.arange(int(counts.sum()))
        grams = np.zeros(len(at), dtype=np.uint64)
        for j in range(SHINGLE):
            grams |= data[at + j] << np.uint64(8 * j)
        mixed = (grams[:, None] * _A + _B) >> _SHIFT  # multiply-shift hashing, wraps mod 2**64
        out[first : first + len(texts)] = np.minimum.reduceat(mixed, starts, axis=0)
    return out


class _Sets:
    """Union-find over ``n`` elements (path halving); a set's root is its smallest element."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def near_duplicates(sigs: np.ndarray, threshold: float = THRESHOLD) -> list[int]:
    """For each row, the first row of its group of near-duplicates."""
    n = len(sigs)
    sets = _Sets(n)
    need = int(np.ceil(threshold * PERMUTATIONS))
    for band in range(BANDS):
        part = sigs[:, band * ROWS : (band + 1) * ROWS].astype(np.uint64)
        keys = (part * _MIX).sum(axis=1)  # wraps around: a hash of the band
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        breaks = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
        starts = np.concatenate(([0], breaks))
        ends = np.concatenate((breaks, [n]))
        for s, e in zip(starts[ends - starts >= 2], ends[ends - starts >= 2], strict=True):
            run = order[s:e]
            pairs = (
                [(run[i], run[j]) for i in range(len(run)) for j in range(i + 1, len(run))]
                if len(run) <= ALL_PAIRS_UP_TO
                else list(itertools.pairwise(run))
            )
            for a, b in pairs:
                a, b = int(a), int(b)
                if sets.find(a) == sets.find(b):
                    continue
                if int(np.count_nonzero(sigs[a] == sigs[b])) >= need:
                    sets.union(a, b)
    return [sets.find(i) for i in range(n)]
