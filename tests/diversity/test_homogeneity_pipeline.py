"""The corpus pipeline against loops over a small random corpus, category breakdown,
typicality, validation, and splitting corpus-wide arrays into pools."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from diversity.homogeneity.lexical import distinct_n, duplicate_share, tfidf_vectors
from diversity.homogeneity.pipeline import (
    AnalysisSettings,
    QueryPool,
    analyse_corpus,
    measure_query,
    pools_from_arrays,
    summarise_group,
)

from .test_homogeneity_neighbours import loop_curve
from .test_homogeneity_similarity import loop_cosine, loop_inter, loop_intra, loop_typicality

MODEL_NAMES = ["alpha", "beta", "gamma", "delta"]
WORDS = "the a cat dog sat ran on under mat rug".split()
SETTINGS = AnalysisSettings(max_n=8, bootstrap_draws=50, min_group_queries=5)


def random_corpus(seed, n_queries=12, n_models=4, max_samples=3):
    """Pools where models answer a random subset of queries with 1..max_samples samples."""
    rng = np.random.default_rng(seed)
    pools = []
    for q in range(n_queries):
        topic = rng.normal(size=6)
        models, samples = [], []
        for m in range(n_models):
            if rng.uniform() < 0.8:
                k = int(rng.integers(1, max_samples + 1))
                models += [m] * k
                samples += list(range(k))
        if not models:
            models, samples = [0], [0]
        n = len(models)
        embeddings = topic + rng.normal(size=(n, 6))
        texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(2, 7)))) for _ in range(n)]
        if n > 1:
            texts[-1] = texts[0].upper()  # an exact duplicate after normalisation
        pools.append(
            QueryPool(
                query_id=f"q{q:02d}",
                embeddings=embeddings,
                model_index=np.array(models),
                sample=np.array(samples),
                category="facts" if q % 3 else "poems",
                texts=texts,
            )
        )
    return pools


def oracle(pools, n_models, max_n):
    """Pooled figures computed with plain loops over pools and pairs."""
    intra = {m: [] for m in range(n_models)}
    inter = {pair: [] for pair in itertools.combinations(range(n_models), 2)}
    curves, lexical_rows, model_lexical = [], [], {m: [] for m in range(n_models)}
    for pool in pools:
        models = pool.model_index.tolist()
        for m, value in loop_intra(pool.embeddings, models).items():
            intra[m].append(value)
        for pair, value in loop_inter(pool.embeddings, models).items():
            inter[pair].append(value)
        curves.append(loop_curve(pool.embeddings, models, max_n))
        lexical_rows.append(
            [distinct_n(pool.texts, n) for n in (1, 2, 3)] + [duplicate_share(pool.texts)]
        )
        for m in set(models):
            own = [t for t, x in zip(pool.texts, models, strict=True) if x == m]
            model_lexical[m].append(
                [distinct_n(own, n) for n in (1, 2, 3)] + [duplicate_share(own)]
            )
    return intra, inter, np.array(curves), np.array(lexical_rows), model_lexical


@pytest.mark.parametrize("seed", range(3))
def test_pooled_figures_match_loops(seed):
    pools = random_corpus(seed)
    result = analyse_corpus(pools, MODEL_NAMES, SETTINGS)
    intra, inter, curves, lexical_rows, model_lexical = oracle(pools, 4, SETTINGS.max_n)
    pooled = result.pooled

    all_values = [v for values in intra.values() for v in values]
    assert pooled.intra.pooled.values == len(all_values)
    assert pooled.intra.pooled.mean == pytest.approx(np.mean(all_values), abs=1e-12)
    for m, values in intra.items():
        summary = pooled.intra.by_model[m]
        assert summary.values == len(values)
        if values:
            assert summary.mean == pytest.approx(np.mean(values), abs=1e-12)
            bins = np.clip(np.floor(np.array(values) * 10), 0, 9).astype(int)
            np.testing.assert_allclose(
                summary.histogram, np.bincount(bins, minlength=10) / len(values)
            )
            assert summary.share_above[0.8] == pytest.approx(np.mean(np.array(values) > 0.8))

    order = pooled.inter.models.tolist()
    assert sorted(order) == sorted({m for p in pools for m in p.model_index.tolist()})
    for (a, b), values in inter.items():
        if a in order and b in order:
            got = pooled.inter.matrix[order.index(a), order.index(b)]
            assert pooled.inter.queries[order.index(a), order.index(b)] == len(values)
            if values:
                assert got == pytest.approx(np.mean(values), abs=1e-12)
                assert got == pooled.inter.matrix[order.index(b), order.index(a)]
    for position, m in enumerate(order):
        assert pooled.inter.matrix[position, position] == pytest.approx(
            pooled.intra.by_model[m].mean, nan_ok=True
        )

    np.testing.assert_allclose(pooled.top_n.curve.mean, np.nanmean(curves, axis=0), atol=1e-12)
    np.testing.assert_array_equal(pooled.top_n.curve.queries, (~np.isnan(curves)).sum(axis=0))
    np.testing.assert_array_equal(pooled.top_n.n, np.arange(1, 9))

    lexical = pooled.lexical
    for j, key in enumerate(["distinct_1", "distinct_2", "distinct_3", "duplicate_share"]):
        assert lexical.by_query[key] == pytest.approx(np.nanmean(lexical_rows[:, j]), abs=1e-12)
        for m, rows in model_lexical.items():
            column = np.array(rows)[:, j]
            assert lexical.by_model[m][key] == pytest.approx(np.nanmean(column), abs=1e-12)


def test_categories_are_the_pooled_analysis_of_their_queries():
    pools = random_corpus(4, n_queries=15)
    result = analyse_corpus(pools, MODEL_NAMES, SETTINGS)
    assert sorted(result.by_category) == ["facts", "poems"]
    poems = result.by_category["poems"]
    alone = analyse_corpus([p for p in pools if p.category == "poems"], MODEL_NAMES, SETTINGS)
    assert poems.queries == 5 and not poems.small
    assert result.by_category["facts"].queries == 10
    np.testing.assert_array_equal(poems.top_n.curve.low, alone.pooled.top_n.curve.low)
    np.testing.assert_array_equal(poems.inter.matrix, alone.pooled.inter.matrix)
    assert result.pooled.responses == sum(len(p.model_index) for p in pools)


def test_small_groups_are_flagged():
    pools = random_corpus(5, n_queries=6)
    result = analyse_corpus(pools, MODEL_NAMES, SETTINGS)
    assert result.by_category["poems"].small  # 2 queries < 5
    assert not result.pooled.small


def test_typicality_per_query_in_row_order():
    pools = random_corpus(6)
    result = analyse_corpus(pools, MODEL_NAMES, SETTINGS)
    for pool in pools:
        np.testing.assert_allclose(
            result.typicality[pool.query_id],
            loop_typicality(pool.embeddings, pool.model_index.tolist()),
            atol=1e-12,
        )


def test_query_without_texts_or_category():
    pool = QueryPool("only", np.eye(3), np.array([0, 0, 1]))
    measures = measure_query(pool, max_n=4)
    assert measures.lexical is None
    np.testing.assert_allclose(measures.intra_values, [0.0])
    assert np.isnan(measures.pair_means[0, 0]) and measures.pair_means[0, 1] == 0.0
    result = analyse_corpus([pool], ["a", "b"], SETTINGS)
    assert result.by_category == {} and result.pooled.lexical is None
    assert result.pooled.small


def test_model_with_single_samples_has_undefined_intra_figures():
    pool = QueryPool(1, np.eye(3), np.array([0, 0, 1]))
    group = summarise_group([measure_query(pool, max_n=3)], SETTINGS)
    assert group.intra.by_model[1].values == 0 and np.isnan(group.intra.by_model[1].mean)
    assert np.isnan(group.intra.by_model[1].histogram).all()


@pytest.mark.parametrize(
    ("pool", "message"),
    [
        (QueryPool(1, np.eye(2), np.array([0, 5])), "outside"),
        (QueryPool(1, np.eye(3), np.array([0, 1])), "rows"),
        (QueryPool(1, np.eye(2), np.array([0, 0]), sample=np.array([1, 1])), "twice"),
        (QueryPool(1, np.eye(2), np.array([0, 1]), texts=["x"]), "texts"),
    ],
)
def test_invalid_pools_are_rejected(pool, message):
    with pytest.raises(ValueError, match=message):
        analyse_corpus([pool], ["a", "b"], SETTINGS)


def test_repeated_query_is_rejected():
    pool = QueryPool(1, np.eye(2), np.array([0, 1]))
    with pytest.raises(ValueError, match="twice"):
        analyse_corpus([pool, pool], ["a", "b"], SETTINGS)


def test_pools_from_arrays_groups_rows_by_query():
    query = np.array([7, 3, 7, 3, 9])
    embeddings = np.arange(10.0).reshape(5, 2)
    pools = pools_from_arrays(
        query,
        embeddings,
        [0, 1, 1, 0, 0],
        [0, 0, 0, 0, 0],
        ["a", "b", "a", "b", "c"],
        list("vwxyz"),
    )
    assert [p.query_id for p in pools] == [7, 3, 9]
    np.testing.assert_array_equal(pools[0].embeddings, embeddings[[0, 2]])
    np.testing.assert_array_equal(pools[1].model_index, [1, 0])
    assert [p.category for p in pools] == ["a", "b", "c"]
    assert pools[1].texts == ["w", "y"]
    with pytest.raises(ValueError, match="several categories"):
        pools_from_arrays(query, embeddings, [0] * 5, category=["a", "b", "b", "b", "c"])


def test_cosine_helper_of_the_oracle():
    assert loop_cosine(np.array([1.0, 0.0]), np.array([0.0, 0.0])) == 0.0


def test_tfidf_pools_dense_or_sparse_give_the_same_analysis():
    pools = random_corpus(7, n_queries=6)
    dense = [
        QueryPool(p.query_id, tfidf_vectors(p.texts), p.model_index, p.sample, p.category, p.texts)
        for p in pools
    ]
    sparse = [
        QueryPool(
            p.query_id,
            sp.csr_matrix(p.embeddings),
            p.model_index,
            p.sample,
            p.category,
            p.texts,
        )
        for p in dense
    ]
    first = analyse_corpus(dense, MODEL_NAMES, SETTINGS).pooled
    second = analyse_corpus(sparse, MODEL_NAMES, SETTINGS).pooled
    np.testing.assert_allclose(first.inter.matrix, second.inter.matrix, atol=1e-6)
    np.testing.assert_allclose(first.top_n.curve.mean, second.top_n.curve.mean, atol=1e-12)
    intra, _, curves, _, _ = oracle(dense, 4, SETTINGS.max_n)
    values = [v for vs in intra.values() for v in vs]
    assert first.intra.pooled.mean == pytest.approx(np.mean(values), abs=1e-6)
    np.testing.assert_allclose(first.top_n.curve.mean, np.nanmean(curves, axis=0), atol=1e-12)
