"""Spearman and Pearson correlations with p-values, as ``scipy.stats`` computes them.

:func:`pearson` and :func:`spearman` give one correlation of two columns; the result types
(:class:`CorrelationResult`, :class:`BootstrapCorrelation`) are shared with
:mod:`analysis.stats.bootstrap`, which adds the bootstrap intervals. An undefined correlation
(fewer than 3 pairs, or a constant column) is ``None`` with a reason, never ``NaN``.

The names below that are public but not in ``__all__`` (:func:`undefined_reason`,
:func:`group_by_value`, :func:`prepare_column`, :func:`point_correlations`) are the pieces
the bootstrap reuses so that its point estimates are bit-identical to these functions.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import special

__all__ = [
    "BootstrapCorrelation",
    "CorrelationResult",
    "midranks",
    "pearson",
    "spearman",
]

_MIN_CORRELATION_ITEMS = 3


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


def _pearson_r(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r as scipy.stats.pearsonr computes it (centred, norm-scaled dot product)."""
    return _pearson_r_of(_unit_centred(x), _unit_centred(y))


def _unit_centred(values: np.ndarray) -> np.ndarray:
    """One column's part of :func:`_pearson_r`: centred, max-scaled, unit-norm."""
    centred = values - values.mean()
    centred = centred / np.abs(centred).max()
    return centred / np.linalg.norm(centred)


def _pearson_r_of(x_unit: np.ndarray, y_unit: np.ndarray) -> float:
    return float(np.clip(np.dot(x_unit, y_unit), -1.0, 1.0))


def _rank_correlation(rank_x: np.ndarray, rank_y: np.ndarray) -> float:
    """Correlation of two rank vectors as ``np.corrcoef`` computes it (scipy.stats.spearmanr).

    ``c = X_c X_c^T / (n - 1)``, ``r = c_xy / sd_y / sd_x``; mirroring the operation order makes
    a perfect rank correlation exactly 1, as scipy reports it.
    """
    return _rank_correlation_of(*_rank_side(rank_x), *_rank_side(rank_y))


def _rank_side(rank: np.ndarray) -> tuple[np.ndarray, float]:
    """One rank vector's part of :func:`_rank_correlation`: centred ranks and their variance."""
    centred = rank - rank.mean()
    return centred, np.dot(centred, centred) * (1.0 / (rank.size - 1))


def _rank_correlation_of(
    x_centred: np.ndarray, c_xx: float, y_centred: np.ndarray, c_yy: float
) -> float:
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
    and a ``reason``; no bootstrap is run (``ci95 = None``).
    """
    x, y = _finite_pairs(x, y)
    reason = undefined_reason(x, y)
    if reason is not None:
        return CorrelationResult(None, None, None, x.size, reason)
    r = _pearson_r(x, y)
    return CorrelationResult(r, _pearson_p(r, x.size), None, x.size)


def spearman(x: np.ndarray, y: np.ndarray) -> CorrelationResult:
    """Spearman's rho with its two-sided p-value (Spearman 1904; as ``scipy.stats.spearmanr``).

    rho = Pearson's r of the mid-ranks (ties get their average rank, so the ``1 - 6 sum d^2 /
    (n (n^2 - 1))`` shortcut is *not* used); p from the t approximation with ``n - 2`` degrees
    of freedom. Non-finite pairs are left out; fewer than 3 pairs or a constant column give
    ``None`` with a ``reason``.
    """
    x, y = _finite_pairs(x, y)
    reason = undefined_reason(x, y)
    if reason is not None:
        return CorrelationResult(None, None, None, x.size, reason)
    rho = _rank_correlation(midranks(x), midranks(y))
    return CorrelationResult(rho, _spearman_p(rho, x.size), None, x.size)


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
    return BootstrapCorrelation(
        spearman=CorrelationResult(rho, _spearman_p(rho, n), None, n),
        pearson=CorrelationResult(r, _pearson_p(r, n), None, n),
    )
