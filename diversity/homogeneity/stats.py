"""Summary statistics over queries: histograms, shares, bootstrap intervals, model order.

Pure functions of numpy arrays; NaN marks a value that is undefined (no data), and every
function here says what it does with NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.cluster.hierarchy import leaves_list, linkage, optimal_leaf_ordering
from scipy.spatial.distance import squareform

from analysis.stats.resampling import level_percentiles, percentile_bounds, resample_counts

__all__ = [
    "HISTOGRAM_BINS",
    "CurveInterval",
    "ModelPair",
    "bootstrap_curve",
    "clustering_order",
    "mean_or_nan",
    "ranked_pairs",
    "repetition_histogram",
    "share_above",
]

HISTOGRAM_BINS = 10


def _finite(values) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64).ravel()
    return values[~np.isnan(values)]


def mean_or_nan(values) -> float:
    """Arithmetic mean of the non-NaN values; NaN when there are none."""
    values = _finite(values)
    return float(values.mean()) if values.size else float("nan")


def repetition_histogram(values, bins: int = HISTOGRAM_BINS) -> np.ndarray:
    """Share of values in each of ``bins`` equal bins on [0, 1].

    Bin b (0-based) holds ``b / bins <= v < (b + 1) / bins``; the last bin also holds 1.0.
    Values below 0 (cosine similarity can be negative) count in the first bin and values
    above 1 (rounding) in the last. NaN values are ignored; with no value at all every
    share is NaN. The shares sum to 1.
    """
    values = _finite(values)
    if not values.size:
        return np.full(bins, np.nan)
    which = np.clip(np.floor(values * bins), 0, bins - 1).astype(np.int64)
    return np.bincount(which, minlength=bins) / values.size


def share_above(values, threshold: float) -> float:
    """Share of the non-NaN values strictly greater than ``threshold`` (NaN if none)."""
    values = _finite(values)
    return float((values > threshold).mean()) if values.size else float("nan")


@dataclass(frozen=True)
class CurveInterval:
    """A curve averaged over queries with a percentile bootstrap interval per point.

    ``mean[j]``: mean over the queries where point j is defined; ``queries[j]``: how many;
    ``low[j]``, ``high[j]``: the interval bounds (NaN where undefined).
    """

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    queries: np.ndarray
    draws: int
    level: float
    seed: int


def bootstrap_curve(
    curves: np.ndarray, draws: int = 1000, level: float = 0.95, seed: int = 0
) -> CurveInterval:
    """Mean of per-query curves and a percentile bootstrap interval over queries.

    ``curves`` is Q x P (one row per query, NaN where the point is undefined for that
    query). The point estimate is ``mean_q C[q, j]`` over the queries defined at j. Each
    of ``draws`` replicates resamples Q queries with replacement (numpy ``default_rng(seed)``)
    and recomputes that mean, so with weights w_q = times query q was drawn
    ``M*[j] = sum_q w_q C[q, j] / sum_q w_q D[q, j]`` (D = 1 where defined). The interval is
    the ``(1 - level) / 2`` and ``(1 + level) / 2`` percentiles of M* (linear
    interpolation); replicates that drew no query defined at j are left out for j.
    The same resamples serve every point, so the interval of each point is that of a
    resampling of whole queries.
    """
    curves = np.asarray(curves, dtype=np.float64)
    n_queries, n_points = curves.shape
    defined = ~np.isnan(curves)
    counts = defined.sum(axis=0)
    values = np.where(defined, curves, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = values.sum(axis=0) / counts
    low = np.full(n_points, np.nan)
    high = np.full(n_points, np.nan)
    if n_queries and draws > 0:
        weights = resample_counts(n_queries, draws, seed).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            replicates = (weights @ values) / (weights @ defined.astype(np.float64))
        reached = ~np.all(np.isnan(replicates), axis=0)
        if reached.any():
            bounds = percentile_bounds(
                replicates[:, reached], level_percentiles(level), skip_nan=True
            )
            low[reached], high[reached] = bounds
    return CurveInterval(mean, low, high, counts, draws, level, seed)


def clustering_order(similarity: np.ndarray) -> np.ndarray:
    """Order of models that puts similar models next to each other.

    Average-linkage hierarchical clustering (UPGMA) on the distance ``1 - similarity``
    between distinct models (the matrix is symmetrised and its diagonal ignored), with the
    leaves put in optimal order (scipy ``optimal_leaf_ordering``); returns positions into
    the matrix. A pair that never answered a common query (NaN) is given the largest
    distance seen among the others (1 if none is defined).
    """
    similarity = np.asarray(similarity, dtype=np.float64)
    k = similarity.shape[0]
    if k <= 2:
        return np.arange(k)
    distance = 1.0 - (similarity + similarity.T) / 2.0
    off_diagonal = ~np.eye(k, dtype=bool)
    known = distance[off_diagonal & ~np.isnan(distance)]
    distance = np.where(np.isnan(distance), known.max() if known.size else 1.0, distance)
    distance = np.clip(distance, 0.0, None)
    np.fill_diagonal(distance, 0.0)
    condensed = squareform(distance, checks=False)
    tree = optimal_leaf_ordering(linkage(condensed, method="average"), condensed)
    return leaves_list(tree)


@dataclass(frozen=True)
class ModelPair:
    """Two models (positions into the matrix, first < second), their mean similarity and
    the number of queries both answered."""

    first: int
    second: int
    similarity: float
    queries: int


def ranked_pairs(
    similarity: np.ndarray, queries: np.ndarray, how_many: int, most_similar: bool = True
) -> list[ModelPair]:
    """The ``how_many`` most (or least) similar pairs of distinct models.

    Pairs with an undefined similarity (NaN) are skipped; equal similarities are ranked by
    position (first, then second) so the result does not depend on sort stability.
    """
    first, second = np.triu_indices(similarity.shape[0], k=1)
    values = similarity[first, second]
    keep = ~np.isnan(values)
    first, second, values = first[keep], second[keep], values[keep]
    key = -values if most_similar else values
    order = np.lexsort((second, first, key))[:how_many]
    return [
        ModelPair(
            int(first[i]), int(second[i]), float(values[i]), int(queries[first[i], second[i]])
        )
        for i in order
    ]
