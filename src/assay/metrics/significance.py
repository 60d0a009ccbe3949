"""Paired significance of a difference between two systems scored on the same tasks.

Two tests over the per-task differences ``d = b - a``, both two-sided:

- the paired randomisation (permutation) test: under the null hypothesis each task's two
  scores are exchangeable, so each difference's sign is a coin flip. The p-value is the share
  of sign assignments whose mean difference is at least as far from 0 as the observed one:
  every assignment when there are at most ``rounds`` of them, else ``rounds`` random ones
  from a generator seeded with ``seed`` (counted as ``(hits + 1) / (rounds + 1)``, so the
  p-value is never 0). The test trec_eval and ranx users know as Fisher's randomisation test.
- the paired t-test: ``t = mean(d) / (sd(d) / sqrt(n))`` with ``n - 1`` degrees of freedom,
  its p-value from Student's t distribution (through the regularised incomplete beta
  function, computed here; the tests check it against scipy's ``ttest_rel``).

A difference is called significant when the randomisation p-value is below ``ALPHA``. Pure:
no storage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

ALPHA = 0.05
ROUNDS = 10_000
SEED = 0
_CHUNK = 1_000
Floats = Sequence[float] | npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class PairedTest:
    """A paired comparison over ``n`` tasks; p-values are None when not defined (n < 2)."""

    n: int
    mean_difference: float | None
    t: float | None
    p_t: float | None
    p_randomisation: float | None
    significant: bool

    def to_json(self) -> dict[str, object]:
        return {
            "n": self.n,
            "mean_difference": self.mean_difference,
            "t": self.t,
            "p_t": self.p_t,
            "p_randomisation": self.p_randomisation,
            "significant": self.significant,
        }


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz's method)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return result


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):  # the fraction converges fast on this side
        return front * _continued_fraction(a, b, x) / a
    return 1.0 - front * _continued_fraction(b, a, 1.0 - x) / b


def t_test(differences: Floats) -> tuple[float | None, float | None]:
    """``(t, two-sided p)`` of the paired t-test on the differences (None when n < 2). All
    differences equal: p is 1 when they are 0, else 0 (no variance, a certain shift), and t
    is None (it would be infinite, which JSON cannot carry)."""
    d = np.asarray(differences, dtype=np.float64)
    n = len(d)
    if n < 2:
        return None, None
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd <= 1e-12 * max(1.0, abs(mean)):  # equal up to rounding
        return None, (1.0 if abs(mean) <= 1e-12 else 0.0)
    t = mean / (sd / math.sqrt(n))
    df = n - 1
    return t, incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def randomisation_test(differences: Floats, rounds: int = ROUNDS, seed: int = SEED) -> float | None:
    """Two-sided p-value of the paired sign-flip randomisation test (None when n < 1)."""
    d = np.asarray(differences, dtype=np.float64)
    n = len(d)
    if n == 0:
        return None
    observed = abs(float(d.sum())) - 1e-12 * max(1.0, float(np.abs(d).sum()))
    if n < 63 and 2**n <= rounds:  # every assignment of signs
        codes = np.arange(2**n, dtype=np.int64)[:, None] >> np.arange(n, dtype=np.int64)
        signs = 1 - 2 * (codes & 1)
        return float(np.mean(np.abs(signs @ d) >= observed))
    rng = np.random.default_rng(seed)
    total = float(d.sum())
    hits = 0
    for start in range(0, rounds, _CHUNK):
        size = min(_CHUNK, rounds - start)
        random_bytes = rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8)
        flipped = np.unpackbits(random_bytes, axis=1, count=n).astype(np.float64)
        sums = total - 2.0 * (flipped @ d)  # the sum with the flipped differences negated
        hits += int(np.count_nonzero(np.abs(sums) >= observed))
    return (hits + 1) / (rounds + 1)


def paired_test(
    a: Sequence[float], b: Sequence[float], *, rounds: int = ROUNDS, seed: int = SEED
) -> PairedTest:
    """Both tests on paired scores ``a[i]``, ``b[i]`` of the same task ``i``."""
    if len(a) != len(b):
        raise ValueError(f"paired scores need equal lengths, got {len(a)} and {len(b)}")
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    n = len(d)
    t, p_t = t_test(d)
    p_random = randomisation_test(d, rounds, seed) if n >= 2 else None
    return PairedTest(
        n=n,
        mean_difference=float(d.mean()) if n else None,
        t=t,
        p_t=p_t,
        p_randomisation=p_random,
        significant=p_random is not None and p_random < ALPHA,
    )
