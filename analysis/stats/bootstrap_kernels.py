"""The vectorised kernels of the report's bootstrap (:mod:`analysis.stats.bootstrap`): the
Spearman and Pearson correlations of a chunk of resamples at once.

* :func:`shared_bootstrap_chunk` evaluates every source of one item set on the same
  resamples (exact integer rank sums; :class:`SharedItems` holds what it needs of the set).
* :func:`bootstrap_chunk` evaluates one (x, y) pair (:class:`PreparedPair`), for item sets
  too large for the shared kernel's packed int64 sums.

Pure numpy: the planning, the resample stream, the threads and the intervals are
:mod:`analysis.stats.bootstrap`'s; a kernel only turns a ``(b, n)`` matrix of drawn items
into ``b`` values of each statistic, independent of how the resamples are chunked.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np

from analysis.stats.correlation import group_by_value

__all__ = [
    "PreparedPair",
    "SharedItems",
    "SharedSource",
    "bootstrap_chunk",
    "prepare_pair",
    "shared_bootstrap_chunk",
]


class SharedSource(NamedTuple):
    """One x of a :class:`SharedItems`: where its items sit along ascending y."""

    x_along_y: np.ndarray  # (n,) position along ascending y of each item, items in ascending x
    z_row: int  # first of its rows in ``SharedItems.z``
    # Groups of equal x (None when all x differ, every item its own group):
    x_ends: np.ndarray | None  # (Gx,) end of each group along ``x_along_y``
    x_group_z: np.ndarray | None  # (Gx,) standardised x of each group
    x_group_zz: np.ndarray | None  # (Gx,) its square


class SharedItems(NamedTuple):
    """Everything the shared bootstrap kernel needs of one item set and its sources.

    The kernel keeps a resample's draw counts ``W`` (``b x n``) along ascending y (stable), so
    groups of equal y are contiguous.
    """

    n: int
    y_order: np.ndarray  # (n,) the items in ascending y: column j of W counts item y_order[j]
    y_ends: np.ndarray | None  # (Gy,) end of each group of equal y; None when all y differ
    y_group: np.ndarray | None  # (n,) group of each position along y (None when all differ)
    y_group_z: np.ndarray  # (Gy,) standardised y of each group
    y_group_zz: np.ndarray  # (Gy,) its square
    z: np.ndarray  # (K, n) along y, per source: x_z, x_z**2, x_z * y_z (only the last for tied x)
    sources: tuple[SharedSource, ...]


# --------------------------------------------------------------------------------------------
# The shared kernel: every source of one item set at once
# --------------------------------------------------------------------------------------------


def _rank_sum_of_squares(n: int, cubes: np.ndarray) -> np.ndarray:
    """``sum_g w_g R_g^2 - n (n + 1)^2`` of doubled mid-ranks ``R`` from ``sum_g w_g^3``.

    Ranks 1..n sum to ``n (n + 1)(2n + 1) / 6`` in squares; ties of ``w`` items at their mid-rank
    lose ``(w^3 - w) / 12`` of it, so ``sum_g w_g R_g^2 = (2n(n+1)(2n+1) - sum w^3 + n) / 3``.
    Integer arithmetic: equal to the float sums of :func:`bootstrap_chunk` while they are exact.
    """
    total = (2 * n * (n + 1) * (2 * n + 1) + n - cubes) // 3
    return (total - n * (n + 1) ** 2).astype(np.float64)


def _doubled_from_cumulative(cumulative: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``2 C - w + 1``: the doubled mid-rank of each group (see :func:`_doubled_midranks`)."""
    rank = cumulative * 2
    rank -= weight
    rank += 1
    return rank


def _cube_sums(weight: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij,ij->i", weight, weight, weight)


class _Buffers:
    """Flat arrays reused as ``b x n`` temporaries by one thread, grown when needed.

    Fresh arrays of that size cost a page fault per 4 KiB on every use, several times the
    arithmetic done on them.
    """

    def __init__(self) -> None:
        self._flat: dict[str, np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, int], dtype: type) -> np.ndarray:
        size = shape[0] * shape[1]
        flat = self._flat.get(name)
        if flat is None or flat.size < size:
            flat = self._flat[name] = np.empty(size, dtype=dtype)
        return flat[:size].reshape(shape)


def _thread_buffers(scratch: threading.local) -> _Buffers:
    buffers = getattr(scratch, "buffers", None)
    if buffers is None:
        buffers = scratch.buffers = _Buffers()
    return buffers


def shared_bootstrap_chunk(
    items: SharedItems, index: np.ndarray, scratch: threading.local
) -> tuple[np.ndarray, np.ndarray]:
    """Spearman and Pearson of ``b`` resamples for every source of ``items``: ``(S, b)`` each.

    The statistics of :func:`bootstrap_chunk`, with the work on the draws and on y done once
    for all sources. One ``np.bincount`` gives each resample's draw count ``W_j`` of every item
    (kept along ascending y); one cumulative sum gives the doubled mid-ranks of y (``R^y``, per
    group of equal y) and ``M_j = W_j R^y_j``. Per source one gather reads the packed
    ``Q = M << s | W`` in x order (``W <= n < 2**s``, so the low bits of ``Q`` and of its
    cumulative sums hold ``W`` and ``C = cumsum(W)``, the high bits ``M`` and ``cumsum(M)``).
    When all x differ ``R^x_j = 2 C_j - W_j + 1``, so the cross sum
    ``sum_j W_j R^x_j R^y_j = 2 sum_j C_j M_j - sum_j W_j M_j + n (n + 1)`` (the last two
    shared, ``sum C M`` read off ``sum C Q``); for tied x, ``cumsum(Q)`` at the group ends gives
    each group's weight and sum of ``M``. The sums of squares follow from ``sum w^3``
    (:func:`_rank_sum_of_squares`). All rank sums are int64, so Spearman equals
    :func:`bootstrap_chunk` exactly. Pearson uses the same raw-moment formula; its sums over
    ``W`` come from one ``einsum`` over all sources (group weights for tied x) and agree with
    :func:`bootstrap_chunk` to rounding (~1e-14). The ``b x n`` temporaries live in per-thread
    buffers (``scratch``).
    """
    b, n = index.shape
    buffers = _thread_buffers(scratch)
    slot = np.add(index, (np.arange(b) * n)[:, None], out=buffers.get("slot", (b, n), np.intp))
    weight = buffers.get("weight", (b, n), np.int64)
    counts = np.bincount(slot.ravel(), minlength=b * n).reshape(b, n)
    np.take(counts, items.y_order, axis=1, out=weight, mode="clip")
    del counts
    packed = np.cumsum(weight, axis=1, out=buffers.get("packed", (b, n), np.int64))
    if items.y_ends is None:
        y_weight = weight
        packed *= 2  # 2 C - W + 1: the doubled mid-rank of each item
        packed -= weight
        packed += 1
    else:
        y_cumulative = np.take(packed, items.y_ends - 1, axis=1)
        y_weight = np.diff(y_cumulative, axis=1, prepend=0)
        y_rank = _doubled_from_cumulative(y_cumulative, y_weight)
        np.take(y_rank, items.y_group, axis=1, out=packed, mode="clip")
    packed *= weight  # M
    # sum w^3 <= (sum w)^3 = n^3, with equality exactly when one group holds every draw: the
    # resample is usable when neither column is constant.
    item_cubes = _cube_sums(weight)
    y_cubes = item_cubes if items.y_ends is None else _cube_sums(y_weight)
    y_ss = _rank_sum_of_squares(n, y_cubes)
    y_usable = y_cubes < n**3
    centre = n * (n + 1) ** 2
    if any(source.x_ends is None for source in items.sources):
        item_ss = _rank_sum_of_squares(n, item_cubes)
        item_usable = item_cubes < n**3
        # sum_j W_j R^y_j = n (n + 1) (ranks of all draws), so the cross sum with
        # R^x = 2 C - W + 1 is 2 sum C M - sum W M + n (n + 1).
        shared_cross = n * (n + 1) - np.einsum("ij,ij->i", weight, packed)
    shift = n.bit_length()
    low = (1 << shift) - 1
    packed <<= shift
    packed |= weight
    # sum_j C_j Q_j = 2**s sum_j C_j M_j + sum_j C_j W_j, and when all x differ
    # sum_j C_j W_j = ((sum W)^2 + sum W^2) / 2 whatever the order: sum C M without unpacking
    # M, while sum C Q <= n sum Q fits int64.
    unpack = n * ((n * (n + 1) << shift) + n) >= 2**63
    if not unpack:
        self_pairs = (n * n + np.einsum("ij,ij->i", weight, weight)) // 2

    float_weight = buffers.get("float_weight", (b, n), np.float64)
    float_weight[...] = weight
    # Each (moment, resample) is a dot product over the items in a fixed order, so a resample's
    # value does not depend on the chunk it is in (BLAS would be faster, but its order depends
    # on the shapes and its threads spin on a busy machine).
    moments = np.einsum("ij,kj->ki", float_weight, items.z)

    n_sources = len(items.sources)
    rho = np.empty((n_sources, b))
    usable = np.empty((n_sources, b), dtype=bool)
    sum_x, sum_xx, sum_xy = np.empty((3, n_sources, b))
    x_packed = buffers.get("x_packed", (b, n), np.int64)
    x_cumulative = buffers.get("x_cumulative", (b, n), np.int64)
    for k, source in enumerate(items.sources):
        np.take(packed, source.x_along_y, axis=1, out=x_packed, mode="clip")
        if source.x_ends is None:
            np.bitwise_and(x_packed, low, out=x_cumulative)
            np.cumsum(x_cumulative, axis=1, out=x_cumulative)
            if unpack:
                x_packed >>= shift
                cm = np.einsum("ij,ij->i", x_cumulative, x_packed)
            else:
                cm = (np.einsum("ij,ij->i", x_cumulative, x_packed) - self_pairs) >> shift
            cross = 2 * cm + shared_cross
            x_ss = item_ss
            usable[k] = item_usable & y_usable
            sum_x[k], sum_xx[k], sum_xy[k] = moments[source.z_row : source.z_row + 3]
        else:
            np.cumsum(x_packed, axis=1, out=x_packed)
            at_ends = np.take(x_packed, source.x_ends - 1, axis=1)
            group_weight = np.diff(at_ends & low, axis=1, prepend=0)
            group_ranked = np.diff(at_ends >> shift, axis=1, prepend=0)
            group_rank = _doubled_from_cumulative(at_ends & low, group_weight)
            cross = np.einsum("ij,ij->i", group_rank, group_ranked)
            group_cubes = _cube_sums(group_weight)
            x_ss = _rank_sum_of_squares(n, group_cubes)
            usable[k] = (group_cubes < n**3) & y_usable
            float_group_weight = group_weight.astype(np.float64)
            sum_x[k] = np.einsum("ij,j->i", float_group_weight, source.x_group_z)
            sum_xx[k] = np.einsum("ij,j->i", float_group_weight, source.x_group_zz)
            sum_xy[k] = moments[source.z_row]
        xy_sp = (cross - centre).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            rho[k] = xy_sp / np.sqrt(x_ss * y_ss)

    float_y_weight = float_weight if items.y_ends is None else y_weight.astype(np.float64)
    sum_y = np.einsum("ij,j->i", float_y_weight, items.y_group_z)
    sum_yy = np.einsum("ij,j->i", float_y_weight, items.y_group_zz)
    return _resampled_results(rho, sum_x, sum_xx, sum_y, sum_yy, sum_xy, n, usable)


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
