"""Spearman's rho of many groups of pairs at once (e.g. each annotator against the crowd).

:func:`grouped_spearman` gives, for every group, the :class:`CorrelationResult` that
:func:`~analysis.stats.correlation.spearman` gives for that group's pairs, from one sort of
all the pairs instead of a sort and a handful of numpy calls per group: a batch has
thousands of annotators with a few hundred labels each, where the per-call overhead, not
the arithmetic, is the cost.

The results equal the per-group ones bit for bit as long as the sums below are exact:
mid-ranks are multiples of 1/2, their products multiples of 1/4, so the per-group sums are
exact in float64 in any order up to groups of about 300,000 pairs (beyond, they agree to
rounding).

:func:`order_within_groups`, the sort underneath, serves any per-group order statistic
(e.g. each annotator's median time).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from analysis.stats.correlation import (
    _MIN_CORRELATION_ITEMS,
    EXACT_P_MAX_PAIRS,
    MIN_P_VALUE_PAIRS,
    CorrelationResult,
    exact_pairing_p,
)

__all__ = ["grouped_midranks", "grouped_spearman", "order_within_groups"]


def _group_sort_keys(group: np.ndarray, n_groups: int) -> np.ndarray:
    """``group`` in the narrowest integer type that holds it: numpy's stable sort of 16-bit
    integers is a radix sort, several times faster than its merge sort of 64-bit ones."""
    if n_groups <= np.iinfo(np.uint16).max + 1:
        return group.astype(np.uint16)
    return group


def order_within_groups(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """The order that sorts the items by group, and within a group by value (NaN last).

    Equal values of a group come in no particular order. One sort by value, then a stable
    sort by the small integer group keys: about twice as fast as ``np.lexsort`` of the two.
    """
    order = np.argsort(values)
    return order[np.argsort(_group_sort_keys(group, n_groups)[order], kind="stable")]


def grouped_midranks(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Mid-ranks of ``values`` within each group (``group`` in ``0 .. n_groups - 1``).

    Each item's rank among the values of its own group, ties given their average rank, as
    :func:`~analysis.stats.correlation.midranks` gives them for the group alone. With every
    group's values in ascending order (:func:`order_within_groups`), a run of equal values
    within a group spanning sorted positions ``s .. e - 1`` of a group that starts at ``b``
    has the mid-rank ``e - b - (e - s - 1) / 2``; the order of equal values does not matter.
    """
    n = values.size
    order = order_within_groups(values, group, n_groups)
    ordered_values, ordered_group = values[order], group[order]
    starts_run = np.empty(n, dtype=bool)
    starts_run[:1] = True
    np.not_equal(ordered_values[1:], ordered_values[:-1], out=starts_run[1:])
    starts_run[1:] |= ordered_group[1:] != ordered_group[:-1]
    run = np.cumsum(starts_run) - 1
    run_size = np.bincount(run)
    run_end = np.cumsum(run_size)
    group_size = np.bincount(group, minlength=n_groups)
    group_start = np.cumsum(group_size) - group_size
    run_rank = run_end - group_start[ordered_group[starts_run]] - (run_size - 1) / 2
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = run_rank[run]
    return ranks


def _grouped_rank_sides(
    rank: np.ndarray, group: np.ndarray, size: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per item its rank minus its group's mean rank, and per group the sample variance of
    its ranks, each as ``_rank_side`` computes them for one group (sum / n; Σ c² · 1/(n-1))."""
    n_groups = size.size
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.bincount(group, weights=rank, minlength=n_groups) / size
        centred = rank - mean[group]
        variance = np.bincount(group, weights=centred * centred, minlength=n_groups) * (
            1.0 / (size - 1)
        )
    return centred, variance


def _t_approximation_p(rho: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Two-sided p of each rho by the t approximation, as ``correlation._spearman_p`` gives
    it for one: ``t = rho sqrt((n - 2) / ((1 + rho)(1 - rho)))``, ``n - 2`` degrees of
    freedom."""
    dof = n - 2
    with np.errstate(divide="ignore"):
        t = rho * np.sqrt(np.clip(dof / ((rho + 1.0) * (1.0 - rho)), 0.0, None))
    return np.minimum(1.0, 2 * special.stdtr(dof, -np.abs(t)))


def _undefined_reason(n: int, x_constant: bool, y_constant: bool) -> str | None:
    """``correlation.undefined_reason`` for a group of ``n`` pairs."""
    if n < _MIN_CORRELATION_ITEMS:
        return f"fewer than 3 items (n={n})"
    if x_constant:
        return f"x is constant (all {n} values equal)"
    if y_constant:
        return f"y is constant (all {n} values equal)"
    return None


def grouped_spearman(
    x: np.ndarray, y: np.ndarray, group: np.ndarray, n_groups: int
) -> list[CorrelationResult]:
    """Per group ``g`` in ``0 .. n_groups - 1``: ``spearman(x[group == g], y[group == g])``.

    Same rho, p, ``p_method``, ``n`` and undefined ``reason`` as
    :func:`~analysis.stats.correlation.spearman` (non-finite pairs are left out as there).
    The t-approximation p-values are computed for all groups at once; the exact p-values of
    groups of :data:`MIN_P_VALUE_PAIRS` to :data:`EXACT_P_MAX_PAIRS` pairs use
    :func:`~analysis.stats.correlation.exact_pairing_p` per group, on the same centred
    ranks.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    group = np.asarray(group, dtype=np.int64).ravel()
    if not (x.shape == y.shape == group.shape):
        raise ValueError("x, y and group must have the same length")
    finite = np.isfinite(x) & np.isfinite(y)
    if not finite.all():
        x, y, group = x[finite], y[finite], group[finite]
    size = np.bincount(group, minlength=n_groups)
    rank_x = grouped_midranks(x, group, n_groups)
    rank_y = grouped_midranks(y, group, n_groups)
    x_centred, c_xx = _grouped_rank_sides(rank_x, group, size)
    y_centred, c_yy = _grouped_rank_sides(rank_y, group, size)
    with np.errstate(divide="ignore", invalid="ignore"):
        c_xy = np.bincount(group, weights=x_centred * y_centred, minlength=n_groups) * (
            1.0 / (size - 1)
        )
        rho = np.clip(c_xy / np.sqrt(c_yy) / np.sqrt(c_xx), -1.0, 1.0)
        t_p = _t_approximation_p(rho, size)
    # A column is constant exactly when its mid-ranks are all equal: zero rank variance.
    x_constant, y_constant = (c_xx == 0).tolist(), (c_yy == 0).tolist()
    members = None  # each group's pairs in input order, for the exact p-values
    results = []
    for g, (n, r, p) in enumerate(zip(size.tolist(), rho.tolist(), t_p.tolist(), strict=True)):
        reason = _undefined_reason(n, x_constant[g], y_constant[g])
        if reason is not None:
            results.append(CorrelationResult(None, None, None, n, reason))
        elif n < MIN_P_VALUE_PAIRS:
            results.append(CorrelationResult(r, None, None, n))
        elif n <= EXACT_P_MAX_PAIRS:
            if members is None:
                members = _group_members(group, size)
            mine = members[g]
            exact = exact_pairing_p(x_centred[mine], y_centred[mine])
            results.append(CorrelationResult(r, exact, None, n, p_method="exact"))
        else:
            results.append(CorrelationResult(r, p, None, n, p_method="t"))
    return results


def _group_members(group: np.ndarray, size: np.ndarray) -> list[np.ndarray]:
    """Each group's positions in ``group``, ascending."""
    order = np.argsort(group, kind="stable")
    return np.split(order, np.cumsum(size)[:-1])
