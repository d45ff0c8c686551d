"""The kernels of the report's bootstrap (:mod:`analysis.stats.bootstrap`): the Spearman
and Pearson correlations of a chunk of resamples at once.

* :func:`shared_bootstrap_chunk` evaluates every source of one item set on the same
  resamples (exact integer rank sums; :class:`SharedItems` holds what it needs of the set),
  by a compiled loop (:mod:`analysis.stats.bootstrap_compiled`).
* :func:`bootstrap_chunk` evaluates one (x, y) pair (:class:`PreparedPair`) in numpy, for
  item sets too large for the shared kernel's int64 sums.

The planning, the resample stream, the threads and the intervals are
:mod:`analysis.stats.bootstrap`'s; a kernel only turns a ``(b, n)`` matrix of drawn items
into ``b`` values of each statistic, independent of how the resamples are chunked.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from analysis.stats.bootstrap_compiled import compiled_shared_kernel
from analysis.stats.correlation import group_by_value

__all__ = [
    "PreparedPair",
    "SharedItems",
    "bootstrap_chunk",
    "prepare_pair",
    "shared_bootstrap_chunk",
]


class SharedItems(NamedTuple):
    """Everything the shared bootstrap kernel needs of one item set and its ``S`` sources.

    Positions run along ascending y (stable), so groups of equal y are contiguous; each
    source visits them in ascending x. Items whose x all differ are groups of one.
    """

    n: int
    y_position: np.ndarray  # (n,) position along y of each item (local numbering)
    y_ends: np.ndarray  # (Gy,) end of each group of equal y along y
    y_group_z: np.ndarray  # (Gy,) standardised y of each group
    y_group_zz: np.ndarray  # (Gy,) its square
    xy_z: np.ndarray  # (S, n) standardised x times standardised y, along y
    x_along_y: np.ndarray  # (S, n) position along y of each item, items in ascending x
    x_groups: np.ndarray  # (S,) groups of equal x of each source
    x_ends: np.ndarray  # (S, n) end of each group along ``x_along_y`` (first x_groups[k])
    x_group_z: np.ndarray  # (S, n) standardised x of each group (first x_groups[k])
    x_group_zz: np.ndarray  # (S, n) its square


# --------------------------------------------------------------------------------------------
# The shared kernel: every source of one item set at once
# --------------------------------------------------------------------------------------------


def shared_bootstrap_chunk(items: SharedItems, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman and Pearson of ``b`` resamples for every source of ``items``: ``(S, b)`` each.

    The statistics of :func:`bootstrap_chunk`, with the work on the draws and on y done once
    for all sources. Per resample, the draw count ``W_j`` of every position along y, then per
    group of equal y its weight ``w_g``, its doubled mid-rank ``R^y_g = 2 C_g - w_g + 1``
    (``C`` = cumulative weight) and ``M_j = W_j R^y_j``; per source, walking its items in
    ascending x, each group's weight and sum of ``M`` give its doubled mid-rank ``R^x`` and
    the cross sum ``sum_g R^x_g sum_{j in g} M_j = sum_j W_j R^x_j R^y_j``. The sums of
    squares follow from ``sum w^3`` (ties of ``w`` draws at their mid-rank lose
    ``(w^3 - w) / 12``): ``sum_g w_g R_g^2 = (2n(n+1)(2n+1) - sum w^3 + n) / 3``. All rank sums
    are int64, so Spearman equals :func:`bootstrap_chunk` exactly. Pearson uses the same
    raw-moment formula on the standardised values and agrees with it to rounding (~1e-14).
    The loop is compiled (:mod:`analysis.stats.bootstrap_compiled`).
    """
    b = index.shape[0]
    n_sources = items.x_along_y.shape[0]
    rho, sum_x, sum_xx, sum_xy = np.empty((4, n_sources, b))
    sum_y, sum_yy = np.empty((2, b))
    usable = np.empty((n_sources, b), dtype=bool)
    compiled_shared_kernel()(
        np.ascontiguousarray(index, dtype=np.int64),
        items.y_position,
        items.y_ends,
        items.y_group_z,
        items.y_group_zz,
        items.xy_z,
        items.x_along_y,
        items.x_groups,
        items.x_ends,
        items.x_group_z,
        items.x_group_zz,
        rho,
        sum_x,
        sum_xx,
        sum_xy,
        sum_y,
        sum_yy,
        usable,
    )
    return _resampled_results(rho, sum_x, sum_xx, sum_y, sum_yy, sum_xy, items.n, usable)


def _resampled_results(
    rho: np.ndarray,
    sum_x: np.ndarray,
    sum_xx: np.ndarray,
    sum_y: np.ndarray,
    sum_yy: np.ndarray,
    sum_xy: np.ndarray,
    n: int,
    usable: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Pearson r from the resamples' raw moment sums; both statistics clipped to [-1, 1],
    NaN for resamples in which a column came out constant.

    ``r = (S_xy/n - S_x S_y/n^2) / sqrt((S_xx/n - (S_x/n)^2) (S_yy/n - (S_y/n)^2))``.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sum_xy / n - (sum_x / n) * (sum_y / n)
        x_var = sum_xx / n - (sum_x / n) ** 2
        y_var = sum_yy / n - (sum_y / n) ** 2
        r = cov / np.sqrt(x_var * y_var)
    rho = np.where(usable, np.clip(rho, -1.0, 1.0), np.nan)
    r = np.where(usable, np.clip(r, -1.0, 1.0), np.nan)
    return rho, r


# --------------------------------------------------------------------------------------------
# One source at a time: item sets too large for the shared kernel
# --------------------------------------------------------------------------------------------


class PreparedPair(NamedTuple):
    """What the vectorised bootstrap needs of one (x, y), computed once."""

    x_group: np.ndarray  # (n,) group id of each item by equal x, ascending
    y_group: np.ndarray
    x_group_z: np.ndarray  # (Gx,) standardised x of each group
    y_group_z: np.ndarray
    xy_z: np.ndarray  # (n,) product of the standardised values


def prepare_pair(
    x: np.ndarray,
    y: np.ndarray,
    x_order: np.ndarray | None = None,
    y_order: np.ndarray | None = None,
) -> PreparedPair:
    x_group, x_values, _ = group_by_value(x, x_order)
    y_group, y_values, _ = group_by_value(y, y_order)
    # Standardising keeps the raw-moment sums below well conditioned.
    x_mean, x_std = x.mean(), x.std()
    y_mean, y_std = y.mean(), y.std()
    x_z = (x - x_mean) / x_std
    y_z = (y - y_mean) / y_std
    return PreparedPair(
        x_group=x_group,
        y_group=y_group,
        x_group_z=(x_values - x_mean) / x_std,
        y_group_z=(y_values - y_mean) / y_std,
        xy_z=x_z * y_z,
    )


def _doubled_midranks(group_weights: np.ndarray) -> np.ndarray:
    """Twice the mid-rank of each value group, ``2 C_g - w_g + 1`` (odd integers)."""
    doubled = np.cumsum(group_weights, axis=-1)
    doubled *= 2
    doubled -= group_weights
    doubled += 1
    return doubled


def bootstrap_chunk(prepared: PreparedPair, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman and Pearson of ``b`` resamples at once; ``NaN`` where a column is constant.

    Each row of ``index`` (``b x n``) lists the items drawn. For each resample and each group
    of equal x values the draw count ``w_g`` comes from one ``np.bincount``; the mid-rank of
    group ``g`` is then ``C_g - (w_g - 1)/2`` (``C`` = cumulative weight), so x and y are sorted
    once, not once per resample. Ranks are kept doubled (``2 C_g - w_g + 1``, odd integers with
    mean ``n + 1``): every rank sum below is then a sum of integers under 2**53, exact in
    float64 for n up to ~10^5, and Spearman is the weighted Pearson correlation of the ranks.
    Pearson uses raw moments of the standardised values: group sums per resample, the cross
    term by one gather. Per-row sums do not depend on how many rows a chunk has, so results
    are identical however the resamples are split into chunks or threads.
    """
    b, n = index.shape
    n_x_groups = prepared.x_group_z.size
    n_y_groups = prepared.y_group_z.size
    x_flat = np.take(prepared.x_group, index)
    x_flat += (np.arange(b, dtype=np.int64) * n_x_groups)[:, None]
    y_flat = np.take(prepared.y_group, index)
    y_flat += (np.arange(b, dtype=np.int64) * n_y_groups)[:, None]
    x_count = np.bincount(x_flat.ravel(), minlength=b * n_x_groups).reshape(b, n_x_groups)
    y_count = np.bincount(y_flat.ravel(), minlength=b * n_y_groups).reshape(b, n_y_groups)
    usable = (x_count.max(axis=1) < n) & (y_count.max(axis=1) < n)
    x_weight = x_count.astype(np.float64)
    y_weight = y_count.astype(np.float64)

    x_rank = _doubled_midranks(x_weight)
    y_rank = _doubled_midranks(y_weight)
    # sum_i w_i R_i = n (n + 1), hence sum w (R - (n + 1))^2 = sum w R^2 - n (n + 1)^2.
    centre = float(n * (n + 1) ** 2)
    x_ss = np.einsum("ij,ij,ij->i", x_weight, x_rank, x_rank) - centre
    y_ss = np.einsum("ij,ij,ij->i", y_weight, y_rank, y_rank) - centre
    cross = np.take(x_rank, x_flat)
    cross *= np.take(y_rank, y_flat)
    xy_sp = cross.sum(axis=1) - centre
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = xy_sp / np.sqrt(x_ss * y_ss)

    sum_x = np.einsum("ij,j->i", x_weight, prepared.x_group_z)
    sum_xx = np.einsum("ij,j->i", x_weight, prepared.x_group_z**2)
    sum_y = np.einsum("ij,j->i", y_weight, prepared.y_group_z)
    sum_yy = np.einsum("ij,j->i", y_weight, prepared.y_group_z**2)
    sum_xy = np.take(prepared.xy_z, index).sum(axis=1)
    return _resampled_results(rho, sum_x, sum_xx, sum_y, sum_yy, sum_xy, n, usable)
