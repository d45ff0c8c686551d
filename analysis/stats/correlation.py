"""Spearman and Pearson correlations with p-values, as ``scipy.stats`` computes them.

:func:`pearson` and :func:`spearman` give one correlation of two columns; the result types
(:class:`CorrelationResult`, :class:`BootstrapCorrelation`) are shared with
:mod:`analysis.stats.bootstrap`, which adds the bootstrap intervals. An undefined correlation
(fewer than 3 pairs, or a constant column) is ``None`` with a reason, never ``NaN``.

p-values depend on the number of pairs ``n`` (``p_method`` of a result says which one it is):
under :data:`MIN_P_VALUE_PAIRS` there is none (``p = None``: a handful of points tests
nothing, and the t approximation would call ρ = −1 from 4 points "p < 0.001"); up to
:data:`EXACT_P_MAX_PAIRS` it is the exact permutation p-value over all n! pairings of the
two columns (as ``scipy.stats.permutation_test(..., permutation_type="pairings",
n_resamples=np.inf)``); beyond, Spearman's comes from the t approximation and Pearson's from
its exact distribution under bivariate normality, as ``scipy.stats`` gives them.

The names below that are public but not in ``__all__`` (:func:`undefined_reason`,
:func:`group_by_value`, :func:`prepare_column`, :func:`point_correlations`) are the pieces
the bootstrap reuses so that its point estimates are bit-identical to these functions.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy import special

__all__ = [
    "EXACT_P_MAX_PAIRS",
    "MIN_P_VALUE_PAIRS",
    "BootstrapCorrelation",
    "CorrelationResult",
    "midranks",
    "pearson",
    "spearman",
]

_MIN_CORRELATION_ITEMS = 3

#: A correlation over fewer pairs than this has no p-value: with 4 pairs the smallest exact
#: two-sided p is 2/4! ≈ 0.083, so no test can reject anything, and an approximation would
#: still print a small p for a perfect ρ.
MIN_P_VALUE_PAIRS = 5
#: Up to this many pairs the p-value is exact (all n! pairings: 40,320 at 8, each one sum,
#: about a millisecond); beyond, the approximations are close enough and enumeration is not
#: affordable for every annotator of a batch.
EXACT_P_MAX_PAIRS = 8


class CorrelationResult(NamedTuple):
    """One correlation: ``r``, two-sided ``p``, 95 % bootstrap CI and ``n`` pairs used.

    ``r`` and ``p`` are ``None`` (with ``reason``) when fewer than 3 pairs or a constant column;
    never ``NaN``. ``ci95`` is ``None`` when no bootstrap was run or fewer than half of the
    resamples were usable; ``n_resamples_used`` says how many entered the interval.
    """

    r: float | None
    p: float | None
    ci95: tuple[float, float] | None
    n: int
    reason: str | None = None
    n_resamples_used: int = 0
    # how ``p`` was computed: "exact" (all pairings), "t" (Spearman), "beta" (Pearson), or
    # None when there is no p (undefined, or fewer than MIN_P_VALUE_PAIRS pairs)
    p_method: str | None = None


class BootstrapCorrelation(NamedTuple):
    """Spearman and Pearson results for one (x, y), with or without bootstrap intervals."""

    spearman: CorrelationResult
    pearson: CorrelationResult


class ValueGroups(NamedTuple):
    """Items grouped by equal value, groups in ascending order of value."""

    item_group: np.ndarray  # (n,) group of each item
    values: np.ndarray  # (G,) the value of each group
    sizes: np.ndarray  # (G,) items in each group


class PreparedColumn(NamedTuple):
    """One column's parts of :func:`point_correlations`, computed once for many partners."""

    rank_centred: np.ndarray  # mid-ranks minus their mean
    rank_variance: float  # their sample variance (ddof = 1)
    unit: np.ndarray  # values centred, scaled to unit Euclidean norm


def _finite_pairs(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs where both values are finite, as float64 (``ValueError`` on unequal length)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length ({x.size} != {y.size})")
    finite = np.isfinite(x) & np.isfinite(y)
    if finite.all():
        return x, y
    return x[finite], y[finite]


def undefined_reason(x: np.ndarray, y: np.ndarray) -> str | None:
    """Why no correlation of the finite pairs (x, y) exists, or ``None`` when it does."""
    n = x.size
    if n < _MIN_CORRELATION_ITEMS:
        return f"fewer than 3 items (n={n})"
    if x.min() == x.max():
        return f"x is constant (all {n} values equal)"
    if y.min() == y.max():
        return f"y is constant (all {n} values equal)"
    return None


def _unit_centred(values: np.ndarray) -> np.ndarray:
    """One column's part of Pearson's r as scipy.stats.pearsonr computes it (the centred,
    norm-scaled dot product): centred, max-scaled, unit-norm."""
    centred = values - values.mean()
    centred = centred / np.abs(centred).max()
    return centred / np.linalg.norm(centred)


def _pearson_r_of(x_unit: np.ndarray, y_unit: np.ndarray) -> float:
    return float(np.clip(np.dot(x_unit, y_unit), -1.0, 1.0))


def _rank_side(rank: np.ndarray) -> tuple[np.ndarray, float]:
    """One rank vector's part of :func:`_rank_correlation_of`: centred ranks and their variance."""
    centred = rank - rank.mean()
    return centred, np.dot(centred, centred) * (1.0 / (rank.size - 1))


def _rank_correlation_of(
    x_centred: np.ndarray, c_xx: float, y_centred: np.ndarray, c_yy: float
) -> float:
    """Correlation of two rank vectors as ``np.corrcoef`` computes it (scipy.stats.spearmanr).

    ``c = X_c X_c^T / (n - 1)``, ``r = c_xy / sd_y / sd_x``; mirroring the operation order makes
    a perfect rank correlation exactly 1, as scipy reports it.
    """
    c_xy = np.dot(y_centred, x_centred) * (1.0 / (x_centred.size - 1))
    return float(np.clip(c_xy / np.sqrt(c_yy) / np.sqrt(c_xx), -1.0, 1.0))


def _pearson_p(r: float, n: int) -> float:
    """Two-sided p of Pearson's r: r ~ Beta(n/2 - 1, n/2 - 1) on (-1, 1) under H0.

    Exact for bivariate normal data (Fisher 1915; as scipy.stats.pearsonr).
    """
    ab = n / 2 - 1
    return float(min(1.0, 2 * special.betaincc(ab, ab, (abs(r) + 1) / 2)))


def _spearman_p(rho: float, n: int) -> float:
    """Two-sided p of Spearman's rho by the t approximation (as scipy.stats.spearmanr).

    ``t = rho sqrt((n - 2) / ((1 + rho)(1 - rho)))`` with ``n - 2`` degrees of freedom.
    """
    dof = n - 2
    rho = np.float64(rho)
    with np.errstate(divide="ignore"):
        t = rho * np.sqrt(np.clip(dof / ((rho + 1.0) * (1.0 - rho)), 0.0, None))
    return float(min(1.0, 2 * special.stdtr(dof, -abs(t))))


@functools.cache
def _pairings(n: int) -> np.ndarray:
    """All n! orderings of ``range(n)``, one per row (cached: a few per process)."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.intp).reshape(-1, n)


def exact_pairing_p(x_centred: np.ndarray, y_centred: np.ndarray) -> float:
    """Two-sided exact permutation p-value of the correlation of two centred columns.

    Under independence every pairing of the y values with the x values is equally likely;
    the correlation of a pairing is its sum ``Σ x_i y_π(i)`` over a denominator that does not
    change, so the n! sums give the null distribution. p = 2 · min(P(S ≤ s), P(S ≥ s)),
    at most 1, with a relative tolerance for sums equal to the observed one (the two-sided
    p of ``scipy.stats.permutation_test`` with ``permutation_type="pairings"``). Ties, as
    mid-ranks, stay in every pairing, so the distribution is the exact one given the ties.
    """
    sums = y_centred[_pairings(x_centred.size)] @ x_centred
    observed = float(np.dot(y_centred, x_centred))
    tolerance = 1e-9 * float(np.sqrt(np.dot(x_centred, x_centred) * np.dot(y_centred, y_centred)))
    below = np.count_nonzero(sums <= observed + tolerance)
    above = np.count_nonzero(sums >= observed - tolerance)
    return float(min(1.0, 2 * min(below, above) / sums.size))


def _p_value(
    x_centred: np.ndarray, y_centred: np.ndarray, approximate: Callable[[], float], method: str
) -> tuple[float | None, str | None]:
    """``(p, p_method)`` by the number of pairs: none, exact, or ``approximate()``."""
    n = x_centred.size
    if n < MIN_P_VALUE_PAIRS:
        return None, None
    if n <= EXACT_P_MAX_PAIRS:
        return exact_pairing_p(x_centred, y_centred), "exact"
    return approximate(), method


def spearman_p(rank_x_centred: np.ndarray, rank_y_centred: np.ndarray, rho: float):
    """``(p, p_method)`` of Spearman's rho from the two columns' centred mid-ranks."""
    n = rank_x_centred.size
    return _p_value(rank_x_centred, rank_y_centred, lambda: _spearman_p(rho, n), "t")


def pearson_p(x_unit: np.ndarray, y_unit: np.ndarray, r: float):
    """``(p, p_method)`` of Pearson's r from the two centred (unit-scaled) columns."""
    n = x_unit.size
    return _p_value(x_unit, y_unit, lambda: _pearson_p(r, n), "beta")


def group_by_value(values: np.ndarray, order: np.ndarray | None = None) -> ValueGroups:
    """Group equal values; ``order`` is a stable ascending argsort of ``values`` if known."""
    if order is None:
        order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts_group = np.empty(values.size, dtype=bool)
    starts_group[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts_group[1:])
    group_sorted = np.cumsum(starts_group) - 1
    item_group = np.empty(values.size, dtype=np.int64)
    item_group[order] = group_sorted
    group_values = ordered[starts_group]
    group_sizes = np.bincount(group_sorted, minlength=group_values.size)
    return ValueGroups(item_group, group_values, group_sizes)


def _midranks_from_weights(group_weights: np.ndarray) -> np.ndarray:
    """Mid-rank of each value group given how often each group occurs (last axis ascending).

    Group g spans ranks ``C_{g-1} + 1 .. C_g`` (``C`` = cumulative weight), so its mid-rank is
    ``C_g - (w_g - 1) / 2`` (the average rank assigned to ties, as scipy.stats.rankdata).
    """
    return np.cumsum(group_weights, axis=-1) - (group_weights - 1) / 2


def midranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties given their average rank (``scipy.stats.rankdata``, ``'average'``)."""
    values = np.asarray(values, dtype=np.float64).ravel()
    item_group, _, group_sizes = group_by_value(values)
    return _midranks_from_weights(group_sizes)[item_group]


def pearson(x: np.ndarray, y: np.ndarray) -> CorrelationResult:
    """Pearson's r with its two-sided p-value (Pearson 1896; as ``scipy.stats.pearsonr``).

    Pairs where either value is not finite (e.g. an item without a model score) are left out;
    ``n`` counts the pairs used. Fewer than 3 pairs or a constant column give ``r = p = None``
    and a ``reason``; no bootstrap is run (``ci95 = None``). The p-value follows the module's
    rules for small n.
    """
    x, y = _finite_pairs(x, y)
    reason = undefined_reason(x, y)
    if reason is not None:
        return CorrelationResult(None, None, None, x.size, reason)
    x_unit, y_unit = _unit_centred(x), _unit_centred(y)
    r = _pearson_r_of(x_unit, y_unit)
    p, method = pearson_p(x_unit, y_unit, r)
    return CorrelationResult(r, p, None, x.size, p_method=method)


def spearman(x: np.ndarray, y: np.ndarray) -> CorrelationResult:
    """Spearman's rho with its two-sided p-value (Spearman 1904; as ``scipy.stats.spearmanr``).

    rho = Pearson's r of the mid-ranks (ties get their average rank, so the ``1 - 6 sum d^2 /
    (n (n^2 - 1))`` shortcut is *not* used); p from the t approximation with ``n - 2`` degrees
    of freedom, exact or absent for small n (see the module). Non-finite pairs are left out;
    fewer than 3 pairs or a constant column give ``None`` with a ``reason``.
    """
    x, y = _finite_pairs(x, y)
    reason = undefined_reason(x, y)
    if reason is not None:
        return CorrelationResult(None, None, None, x.size, reason)
    x_side, y_side = _rank_side(midranks(x)), _rank_side(midranks(y))
    rho = _rank_correlation_of(*x_side, *y_side)
    p, method = spearman_p(x_side[0], y_side[0], rho)
    return CorrelationResult(rho, p, None, x.size, p_method=method)


def prepare_column(values: np.ndarray, item_group: np.ndarray) -> PreparedColumn:
    """A finite column's parts of :func:`point_correlations`; ``item_group`` as
    :func:`group_by_value` gives it."""
    rank = _midranks_from_weights(np.bincount(item_group))[item_group]
    rank_centred, rank_variance = _rank_side(rank)
    return PreparedColumn(rank_centred, rank_variance, _unit_centred(values))


def point_correlations(x: PreparedColumn, y: PreparedColumn) -> BootstrapCorrelation:
    """:func:`spearman` and :func:`pearson` of two prepared, defined columns, without intervals.

    Bit-identical to those functions on the same finite pairs; preparing each column once
    saves the work when one column is correlated with many others.
    """
    n = x.unit.size
    rho = _rank_correlation_of(x.rank_centred, x.rank_variance, y.rank_centred, y.rank_variance)
    r = _pearson_r_of(x.unit, y.unit)
    rho_p, rho_method = spearman_p(x.rank_centred, y.rank_centred, rho)
    r_p, r_method = pearson_p(x.unit, y.unit, r)
    return BootstrapCorrelation(
        spearman=CorrelationResult(rho, rho_p, None, n, p_method=rho_method),
        pearson=CorrelationResult(r, r_p, None, n, p_method=r_method),
    )
