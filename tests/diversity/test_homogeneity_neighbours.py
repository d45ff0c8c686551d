"""Top-N unique models: exact counts on constructed pools, a loop oracle, ties."""

import numpy as np
import pytest
import scipy.sparse as sp

from diversity.homogeneity.neighbours import (
    distinct_model_counts,
    nearest_neighbours,
    unique_models_curve,
)


def loop_curve(embeddings, models, max_n):
    """Plain reference: sort each response's others by (-similarity rounded to 1e-9, index)."""
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    n = len(models)
    curve = np.full(max_n, np.nan)
    for big_n in range(1, min(max_n, n - 1) + 1):
        total = 0
        for i in range(n):
            others = sorted(
                (j for j in range(n) if j != i),
                key=lambda j: (-round(float(unit[i] @ unit[j]) * 1e9), j),
            )
            total += len({models[j] for j in others[:big_n]})
        curve[big_n - 1] = total / n
    return curve


def test_identical_responses_give_one_unique_model_per_neighbour_of_the_same_model():
    # two models, three identical samples each, the models far apart: the two nearest
    # neighbours of every response are its own model's samples
    embeddings = np.array([[1.0, 0.0]] * 3 + [[0.0, 1.0]] * 3)
    models = np.array([0, 0, 0, 1, 1, 1])
    curve = unique_models_curve(embeddings, models, max_n=7)
    np.testing.assert_allclose(curve[:5], [1, 1, 2, 2, 2])
    assert np.isnan(curve[5:]).all()  # N > n - 1 = 5 is undefined


def test_all_identical_responses_tie_and_ties_go_to_the_lower_index():
    embeddings = np.ones((4, 3))
    models = np.array([0, 1, 2, 3])
    np.testing.assert_array_equal(
        nearest_neighbours(embeddings, 3), [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]]
    )
    # each response's first neighbour is one other model; N distinct models for every N
    np.testing.assert_allclose(unique_models_curve(embeddings, models, max_n=3), [1, 2, 3])


def test_constructed_pool_with_known_counts():
    # angles on a circle: 0 deg model A, 10 deg model A, 20 deg model B, 90 deg model C
    angles = np.radians([0, 10, 20, 90])
    embeddings = np.column_stack([np.cos(angles), np.sin(angles)])
    models = np.array([0, 0, 1, 2])
    # neighbours: 0 -> 1(A), 2(B), 3(C); 1 -> 0|2 tie at 10 deg: 0(A) then 2(B), 3(C)
    #             2 -> 1(A), 0(A), 3(C); 3 -> 2(B), 1(A), 0(A)
    np.testing.assert_array_equal(
        nearest_neighbours(embeddings, 3), [[1, 2, 3], [0, 2, 3], [1, 0, 3], [2, 1, 0]]
    )
    # U(1) = 1; U(2) = (2 + 2 + 1 + 2) / 4; U(3) = (3 + 3 + 2 + 2) / 4
    np.testing.assert_allclose(unique_models_curve(embeddings, models, max_n=3), [1, 7 / 4, 10 / 4])


def test_distinct_model_counts_count_first_appearances():
    counts = distinct_model_counts(np.array([[2, 2, 0, 2, 1], [0, 1, 2, 3, 3]]), 4)
    np.testing.assert_array_equal(counts, [[1, 1, 2, 2, 3], [1, 2, 3, 4, 4]])
    assert distinct_model_counts(np.zeros((3, 0), dtype=int), 2).shape == (3, 0)


def test_single_response_has_no_curve():
    assert np.isnan(unique_models_curve(np.ones((1, 4)), np.array([0]), max_n=5)).all()
    assert nearest_neighbours(np.ones((1, 4)), 5).shape == (1, 0)


@pytest.mark.parametrize("seed", range(4))
def test_matches_loop_oracle(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    embeddings = rng.normal(size=(n, 5))
    models = rng.integers(0, 6, size=n)
    np.testing.assert_allclose(
        unique_models_curve(embeddings, models, max_n=12),
        loop_curve(embeddings, models.tolist(), 12),
        atol=1e-12,
    )


def test_blocks_of_rows_give_the_same_curve():
    rng = np.random.default_rng(5)
    embeddings = rng.normal(size=(40, 6))
    models = rng.integers(0, 8, size=40)
    whole = unique_models_curve(embeddings, models, max_n=50)
    np.testing.assert_allclose(unique_models_curve(embeddings, models, block_rows=7), whole)
    np.testing.assert_array_equal(
        nearest_neighbours(embeddings, 10, block_rows=3), nearest_neighbours(embeddings, 10)
    )


def test_curve_ignores_model_id_values_and_is_bounded():
    rng = np.random.default_rng(8)
    embeddings = rng.normal(size=(25, 4))
    models = rng.integers(0, 3, size=25)
    curve = unique_models_curve(embeddings, models, max_n=30)
    relabelled = unique_models_curve(embeddings, np.array([17, 4, 99])[models], max_n=30)
    np.testing.assert_array_equal(curve, relabelled)
    defined = curve[~np.isnan(curve)]
    assert defined.size == 24
    assert np.all(np.diff(defined) >= 0) and defined.max() <= 3


def test_sparse_and_wide_rows_give_the_same_neighbours():
    rng = np.random.default_rng(9)
    embeddings = rng.normal(size=(30, 500))
    embeddings[rng.uniform(size=embeddings.shape) < 0.9] = 0.0
    models = rng.integers(0, 5, size=30)
    want = loop_curve(embeddings, models.tolist(), 10)
    np.testing.assert_allclose(unique_models_curve(embeddings, models, max_n=10), want, atol=1e-12)
    sparse = sp.csr_matrix(embeddings)
    np.testing.assert_allclose(unique_models_curve(sparse, models, max_n=10), want, atol=1e-12)
    np.testing.assert_array_equal(
        nearest_neighbours(sparse, 7, block_rows=4), nearest_neighbours(embeddings, 7)
    )
