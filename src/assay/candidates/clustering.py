"""Topic clusters of the grouped questions: k-means over weighted word features.

Each group's question becomes a vector of its content words (stop words out), hashed into
:data:`DIMENSIONS` buckets and weighted by inverse document frequency over all groups, so
rare words ("Auenweg", "refund") decide the topic more than common ones. k-means (k-means++
start, :data:`ROUNDS` rounds, a fixed seed) runs on at most :data:`FIT_SAMPLE` groups and then
places every group at its nearest centre, in batches, so memory stays bounded. The number of
clusters is about the square root of half the groups, between 1 and :data:`MAX_CLUSTERS`.
Each cluster is named by its three most characteristic words.

Clusters are by shared words, not meaning: "leave" and "holiday" fall apart unless the
questions share other words. That is enough to spread a sample over topics, which is what
the sampler uses them for.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from assay.gold.unanswerable import asked_words as content_words

DIMENSIONS = 256
FIT_SAMPLE = 5_000
ROUNDS = 12
MAX_CLUSTERS = 30
BATCH = 5_000


@dataclass(frozen=True, slots=True)
class Clusters:
    """Per question its cluster number; per cluster its label and centre."""

    numbers: list[int]
    labels: list[str]
    centres: np.ndarray


def nearest(questions: Sequence[str], centres: Sequence[Sequence[float]]) -> list[int]:
    """The nearest stored centre of each question (words unweighted: the weights of the
    grouping are not kept), e.g. to place gold items' questions in the topics."""
    if not centres or not questions:
        return [0] * len(questions) if centres else []
    matrix = np.array(centres, dtype=np.float32)
    buckets = [_bucket_words(q) for q in questions]
    features = _features(buckets, np.ones(DIMENSIONS, dtype=np.float32))
    return [int(n) for n in np.argmax(features @ matrix.T, axis=1)]


def cluster_count(groups: int) -> int:
    return max(1, min(MAX_CLUSTERS, round(math.sqrt(groups / 2))))


def _bucket_words(text: str) -> list[int]:
    return [zlib.crc32(word.encode()) % DIMENSIONS for word in content_words(text)]


def _features(buckets: Sequence[list[int]], idf: np.ndarray) -> np.ndarray:
    out = np.zeros((len(buckets), DIMENSIONS), dtype=np.float32)
    for row, found in enumerate(buckets):
        for bucket in found:
            out[row, bucket] += 1.0
    out *= idf
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = out / norms
    return unit


def _idf(buckets: Sequence[list[int]]) -> np.ndarray:
    seen = np.zeros(DIMENSIONS, dtype=np.float64)
    for found in buckets:
        for bucket in set(found):
            seen[bucket] += 1
    weights: np.ndarray = np.log((1 + len(buckets)) / (1 + seen)).astype(np.float32) + 1.0
    return weights


def cluster(questions: Sequence[str], k: int | None = None) -> Clusters:
    """Cluster ``questions`` (one per group) by topic; see the module docstring."""
    if not questions:
        return Clusters([], [], np.zeros((0, DIMENSIONS), np.float32))
    words = [sorted(content_words(q)) for q in questions]
    buckets = [[zlib.crc32(w.encode()) % DIMENSIONS for w in found] for found in words]
    idf = _idf(buckets)
    k = min(k or cluster_count(len(questions)), len(questions))
    rng = np.random.default_rng(33)
    sample_rows = (
        np.sort(rng.choice(len(questions), FIT_SAMPLE, replace=False))
        if len(questions) > FIT_SAMPLE
        else np.arange(len(questions))
    )
    sample = _features([buckets[i] for i in sample_rows], idf)
    centres = _kmeans(sample, k, rng)
    numbers: list[int] = []
    for first in range(0, len(questions), BATCH):
        features = _features(buckets[first : first + BATCH], idf)
        numbers += [int(n) for n in np.argmax(features @ centres.T, axis=1)]
    return Clusters(numbers, _labels(words, numbers, k), centres)


def _kmeans(points: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Centres on the unit sphere (cosine k-means), k-means++ start."""
    centres = [points[int(rng.integers(len(points)))]]
    for _ in range(1, k):
        similarity = np.max(points @ np.array(centres).T, axis=1)
        distance = np.clip(1.0 - similarity, 0.0, None) ** 2
        total = float(distance.sum())
        pick = int(rng.choice(len(points), p=distance / total)) if total > 0 else len(centres)
        centres.append(points[min(pick, len(points) - 1)])
    matrix = np.array(centres, dtype=np.float32)
    for _ in range(ROUNDS):
        nearest = np.argmax(points @ matrix.T, axis=1)
        sums = np.zeros_like(matrix)
        np.add.at(sums, nearest, points)
        norms = np.linalg.norm(sums, axis=1)
        filled = norms > 0  # an empty cluster keeps its centre
        matrix[filled] = sums[filled] / norms[filled, None]
    return matrix


def _labels(questions: Sequence[list[str]], numbers: list[int], k: int) -> list[str]:
    """Each cluster's three words most over-represented in it (ties: the more frequent)."""
    overall: Counter[str] = Counter()
    per: list[Counter[str]] = [Counter() for _ in range(k)]
    for words, number in zip(questions, numbers, strict=True):
        overall.update(words)
        per[number].update(words)
    labels = []
    total = max(1, len(questions))
    for counts in per:
        size = max(1, sum(counts.values()))
        ranked = sorted(
            counts,
            key=lambda w: (-(counts[w] / size) / (overall[w] / total) * counts[w], w),
        )
        labels.append(", ".join(ranked[:3]))
    return labels
