"""Paired significance: the t-test against scipy, the randomisation test on known cases."""

from __future__ import annotations

import numpy as np
import pytest

from assay.metrics.significance import (
    incomplete_beta,
    paired_test,
    randomisation_test,
    t_test,
)

stats = pytest.importorskip("scipy.stats")  # the oracle extra


def test_incomplete_beta_matches_scipy() -> None:
    special = pytest.importorskip("scipy.special")
    for a, b, x in [
        (0.5, 0.5, 0.3),
        (22.5, 0.5, 0.97),
        (2, 3, 0.5),
        (100, 0.5, 0.999),
        (1, 1, 0.2),
    ]:
        assert incomplete_beta(a, b, x) == pytest.approx(float(special.betainc(a, b, x)), rel=1e-9)


@pytest.mark.parametrize("n", [2, 3, 5, 46, 500])
def test_t_test_matches_scipy_ttest_rel(n: int) -> None:
    rng = np.random.default_rng(n)
    a = rng.random(n)
    b = a + rng.normal(0.03, 0.2, n)
    t, p = t_test(b - a)
    expected = stats.ttest_rel(b, a)
    assert t == pytest.approx(float(expected.statistic), rel=1e-9)
    assert p == pytest.approx(float(expected.pvalue), rel=1e-7)


def test_t_test_edge_cases() -> None:
    assert t_test([0.5]) == (None, None)
    assert t_test([0.0, 0.0, 0.0]) == (None, 1.0)
    assert t_test([0.1, 0.1, 0.1]) == (None, 0.0)


def test_exact_randomisation_on_a_small_case() -> None:
    # differences 1, 2, 3: of the 8 sign assignments only +++ and --- reach |sum| 6
    assert randomisation_test([1.0, 2.0, 3.0]) == pytest.approx(2 / 8)
    # against scipy's exact permutation test of the same statistic
    d = [0.2, -0.1, 0.4, 0.3, 0.05, -0.02, 0.25]
    expected = stats.permutation_test(
        (np.array(d),),
        np.mean,
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=np.inf,
    )
    assert randomisation_test(d) == pytest.approx(float(expected.pvalue))


def test_small_noisy_ndcg_difference_over_46_tasks_is_not_significant() -> None:
    rng = np.random.default_rng(46)
    a = rng.uniform(0.2, 0.9, 46)
    noise = rng.normal(0.0, 0.15, 46)
    b = np.clip(a + noise - noise.mean() + 0.025, 0, 1)  # mean difference about 0.025
    found = paired_test(list(a), list(b))
    assert found.n == 46
    assert found.mean_difference == pytest.approx(0.025, abs=0.01)
    assert found.p_randomisation is not None and found.p_randomisation > 0.05
    assert found.p_t is not None and found.p_t > 0.05
    assert not found.significant
    again = paired_test(list(a), list(b))
    assert again.p_randomisation == found.p_randomisation  # fixed seed: the same p


def test_large_consistent_difference_is_significant() -> None:
    rng = np.random.default_rng(7)
    a = rng.uniform(0.2, 0.6, 46)
    b = a + rng.uniform(0.1, 0.2, 46)
    found = paired_test(list(a), list(b))
    assert found.significant
    assert found.p_randomisation == pytest.approx(1 / 10_001)  # no assignment reaches it
    assert found.p_t is not None and found.p_t < 1e-10


def test_paired_test_needs_pairs() -> None:
    with pytest.raises(ValueError, match="equal lengths"):
        paired_test([1.0], [1.0, 2.0])
    single = paired_test([0.1], [0.9])
    assert single.n == 1 and single.p_randomisation is None and not single.significant
