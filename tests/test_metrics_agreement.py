"""Agreement statistics against worked examples and scikit-learn, statsmodels and
krippendorff (test-only oracles) on seeded random ratings."""

from __future__ import annotations

import importlib
import math
import os
from types import ModuleType

import numpy as np
import pytest

from assay.errors import InvalidInput
from assay.metrics.agreement import (
    category_counts,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
)


def oracle(module: str) -> ModuleType:
    """Import a reference implementation; missing is a skip locally and a failure in CI."""
    try:
        return importlib.import_module(module)
    except ImportError:
        message = f"{module} is not installed (it is in the 'oracle' extra)"
        if os.environ.get("CI") in ("1", "true"):
            pytest.fail(message)
        pytest.skip(message)


# --- Cohen --------------------------------------------------------------------------------


def test_cohen_worked_example() -> None:
    # 2x2 table [[20, 5], [10, 15]]: po = 0.7, pe = 0.5*0.6 + 0.5*0.4 = 0.5
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_missing_and_undefined() -> None:
    assert cohen_kappa(["a", None, "b"], ["a", "b", None]) is None  # one pair, one label
    assert cohen_kappa(["a", None, "b", "a"], ["a", "b", "b", "b"]) == pytest.approx(
        cohen_kappa(["a", "b", "a"], ["a", "b", "b"])
    )
    assert cohen_kappa([None], [None]) is None
    with pytest.raises(InvalidInput, match="rater A has 2 ratings, rater B 1"):
        cohen_kappa(["a", "b"], ["a"])
    with pytest.raises(InvalidInput, match="weights"):
        cohen_kappa(["a"], ["a"], weights="cubic")
    with pytest.raises(InvalidInput, match="cannot be ordered"):
        cohen_kappa([1, "a"], [1, "a"])


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_equals_scikit_learn(weights: str | None) -> None:
    metrics = oracle("sklearn.metrics")
    rng = np.random.default_rng(4)
    for _ in range(50):
        a = rng.integers(0, rng.integers(2, 6), 60)
        b = np.where(rng.random(60) < 0.6, a, rng.integers(0, 5, 60))
        expected = metrics.cohen_kappa_score(a, b, weights=weights)
        assert cohen_kappa(a.tolist(), b.tolist(), weights) == pytest.approx(expected, abs=1e-12)


# --- Fleiss -------------------------------------------------------------------------------


def test_fleiss_from_labels_and_perfect_agreement() -> None:
    table, categories = category_counts([["a", "a", "b"], ["b", "b", "b"], ["a", "a", "a"]])
    assert categories == ["a", "b"]
    assert table.tolist() == [[2, 1], [0, 3], [3, 0]]
    # P_i = (1/3, 1, 1) -> mean 7/9; p = (5/9, 4/9) -> Pe = 41/81
    assert fleiss_kappa(table) == pytest.approx((7 / 9 - 41 / 81) / (1 - 41 / 81))
    assert fleiss_kappa([[3, 0], [0, 3]]) == 1.0
    assert fleiss_kappa([[3, 0], [3, 0]]) is None  # one category only: undefined


def test_fleiss_errors() -> None:
    with pytest.raises(InvalidInput, match="same number of ratings"):
        fleiss_kappa([[2, 1], [1, 1]])
    with pytest.raises(InvalidInput, match="items x categories"):
        fleiss_kappa([1, 2, 3])
    with pytest.raises(InvalidInput, match="at least two"):
        fleiss_kappa([[1, 0]])
    with pytest.raises(InvalidInput, match="not one of the categories"):
        category_counts([["a", "z"]], categories=["a", "b"])


def test_fleiss_equals_statsmodels() -> None:
    inter_rater = oracle("statsmodels.stats.inter_rater")
    rng = np.random.default_rng(5)
    for _ in range(50):
        categories = int(rng.integers(2, 6))
        raters = int(rng.integers(2, 8))
        shares = rng.dirichlet(np.ones(categories))
        table = rng.multinomial(raters, shares, size=int(rng.integers(5, 40)))
        expected = inter_rater.fleiss_kappa(table, method="fleiss")
        assert fleiss_kappa(table) == pytest.approx(expected, abs=1e-12)


# --- Krippendorff -------------------------------------------------------------------------


def test_krippendorff_worked_example() -> None:
    # Krippendorff's textbook example (3 coders, 12 units, missing values), nominal 0.743
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.743, abs=1e-3)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=1e-3)


def test_krippendorff_edges() -> None:
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None  # a single value: undefined
    assert krippendorff_alpha([[1, None], [None, 2]]) is None  # no unit has two values
    assert krippendorff_alpha([["x", "y"], ["x", "y"]]) == 1.0
    assert krippendorff_alpha([[1, math.nan, 2], [1, 3, 2]], "ordinal") == 1.0
    with pytest.raises(InvalidInput, match="unknown level"):
        krippendorff_alpha([[1]], "fuzzy")
    with pytest.raises(InvalidInput, match="one entry per unit"):
        krippendorff_alpha([[1, 2], [1]])
    with pytest.raises(InvalidInput, match="numeric"):
        krippendorff_alpha([["a", "b"], ["a", "c"]], "interval")


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_equals_krippendorff_package(level: str) -> None:
    krippendorff = oracle("krippendorff")
    rng = np.random.default_rng(6)
    for _ in range(30):
        raters, units = int(rng.integers(2, 6)), int(rng.integers(5, 40))
        data = rng.integers(1, int(rng.integers(3, 8)), (raters, units)).astype(float)
        agree = rng.random(units) < 0.5
        data[:, agree] = data[0, agree]
        data[rng.random(data.shape) < 0.25] = np.nan
        rows = [[None if np.isnan(v) else float(v) for v in row] for row in data]
        ours = krippendorff_alpha(rows, level)
        try:
            expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        except ValueError:  # the package refuses data with a single value
            assert ours is None
            continue
        assert ours == pytest.approx(expected, abs=1e-9)
