"""The shared bootstrap kernel's loop, compiled (numba): every source of one item set on a
chunk of resamples, one pass over the draws and one over each source's items per resample.

The arithmetic is the one :func:`analysis.stats.bootstrap_kernels.shared_bootstrap_chunk`
documents (doubled mid-ranks from cumulative draw counts, integer rank sums, raw moments of
standardised values for Pearson); written as numpy array steps it made some thirty passes
over a ``b x n`` matrix per resample and source, here each count is read where it is needed.
Every rank sum is an int64 (exact while ``n < 2**20``, the shared kernel's limit), so
Spearman comes out bit for bit as before; the Pearson sums are float sums in a fixed order
per resample, independent of the chunk or the thread.

Compiled on first use (not on import: a web process that never bootstraps never loads
numba), cached on disk by numba next to this file or in the user's cache directory, and
run without the GIL, so the bootstrap's threads use every core.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["compiled_shared_kernel"]


def _shared_kernel(
    index,
    y_position,
    y_ends,
    y_group_z,
    y_group_zz,
    xy_z,
    x_along_y,
    x_groups,
    x_ends,
    x_group_z,
    x_group_zz,
    rho,
    sum_x,
    sum_xx,
    sum_xy,
    sum_y,
    sum_yy,
    usable,
):  # pragma: no cover - compiled; its results are tested through the caller
    """Fill ``rho``, ``usable`` and the Pearson sums (``(S, b)``; ``sum_y``/``sum_yy``:
    ``(b,)``) for the ``b`` resamples of ``index`` (items drawn, local numbering).

    Positions are along ascending y (stable); ``y_ends`` ends each group of equal y there,
    and ``xy_z[k, j]`` is source ``k``'s product of standardised x and y at position ``j``.
    Source ``k`` visits positions in ascending x: ``x_along_y[k, t]`` is the position of its
    ``t``-th item, ``x_ends[k, :x_groups[k]]`` ends its groups of equal x.
    """
    b, n = index.shape
    n_sources = x_along_y.shape[0]
    # per position along y: its draws W and W x the doubled mid-rank of y, side by side
    # (each source reads both of a position at once)
    drawn = np.zeros((n, 2), dtype=np.int64)
    all_in_one = n * n * n  # sum of w^3 when one group holds every draw
    # sum_g w_g R_g^2 = (2n(n+1)(2n+1) - sum w^3 + n) / 3 for doubled mid-ranks R, which
    # sum to n(n+1) over the draws: sum w (R - (n+1))^2 = that - n(n+1)^2.
    squares = 2 * n * (n + 1) * (2 * n + 1) + n
    centre = n * (n + 1) * (n + 1)
    lanes = n - n % 4
    for r in range(b):
        drawn[:, 0] = 0
        for d in range(n):
            drawn[y_position[index[r, d]], 0] += 1
        cumulative = 0
        y_cubes = 0
        total_y = 0.0
        total_yy = 0.0
        start = 0
        for g in range(y_ends.size):
            end = y_ends[g]
            group_weight = 0
            for j in range(start, end):
                group_weight += drawn[j, 0]
            cumulative += group_weight
            rank = 2 * cumulative - group_weight + 1
            for j in range(start, end):
                drawn[j, 1] = drawn[j, 0] * rank
            y_cubes += group_weight * group_weight * group_weight
            total_y += group_weight * y_group_z[g]
            total_yy += group_weight * y_group_zz[g]
            start = end
        sum_y[r] = total_y
        sum_yy[r] = total_yy
        y_ss = float((squares - y_cubes) // 3 - centre)
        for k in range(n_sources):
            # sum W xy along y in four interleaved sums (a fixed order: the same value
            # whatever the chunk or thread; one running sum would wait on each addition)
            lane_0 = lane_1 = lane_2 = lane_3 = 0.0
            for j in range(0, lanes, 4):
                lane_0 += drawn[j, 0] * xy_z[k, j]
                lane_1 += drawn[j + 1, 0] * xy_z[k, j + 1]
                lane_2 += drawn[j + 2, 0] * xy_z[k, j + 2]
                lane_3 += drawn[j + 3, 0] * xy_z[k, j + 3]
            for j in range(lanes, n):
                lane_0 += drawn[j, 0] * xy_z[k, j]
            sum_xy[k, r] = (lane_0 + lane_1) + (lane_2 + lane_3)
            cumulative = 0
            cross = 0
            x_cubes = 0
            total_x = 0.0
            total_xx = 0.0
            if x_groups[k] == n:  # all x differ: each item its own group
                for t in range(n):
                    j = x_along_y[k, t]
                    weight = drawn[j, 0]
                    cumulative += weight
                    cross += (2 * cumulative - weight + 1) * drawn[j, 1]
                    x_cubes += weight * weight * weight
                    total_x += weight * x_group_z[k, t]
                    total_xx += weight * x_group_zz[k, t]
            else:
                start = 0
                for g in range(x_groups[k]):
                    end = x_ends[k, g]
                    group_weight = 0
                    group_ranked = 0
                    for t in range(start, end):
                        j = x_along_y[k, t]
                        group_weight += drawn[j, 0]
                        group_ranked += drawn[j, 1]
                    cumulative += group_weight
                    cross += (2 * cumulative - group_weight + 1) * group_ranked
                    x_cubes += group_weight * group_weight * group_weight
                    total_x += group_weight * x_group_z[k, g]
                    total_xx += group_weight * x_group_zz[k, g]
                    start = end
            x_ss = float((squares - x_cubes) // 3 - centre)
            rho[k, r] = float(cross - centre) / np.sqrt(x_ss * y_ss)
            usable[k, r] = x_cubes < all_in_one and y_cubes < all_in_one
            sum_x[k, r] = total_x
            sum_xx[k, r] = total_xx


@functools.cache
def compiled_shared_kernel():
    """:func:`_shared_kernel` compiled without the GIL (numpy's error model: a zero variance
    gives NaN or infinity, as the array version did, not an exception)."""
    import numba

    return numba.njit(nogil=True, cache=True, error_model="numpy")(_shared_kernel)
