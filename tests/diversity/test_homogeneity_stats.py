"""Summary statistics: histogram bins, shares, the bootstrap over queries, model order."""

import numpy as np
import pytest

from diversity.homogeneity.stats import (
    bootstrap_curve,
    clustering_order,
    mean_or_nan,
    ranked_pairs,
    repetition_histogram,
    share_above,
)


def test_histogram_bins_and_clipping():
    shares = repetition_histogram([-0.3, 0.0, 0.05, 0.1, 0.55, 0.99, 1.0, 1.0000001, np.nan])
    # -0.3, 0.0, 0.05 -> bin 0; 0.1 -> bin 1; 0.55 -> bin 5; 0.99, 1.0, 1.0000001 -> bin 9
    np.testing.assert_allclose(shares, np.array([3, 1, 0, 0, 0, 1, 0, 0, 0, 3]) / 8)
    assert shares.sum() == pytest.approx(1.0)


def test_histogram_of_nothing_is_undefined():
    assert np.isnan(repetition_histogram([])).all()
    assert np.isnan(repetition_histogram([np.nan])).all()


def test_share_above_is_strict_and_ignores_nan():
    assert share_above([0.8, 0.81, 0.95, np.nan], 0.8) == pytest.approx(2 / 3)
    assert share_above([0.8, 0.81, 0.95], 0.9) == pytest.approx(1 / 3)
    assert np.isnan(share_above([], 0.8))
    assert mean_or_nan([1.0, np.nan, 3.0]) == 2.0 and np.isnan(mean_or_nan([np.nan]))


def loop_bootstrap(curves, draws, level, seed):
    """Reference: draw the same indices as the production path, loop per replicate."""
    n_queries, n_points = curves.shape
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n_queries, size=(draws, n_queries))
    replicates = np.full((draws, n_points), np.nan)
    for b in range(draws):
        sample = curves[picks[b]]
        for j in range(n_points):
            column = sample[:, j][~np.isnan(sample[:, j])]
            if column.size:
                replicates[b, j] = column.mean()
    tail = (1 - level) / 2
    low = [np.percentile(c[~np.isnan(c)], 100 * tail) for c in replicates.T]
    high = [np.percentile(c[~np.isnan(c)], 100 * (1 - tail)) for c in replicates.T]
    return np.array(low), np.array(high)


def test_bootstrap_matches_loop_reference_with_undefined_points():
    rng = np.random.default_rng(1)
    curves = rng.uniform(1, 5, size=(30, 4))
    curves[rng.uniform(size=curves.shape) < 0.2] = np.nan
    curves[:, 3] = np.nan
    curves[0, 3] = 4.0  # the last point is defined for one query only
    result = bootstrap_curve(curves, draws=200, level=0.9, seed=7)
    want_low, want_high = loop_bootstrap(curves, 200, 0.9, 7)
    np.testing.assert_allclose(result.low, want_low, atol=1e-12)
    np.testing.assert_allclose(result.high, want_high, atol=1e-12)
    np.testing.assert_allclose(result.mean[:3], np.nanmean(curves[:, :3], axis=0))
    np.testing.assert_array_equal(result.queries, (~np.isnan(curves)).sum(axis=0))
    assert result.mean[3] == 4.0


def test_bootstrap_is_seeded_and_brackets_the_mean():
    curves = np.random.default_rng(2).normal(size=(50, 3))
    first, second = bootstrap_curve(curves, seed=3), bootstrap_curve(curves, seed=3)
    np.testing.assert_array_equal(first.low, second.low)
    assert np.all(first.low <= first.mean) and np.all(first.mean <= first.high)
    assert not np.array_equal(bootstrap_curve(curves, seed=4).low, first.low)


def test_bootstrap_of_no_query_is_undefined():
    result = bootstrap_curve(np.zeros((0, 3)))
    assert np.isnan(result.mean).all() and np.isnan(result.low).all()
    assert result.queries.tolist() == [0, 0, 0]


def test_clustering_puts_similar_models_together():
    # models 0 and 2 alike, 1 and 3 alike
    similarity = np.array(
        [
            [1.0, 0.1, 0.9, 0.2],
            [0.1, 1.0, 0.15, 0.8],
            [0.9, 0.15, 1.0, 0.1],
            [0.2, 0.8, 0.1, 1.0],
        ]
    )
    order = clustering_order(similarity).tolist()
    assert sorted(order) == [0, 1, 2, 3]
    assert abs(order.index(0) - order.index(2)) == 1
    assert abs(order.index(1) - order.index(3)) == 1


def test_clustering_tolerates_unknown_pairs_and_tiny_inputs():
    similarity = np.array([[1.0, np.nan, 0.5], [np.nan, 1.0, 0.2], [0.5, 0.2, np.nan]])
    assert sorted(clustering_order(similarity).tolist()) == [0, 1, 2]
    assert clustering_order(np.ones((1, 1))).tolist() == [0]
    assert clustering_order(np.ones((2, 2))).tolist() == [0, 1]


def test_ranked_pairs_skip_unknown_and_break_ties_by_position():
    similarity = np.array(
        [[1.0, 0.5, 0.5, 0.2], [0.5, 1, np.nan, 0.9], [0.5, np.nan, 1, 0.5], [0.2, 0.9, 0.5, 1]]
    )
    queries = np.full((4, 4), 7)
    most = ranked_pairs(similarity, queries, 3, most_similar=True)
    assert [(p.first, p.second, p.similarity) for p in most] == [
        (1, 3, 0.9),
        (0, 1, 0.5),
        (0, 2, 0.5),
    ]
    least = ranked_pairs(similarity, queries, 2, most_similar=False)
    assert [(p.first, p.second) for p in least] == [(0, 3), (0, 1)]
    assert most[0].queries == 7
