"""Properties: the analyses do not depend on the order of models, queries or samples, and
the top-N curve is non-decreasing in N and bounded by the number of models."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from diversity.homogeneity.neighbours import unique_models_curve
from diversity.homogeneity.pipeline import AnalysisSettings, QueryPool, analyse_corpus
from diversity.homogeneity.report import analysis_report

PROPERTY_SETTINGS = settings(max_examples=40, deadline=None)
ANALYSIS = AnalysisSettings(max_n=10, bootstrap_draws=40, min_group_queries=2)

corpora = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**32 - 1),
        "n_queries": st.integers(1, 6),
        "n_models": st.integers(1, 5),
        "max_samples": st.integers(1, 4),
    }
)


def build_corpus(seed, n_queries, n_models, max_samples):
    """Continuous random embeddings (no exact ties), every query answered by >= 1 model."""
    rng = np.random.default_rng(seed)
    pools = []
    for q in range(n_queries):
        counts = rng.integers(0, max_samples + 1, size=n_models)
        counts[rng.integers(n_models)] = max(1, counts.max())
        models = np.repeat(np.arange(n_models), counts)
        samples = np.concatenate([np.arange(c) for c in counts])
        embeddings = rng.normal(size=6) + rng.normal(size=(models.size, 6))
        pools.append(QueryPool(q, embeddings, models, samples, category=("x", "y")[q % 2]))
    return pools, [f"m{i}" for i in range(n_models)]


def named_figures(pools, names):
    """The report with models looked up by name, so it can be compared across relabellings."""
    report = analysis_report(analyse_corpus(pools, names, ANALYSIS))
    inter = report["inter_model"]
    pairs = {
        (a, b): inter["matrix"][i][j]
        for i, a in enumerate(inter["models"])
        for j, b in enumerate(inter["models"])
    }
    return report, pairs


def assert_close(first, second):
    first = np.array([np.nan if v is None else v for v in first], dtype=float)
    second = np.array([np.nan if v is None else v for v in second], dtype=float)
    np.testing.assert_allclose(first, second, atol=1e-12)


@PROPERTY_SETTINGS
@given(corpora, st.randoms(use_true_random=False))
def test_invariant_to_relabelling_models(corpus, random):
    pools, names = build_corpus(**corpus)
    permutation = list(range(len(names)))
    random.shuffle(permutation)
    # model i becomes model permutation[i]; the name travels with it
    renamed = [None] * len(names)
    for old, new in enumerate(permutation):
        renamed[new] = names[old]
    relabelled = [
        QueryPool(
            p.query_id, p.embeddings, np.array(permutation)[p.model_index], p.sample, p.category
        )
        for p in pools
    ]
    before, pairs_before = named_figures(pools, names)
    after, pairs_after = named_figures(relabelled, renamed)
    assert before["intra_model"].keys() == after["intra_model"].keys()
    for name in before["intra_model"]:
        assert_close(
            [before["intra_model"][name]["mean"], *before["intra_model"][name]["histogram"]],
            [after["intra_model"][name]["mean"], *after["intra_model"][name]["histogram"]],
        )
    assert pairs_before.keys() == pairs_after.keys()
    assert_close([pairs_before[k] for k in pairs_before], [pairs_after[k] for k in pairs_before])
    assert_close(before["top_n"]["mean_unique_models"], after["top_n"]["mean_unique_models"])
    assert before["top_n"]["ci95"] == after["top_n"]["ci95"]


@PROPERTY_SETTINGS
@given(corpora, st.randoms(use_true_random=False))
def test_invariant_to_query_order(corpus, random):
    pools, names = build_corpus(**corpus)
    shuffled = list(pools)
    random.shuffle(shuffled)
    # the whole report, bootstrap intervals included, is the same
    assert analysis_report(analyse_corpus(pools, names, ANALYSIS)) == analysis_report(
        analyse_corpus(shuffled, names, ANALYSIS)
    )


@PROPERTY_SETTINGS
@given(corpora, st.randoms(use_true_random=False))
def test_invariant_to_sample_order(corpus, random):
    pools, names = build_corpus(**corpus)
    shuffled = []
    for p in pools:
        order = list(range(len(p.model_index)))
        random.shuffle(order)
        shuffled.append(
            QueryPool(
                p.query_id, p.embeddings[order], p.model_index[order], p.sample[order], p.category
            )
        )
    before, pairs_before = named_figures(pools, names)
    after, pairs_after = named_figures(shuffled, names)
    assert_close([pairs_before[k] for k in pairs_before], [pairs_after[k] for k in pairs_before])
    for name in before["intra_model"]:
        assert_close([before["intra_model"][name]["mean"]], [after["intra_model"][name]["mean"]])
    assert_close(before["top_n"]["mean_unique_models"], after["top_n"]["mean_unique_models"])


@PROPERTY_SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 8), st.booleans())
def test_curve_is_non_decreasing_and_bounded(seed, n, n_models, clustered):
    rng = np.random.default_rng(seed)
    models = rng.integers(0, n_models, size=n)
    embeddings = rng.normal(size=(n, 4))
    if clustered:  # many exact ties: copies of a few vectors
        embeddings = embeddings[rng.integers(0, min(3, n), size=n)]
    curve = unique_models_curve(embeddings, models, max_n=50)
    defined = curve[~np.isnan(curve)]
    assert defined.size == min(50, n - 1)
    assert np.all(np.isnan(curve[defined.size :]))
    assert np.all(np.diff(defined) >= -1e-12)
    present = np.unique(models).size
    assert np.all(defined <= np.minimum(np.arange(1, defined.size + 1), present) + 1e-12)
    assert np.all(defined >= 1 - 1e-12)
