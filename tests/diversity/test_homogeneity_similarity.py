"""Intra-model, inter-model and typicality figures of one query's pool.

Hand-made pools with known answers first, then a comparison with a plain loop over
pairs (written here, in float64) on random data.
"""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from diversity.homogeneity.similarity import (
    cosine_similarity_matrix,
    inter_model_means,
    inter_model_similarity,
    intra_model_means,
    intra_model_similarity,
    model_blocks,
    typicality,
    unit_rows,
)

E1, E2, E3 = np.eye(3)


def loop_cosine(a, b):
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return 0.0 if na == 0 or nb == 0 else float(np.dot(a, b) / (na * nb))


def loop_intra(embeddings, models):
    out = {}
    for m in sorted(set(models)):
        rows = [i for i, x in enumerate(models) if x == m]
        pairs = list(itertools.combinations(rows, 2))
        if pairs:
            out[m] = sum(loop_cosine(embeddings[i], embeddings[j]) for i, j in pairs) / len(pairs)
    return out


def loop_inter(embeddings, models):
    out = {}
    for a, b in itertools.combinations(sorted(set(models)), 2):
        cross = [
            loop_cosine(embeddings[i], embeddings[j])
            for i, x in enumerate(models)
            for j, y in enumerate(models)
            if x == a and y == b
        ]
        out[(a, b)] = sum(cross) / len(cross)
    return out


def loop_typicality(embeddings, models):
    out = []
    for i, m in enumerate(models):
        others = [loop_cosine(embeddings[i], embeddings[j]) for j, y in enumerate(models) if y != m]
        out.append(sum(others) / len(others) if others else np.nan)
    return np.array(out)


def random_pool(seed, n=23, d=7, n_models=5):
    rng = np.random.default_rng(seed)
    embeddings = rng.normal(size=(n, d)) + rng.normal(size=d)  # shared direction: sims > 0
    models = rng.integers(0, n_models, size=n)
    return embeddings, models


def test_unit_rows_scales_to_norm_one_and_keeps_zero_rows():
    rows = unit_rows(np.array([[3.0, 4.0], [0.0, 0.0], [0.0, -2.0]]))
    np.testing.assert_allclose(rows, [[0.6, 0.8], [0.0, 0.0], [0.0, -1.0]])


def test_unit_rows_keeps_float32_and_accepts_sparse():
    assert unit_rows(np.ones((2, 3), dtype=np.float32)).dtype == np.float32
    assert unit_rows(np.ones((2, 3), dtype=np.int64)).dtype == np.float64
    rows = unit_rows(sp.csr_matrix(np.array([[0.0, 2.0], [1.0, 1.0], [0.0, 0.0]])))
    assert sp.issparse(rows)  # a wide lexical matrix is never densified
    np.testing.assert_allclose(rows.toarray(), [[0, 1], [2**-0.5, 2**-0.5], [0, 0]])


@pytest.mark.parametrize("seed", range(3))
def test_sparse_input_gives_the_dense_results(seed):
    embeddings, models = random_pool(seed, n=19, d=40)
    embeddings[np.random.default_rng(seed).uniform(size=embeddings.shape) < 0.7] = 0.0
    embeddings[3] = 0.0  # a response without any feature
    sparse = sp.csr_matrix(embeddings)
    assert intra_model_similarity(sparse, models) == pytest.approx(
        intra_model_similarity(embeddings, models), abs=1e-12
    )
    assert inter_model_similarity(sparse, models) == pytest.approx(
        inter_model_similarity(embeddings, models), abs=1e-12
    )
    np.testing.assert_allclose(
        typicality(sparse, models), typicality(embeddings, models), atol=1e-12
    )
    np.testing.assert_allclose(
        cosine_similarity_matrix(sparse), cosine_similarity_matrix(embeddings), atol=1e-12
    )


def test_identical_responses_have_similarity_one():
    embeddings = np.array([E1, 2 * E1, 5 * E1, E1])
    models = np.array([0, 0, 1, 1])
    assert intra_model_similarity(embeddings, models) == pytest.approx({0: 1.0, 1: 1.0})
    assert inter_model_similarity(embeddings, models) == pytest.approx({(0, 1): 1.0})
    np.testing.assert_allclose(typicality(embeddings, models), 1.0)


def test_orthogonal_responses_have_similarity_zero():
    embeddings = np.array([E1, E2, E3, -E3])
    models = np.array([0, 0, 1, 2])
    assert intra_model_similarity(embeddings, models) == {0: 0.0}  # model 1 and 2: one sample
    assert inter_model_similarity(embeddings, models) == pytest.approx(
        {(0, 1): 0.0, (0, 2): 0.0, (1, 2): -1.0}
    )


def test_hand_computed_means():
    # model 0: E1, E1, E2 -> pairs (E1,E1)=1, (E1,E2)=0 twice -> 1/3
    # model 1: (E1+E2)/sqrt2 -> vs model 0: 1/sqrt2 three times -> 1/sqrt2
    embeddings = np.array([E1, E1, E2, E1 + E2])
    models = np.array([0, 0, 0, 1])
    assert intra_model_similarity(embeddings, models) == pytest.approx({0: 1 / 3})
    assert inter_model_similarity(embeddings, models) == pytest.approx({(0, 1): 2**-0.5})
    # typicality of the E1 rows: only model 1 is another model -> 1/sqrt2; same for E2
    np.testing.assert_allclose(typicality(embeddings, models), [2**-0.5] * 4)


def test_typicality_is_nan_when_no_other_model_answered():
    embeddings = np.array([E1, E2])
    assert np.isnan(typicality(embeddings, np.array([3, 3]))).all()


def test_zero_rows_count_as_similarity_zero():
    embeddings = np.array([E1, np.zeros(3), E1])
    assert intra_model_similarity(embeddings, np.array([0, 0, 0])) == pytest.approx({0: 1 / 3})


def test_single_response_models_contribute_no_intra_value():
    models, values = intra_model_means(model_blocks(np.array([E1, E2, E3]), np.array([4, 5, 6])))
    assert models.size == 0 and values.size == 0


def test_blocks_report_counts_and_sorted_models():
    # model 2 answers E1; model 9 answers E1, E3, E1: cross similarities 1, 0, 1
    blocks = model_blocks(np.array([E1, E1, E3, E1]), np.array([9, 2, 9, 9]))
    np.testing.assert_array_equal(blocks.models, [2, 9])
    np.testing.assert_array_equal(blocks.counts, [1, 3])
    np.testing.assert_array_equal(blocks.position, [1, 0, 1, 1])
    np.testing.assert_allclose(inter_model_means(blocks)[0, 1], 2 / 3)


@pytest.mark.parametrize("seed", range(5))
def test_matches_loop_oracle_in_float64(seed):
    embeddings, models = random_pool(seed)
    got_intra = intra_model_similarity(embeddings, models)
    want_intra = loop_intra(embeddings, models.tolist())
    assert got_intra.keys() == want_intra.keys()
    for m, value in want_intra.items():
        assert got_intra[m] == pytest.approx(value, abs=1e-12)
    got_inter = inter_model_similarity(embeddings, models)
    want_inter = loop_inter(embeddings, models.tolist())
    assert got_inter.keys() == want_inter.keys()
    for pair, value in want_inter.items():
        assert got_inter[pair] == pytest.approx(value, abs=1e-12)
    np.testing.assert_allclose(
        typicality(embeddings, models), loop_typicality(embeddings, models), atol=1e-12
    )


def test_float32_input_agrees_with_float64_oracle_to_float32_precision():
    # float32 rounds each coordinate to ~6e-8 relative; a cosine of unit vectors moves by
    # at most a few of those per coordinate, so 1e-5 leaves a wide margin
    embeddings, models = random_pool(11, n=60, d=384, n_models=6)
    want = loop_intra(embeddings, models.tolist())
    got = intra_model_similarity(embeddings.astype(np.float32), models)
    for m, value in want.items():
        assert got[m] == pytest.approx(value, abs=1e-5)


def test_cosine_matrix_blocks_agree_with_one_product():
    embeddings, _ = random_pool(3, n=31)
    full = cosine_similarity_matrix(embeddings)
    np.testing.assert_allclose(cosine_similarity_matrix(embeddings, block_rows=4), full)
    np.testing.assert_allclose(np.diagonal(full), 1.0)
    assert full[2, 5] == pytest.approx(loop_cosine(embeddings[2], embeddings[5]), abs=1e-12)


def test_rejects_mismatched_model_index():
    with pytest.raises(ValueError, match="shape"):
        intra_model_similarity(np.eye(3), np.array([0, 1]))
    with pytest.raises(ValueError, match="integers"):
        intra_model_similarity(np.eye(2), np.array([0.0, 1.0]))
