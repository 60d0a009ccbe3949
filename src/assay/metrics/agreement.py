"""Inter-annotator agreement: Cohen's kappa, Fleiss' kappa and Krippendorff's alpha.

Each returns ``None`` when the statistic is undefined (for example when every rating is
the same value, so chance agreement is already perfect); scikit-learn, statsmodels and the
krippendorff package return NaN or raise there.

- ``cohen_kappa(a, b, weights=None)``: two raters, same items in the same order. Pairs in
  which either rating is missing (``None``) are dropped. Categories are the sorted union of
  the labels seen; ``weights="linear"`` or ``"quadratic"`` weigh disagreements by the
  distance of the categories' positions in that order (as scikit-learn does).
- ``fleiss_kappa(table)``: ``table[i][j]`` = how many raters put item ``i`` in category
  ``j``; every item must have the same number of raters (``category_counts`` builds the
  table from per-item label lists).
- ``krippendorff_alpha(data, level="nominal")``: ``data[r][u]`` = rater ``r``'s value for
  unit ``u``, ``None`` or NaN when missing; any number of raters per unit. Levels:
  ``nominal``, ``ordinal`` (ranks of the sorted values, weighted by how often each value is
  used), ``interval`` (squared difference) and ``ratio``. Units with fewer than two values
  are left out, as the definition requires.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from assay.errors import InvalidInput

FloatMatrix = npt.NDArray[np.float64]
Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _sorted_labels(labels: set[Hashable]) -> list[Hashable]:
    try:
        return sorted(labels)  # type: ignore[type-var]
    except TypeError as error:
        raise InvalidInput(
            f"ratings mix labels that cannot be ordered ({sorted(map(repr, labels))}); use "
            "labels of one type"
        ) from error


def cohen_kappa(
    rater_a: Sequence[Hashable | None],
    rater_b: Sequence[Hashable | None],
    weights: Literal["linear", "quadratic"] | None = None,
) -> float | None:
    """Cohen's kappa of two raters (optionally weighted)."""
    if len(rater_a) != len(rater_b):
        raise InvalidInput(
            f"Cohen's kappa pairs ratings by item: rater A has {len(rater_a)} ratings, "
            f"rater B {len(rater_b)}"
        )
    if weights not in (None, "linear", "quadratic"):
        raise InvalidInput(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    pairs = [
        (a, b) for a, b in zip(rater_a, rater_b, strict=True) if not (_missing(a) or _missing(b))
    ]
    if not pairs:
        return None
    labels = _sorted_labels({a for a, _ in pairs} | {b for _, b in pairs})
    position = {label: index for index, label in enumerate(labels)}
    size = len(labels)
    observed = np.zeros((size, size), dtype=np.float64)
    for a, b in pairs:
        observed[position[a], position[b]] += 1
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    indexes = np.arange(size)
    distance = np.abs(indexes[:, None] - indexes[None, :]).astype(np.float64)
    if weights is None:
        weight = (distance > 0).astype(np.float64)
    elif weights == "linear":
        weight = distance
    else:
        weight = distance**2
    disagreement_expected = float((weight * expected).sum())
    if disagreement_expected == 0:
        return None
    return 1.0 - float((weight * observed).sum()) / disagreement_expected


def category_counts(
    item_labels: Sequence[Sequence[Hashable]], categories: Sequence[Hashable] | None = None
) -> tuple[FloatMatrix, list[Hashable]]:
    """Turn per-item label lists into Fleiss' count table; returns (table, categories)."""
    if categories is None:
        categories = _sorted_labels({label for labels in item_labels for label in labels})
    column = {category: index for index, category in enumerate(categories)}
    table = np.zeros((len(item_labels), len(categories)), dtype=np.float64)
    for row, labels in enumerate(item_labels):
        for label in labels:
            if label not in column:
                raise InvalidInput(f"item {row}: label {label!r} is not one of the categories")
            table[row, column[label]] += 1
    return table, list(categories)


def fleiss_kappa(table: npt.ArrayLike) -> float | None:
    """Fleiss' kappa from an items x categories table of rating counts."""
    counts = np.asarray(table, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] == 0:
        raise InvalidInput(
            f"Fleiss' kappa needs an items x categories table of counts, got shape {counts.shape}"
        )
    raters = counts.sum(axis=1)
    if np.any(raters != raters[0]):
        raise InvalidInput(
            "Fleiss' kappa needs the same number of ratings for every item; rows sum to "
            f"{sorted(set(raters.astype(int).tolist()))}"
        )
    per_item = raters[0]
    if per_item < 2:
        raise InvalidInput("Fleiss' kappa needs at least two ratings per item")
    shares = counts.sum(axis=0) / counts.sum()
    item_agreement = ((counts**2).sum(axis=1) - per_item) / (per_item * (per_item - 1))
    chance = float((shares**2).sum())
    if chance >= 1.0:
        return None
    return (float(item_agreement.mean()) - chance) / (1.0 - chance)


def _distances(level: Level, values: list[Hashable], totals: FloatMatrix) -> FloatMatrix:
    """Squared distance between every pair of values, by level of measurement."""
    size = len(values)
    if level == "nominal":
        return 1.0 - np.eye(size)
    if level == "ordinal":
        cumulative = np.concatenate(([0.0], np.cumsum(totals)))
        low = np.minimum.outer(np.arange(size), np.arange(size))
        high = np.maximum.outer(np.arange(size), np.arange(size))
        between = cumulative[high + 1] - cumulative[low]
        ordinal: FloatMatrix = (between - (totals[:, None] + totals[None, :]) / 2.0) ** 2
        return ordinal
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise InvalidInput(f"the {level} level needs numeric values, got {values!r}") from error
    difference = numbers[:, None] - numbers[None, :]
    if level == "interval":
        return difference**2
    total = numbers[:, None] + numbers[None, :]
    ratio = np.divide(difference, total, out=np.zeros_like(difference), where=total != 0)
    return ratio**2


def krippendorff_alpha(
    data: Sequence[Sequence[Hashable | None]], level: Level = "nominal"
) -> float | None:
    """Krippendorff's alpha; ``data`` is raters x units with ``None``/NaN for missing."""
    if level not in LEVELS:
        raise InvalidInput(f"unknown level {level!r}; valid levels: {', '.join(LEVELS)}")
    if not data:
        raise InvalidInput("Krippendorff's alpha needs at least one rater's values")
    width = len(data[0])
    if any(len(row) != width for row in data):
        raise InvalidInput(
            "every rater needs one entry per unit (None when missing); row lengths are "
            f"{sorted({len(row) for row in data})}"
        )
    present = {value for row in data for value in row if not _missing(value)}
    if level == "nominal":
        try:
            values = _sorted_labels(present)
        except InvalidInput:
            values = list(present)
    else:
        values = _sorted_labels(present)
    if not values:
        return None
    column = {value: index for index, value in enumerate(values)}
    unit_counts = np.zeros((width, len(values)), dtype=np.float64)
    for row in data:
        for unit, value in enumerate(row):
            if not _missing(value):
                unit_counts[unit, column[value]] += 1
    per_unit = unit_counts.sum(axis=1)
    pairable = per_unit >= 2
    unit_counts, per_unit = unit_counts[pairable], per_unit[pairable]
    if unit_counts.shape[0] == 0:
        return None
    scaled = unit_counts / (per_unit - 1.0)[:, None]
    coincidences = scaled.T @ unit_counts - np.diag(scaled.sum(axis=0))
    totals = coincidences.sum(axis=0)
    pairs = float(totals.sum())
    distance = _distances(level, values, totals)
    observed = float((coincidences * distance).sum())
    expected = float((np.outer(totals, totals) * distance).sum()) / (pairs - 1.0)
    if expected == 0:
        return None
    return 1.0 - observed / expected
