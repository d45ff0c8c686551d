"""Reference values and reference implementations that the ``analysis.stats`` tests compare
against.

* ``VECTORS``: published values (Krippendorff's alpha, correlations with ties, entropy,
  percentage disagreement), read from ``reference/stat_vectors.json``.
* :func:`brute_force_alpha`: Krippendorff's alpha pair by pair, straight from the definition.
* :func:`resampled_correlations`, :func:`correlate_with_bootstrap`, :func:`correlate_subsets`:
  the bootstrap of ANALYSIS.md written plainly, one explicit resample matrix and one ranking
  per resample, for one source at a time. ``analysis.stats.bootstrap`` computes the same
  numbers with vectorised kernels (shared by all sources, or one source at a time for very
  large item sets); these are the slow, obvious version to hold them to.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from analysis import stats

# A copy of the project's shared reference file (published values; see its "source" fields),
# kept with the tests so that they never depend on a folder outside the repository.
VECTORS_PATH = Path(__file__).resolve().parent / "reference" / "stat_vectors.json"
VECTORS = json.loads(VECTORS_PATH.read_text())
VECTOR_TOL = 1e-6  # the reference values are given to 6 decimals


def vector_params(section: str, key: str | None = None) -> list:
    """One pytest param per reference case."""
    cases = VECTORS[section] if key is None else VECTORS[section][key]
    return [pytest.param(case, id=str(case.get("id", i))) for i, case in enumerate(cases)]


# --------------------------------------------------------------------------------------------
# Krippendorff's alpha
# --------------------------------------------------------------------------------------------


def brute_force_alpha(units: dict[int, list[int]], level: str) -> float | None:
    """Pair-by-pair coincidences and an explicit ordinal sum, straight from Krippendorff 2011."""
    values = sorted({v for unit in units.values() for v in unit})
    coincidence = {(c, k): 0.0 for c in values for k in values}
    for unit in units.values():
        m = len(unit)
        if m < 2:
            continue
        for i, j in itertools.permutations(range(m), 2):
            coincidence[unit[i], unit[j]] += 1 / (m - 1)
    frequency = {c: sum(coincidence[c, k] for k in values) for c in values}
    n = sum(frequency.values())

    def delta2(c: int, k: int) -> float:
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return float((c - k) ** 2)
        low, high = min(c, k), max(c, k)
        between = sum(frequency[g] for g in values if low <= g <= high)
        return (between - (frequency[c] + frequency[k]) / 2) ** 2

    observed = sum(coincidence[c, k] * delta2(c, k) for c in values for k in values) / n
    expected = sum(frequency[c] * frequency[k] * delta2(c, k) for c in values for k in values) / (
        n * (n - 1)
    )
    return None if expected == 0 else 1 - observed / expected


# --------------------------------------------------------------------------------------------
# Bootstrap of one source
# --------------------------------------------------------------------------------------------


def _finite_pairs(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    finite = np.isfinite(x) & np.isfinite(y)
    return x[finite], y[finite]


def _spearman_of_rows(x_drawn: np.ndarray, y_drawn: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row pair: Pearson's r of the rows' mid-ranks.

    Ranks are doubled (odd integers, mean ``n + 1``) so that every sum below is an exact
    integer; the centred sums are then ``sum R S - n (n + 1)^2``. The production kernels keep
    the same exact sums, so their rho is bit-identical to this one, not just close.
    """
    n = x_drawn.shape[1]
    x_rank = np.rint(2 * scipy.stats.rankdata(x_drawn, axis=1)).astype(np.int64)
    y_rank = np.rint(2 * scipy.stats.rankdata(y_drawn, axis=1)).astype(np.int64)
    centre = n * (n + 1) ** 2
    cross = (x_rank * y_rank).sum(axis=1) - centre
    x_squares = (x_rank * x_rank).sum(axis=1) - centre
    y_squares = (y_rank * y_rank).sum(axis=1) - centre
    with np.errstate(divide="ignore", invalid="ignore"):
        return cross.astype(np.float64) / np.sqrt(
            x_squares.astype(np.float64) * y_squares.astype(np.float64)
        )


def _pearson_of_rows(x: np.ndarray, y: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """Pearson's r of each resample (row of ``drawn``) of the pairs (x, y).

    From the raw moments of the values standardised over all pairs,
    ``(S_xy/n - S_x S_y/n^2) / sqrt((S_xx/n - (S_x/n)^2) (S_yy/n - (S_y/n)^2))``: the formula
    the production kernels use, so that the two differ by summation order only. The centred
    formula rounds differently on nearly constant resamples; the test against scipy holds
    this one to it on ordinary resamples.
    """
    n = drawn.shape[1]
    x_z = (x - x.mean()) / x.std()
    y_z = (y - y.mean()) / y.std()
    sum_x, sum_y = x_z[drawn].sum(axis=1), y_z[drawn].sum(axis=1)
    sum_xx, sum_yy = (x_z**2)[drawn].sum(axis=1), (y_z**2)[drawn].sum(axis=1)
    sum_xy = (x_z * y_z)[drawn].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sum_xy / n - (sum_x / n) * (sum_y / n)
        x_var = sum_xx / n - (sum_x / n) ** 2
        y_var = sum_yy / n - (sum_y / n) ** 2
        return cov / np.sqrt(x_var * y_var)


def resampled_correlations(
    x: np.ndarray, y: np.ndarray, n_resamples: int = 1000, seed: int | None = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Spearman's rho and Pearson's r of every bootstrap resample of the finite (x, y) pairs.

    Resample ``b`` draws the pairs of row ``b`` of
    ``np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))``. Returns two
    ``(n_resamples,)`` arrays, clipped to [-1, 1]; ``NaN`` where a resample's x or y is
    constant, and everywhere when the correlation of (x, y) itself is undefined.
    """
    x, y = _finite_pairs(x, y)
    n = x.size
    if n < 3 or x.min() == x.max() or y.min() == y.max():
        return np.full(n_resamples, np.nan), np.full(n_resamples, np.nan)
    drawn = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    x_drawn, y_drawn = x[drawn], y[drawn]
    usable = (np.ptp(x_drawn, axis=1) > 0) & (np.ptp(y_drawn, axis=1) > 0)
    rho = np.clip(_spearman_of_rows(x_drawn, y_drawn), -1.0, 1.0)
    r = np.clip(_pearson_of_rows(x, y, drawn), -1.0, 1.0)
    return np.where(usable, rho, np.nan), np.where(usable, r, np.nan)


def _with_percentile_interval(
    point: stats.CorrelationResult, resampled: np.ndarray
) -> stats.CorrelationResult:
    """The 2.5th / 97.5th percentiles of the usable resamples; none if under half are usable."""
    usable = resampled[np.isfinite(resampled)]
    if resampled.size == 0 or 2 * usable.size < resampled.size:
        return point._replace(n_resamples_used=usable.size)
    low, high = np.percentile(usable, [2.5, 97.5])
    return point._replace(ci95=(float(low), float(high)), n_resamples_used=usable.size)


def correlate_with_bootstrap(
    x: np.ndarray, y: np.ndarray, n_resamples: int = 1000, seed: int | None = 0
) -> stats.BootstrapCorrelation:
    """``stats.spearman`` and ``stats.pearson`` of (x, y), each with its percentile interval
    over :func:`resampled_correlations`."""
    point = stats.BootstrapCorrelation(stats.spearman(x, y), stats.pearson(x, y))
    if point.spearman.r is None:
        return point
    rho, r = resampled_correlations(x, y, n_resamples, seed)
    return stats.BootstrapCorrelation(
        spearman=_with_percentile_interval(point.spearman, rho),
        pearson=_with_percentile_interval(point.pearson, r),
    )


def correlate_subsets(
    x: np.ndarray,
    y: np.ndarray,
    masks: Mapping[str, np.ndarray],
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> dict[str, stats.BootstrapCorrelation]:
    """:func:`correlate_with_bootstrap` on each subset's items, each from its own seed."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    return {
        name: correlate_with_bootstrap(x[mask], y[mask], n_resamples, seed)
        for name, mask in masks.items()
    }
