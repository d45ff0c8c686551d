"""Tests of analysis.metrics: reference vectors, hand-computed batches, properties.

Plain pytest, no database. The reference vectors (published values for Krippendorff's alpha,
correlations with ties, entropy and percentage disagreement) are in
``tests/analysis/reference/stat_vectors.json``.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis import metrics

# A copy of the project's shared reference file (published values; see its "source" fields),
# kept with the tests so that they never depend on a folder outside the repository.
VECTORS_PATH = Path(__file__).resolve().parent / "reference" / "stat_vectors.json"
VECTORS = json.loads(VECTORS_PATH.read_text())

TOL = 1e-6  # the reference values are given to 6 decimals
SCIPY_TOL = 1e-9

PROPERTY_SETTINGS = settings(max_examples=60, deadline=None)


def vector_params(section: str, key: str | None = None) -> list:
    """One pytest param per reference case."""
    cases = VECTORS[section] if key is None else VECTORS[section][key]
    return [pytest.param(case, id=str(case.get("id", i))) for i, case in enumerate(cases)]


def reliability_to_arrays(reliability_data: list[list[float | None]]) -> tuple[np.ndarray, ...]:
    """Coders x units table with ``None`` for missing -> (item_index, annotator_index, value)."""
    item_index, annotator_index, value = [], [], []
    for coder, row in enumerate(reliability_data):
        for unit, entry in enumerate(row):
            if entry is not None:
                item_index.append(unit)
                annotator_index.append(coder)
                value.append(entry)
    return np.array(item_index), np.array(annotator_index), np.array(value)


def labels_from_counts(counts: np.ndarray, label_set: np.ndarray) -> tuple[np.ndarray, ...]:
    """Expand a count matrix into (item_index, annotator_index, value) label arrays."""
    item_index, value = [], []
    for item, row in enumerate(counts):
        for label, count in zip(label_set, row, strict=True):
            item_index.extend([item] * int(count))
            value.extend([int(label)] * int(count))
    item_index = np.array(item_index, dtype=np.int64)
    # annotator j of an item = the j-th label of that item: one value per (item, annotator).
    annotator_index = np.zeros(item_index.size, dtype=np.int64)
    for item in np.unique(item_index):
        positions = np.flatnonzero(item_index == item)
        annotator_index[positions] = np.arange(positions.size)
    return item_index, annotator_index, np.array(value, dtype=np.int64)


# --------------------------------------------------------------------------------------------
# Reference vectors
# --------------------------------------------------------------------------------------------


def krippendorff_params() -> list:
    return [
        pytest.param(case, level, id=f"{case['id']}-{level}")
        for case in VECTORS["krippendorff_alpha"]
        for level in case["expected"]
    ]


@pytest.mark.parametrize(("case", "level"), krippendorff_params())
def test_krippendorff_alpha_reference(case: dict, level: str) -> None:
    item_index, annotator_index, value = reliability_to_arrays(case["reliability_data"])
    expected = case["expected"][level]
    alpha = metrics.krippendorff_alpha(
        item_index, annotator_index, value, level, case.get("value_domain")
    )
    assert alpha == pytest.approx(expected["expected"], abs=TOL)
    assert alpha == pytest.approx(float(Fraction(expected["exact_fraction"])), abs=1e-12)


@pytest.mark.parametrize("case", vector_params("entropy", "cases"))
def test_entropy_reference(case: dict) -> None:
    counts = np.array([case["counts"]])
    assert metrics.entropy_bits(counts)[0] == pytest.approx(case["expected"]["bits"], abs=TOL)


def test_entropy_closed_forms() -> None:
    closed = VECTORS["entropy"]["closed_forms"]
    assert metrics.entropy_bits(np.ones((1, 2)))[0] == pytest.approx(closed["fair_coin_bits"])
    assert metrics.entropy_bits(np.ones((1, 6)))[0] == pytest.approx(closed["fair_die_bits"])
    assert metrics.entropy_bits(np.ones((1, 5)))[0] == pytest.approx(
        closed["uniform5_bits"], abs=TOL
    )


@pytest.mark.parametrize("case", vector_params("percentage_disagreement", "cases"))
def test_percentage_disagreement_reference(case: dict) -> None:
    # The vectors order counts +2, +1, 0, -1, -2; PAIRWISE_LABELS is -2..2.
    counts = np.array([case["counts_strongA_weakA_tie_weakB_strongB"][::-1]])
    labels = metrics.PAIRWISE_LABELS
    p_disagree = metrics.percentage_disagreement(counts, labels)[0]
    assert p_disagree == pytest.approx(case["expected"], abs=TOL)
    assert p_disagree == pytest.approx(float(Fraction(case["exact_fraction"])), abs=1e-12)
    agreement = metrics.pairwise_agreement(counts, labels)["agreement"][0]
    assert agreement + p_disagree == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("case", vector_params("correlation"))
def test_correlation_reference(case: dict) -> None:
    x, y, expected = case["x"], case["y"], case["expected"]
    rho = metrics.spearman(x, y)
    r = metrics.pearson(x, y)
    assert rho.reason is None and r.reason is None
    assert rho.n == r.n == len(x)
    assert rho.r == pytest.approx(expected["spearman_rho"], abs=TOL)
    assert rho.p == pytest.approx(expected["spearman_p_two_sided_t_approx"], abs=TOL)
    assert r.r == pytest.approx(expected["pearson_r"], abs=TOL)
    assert r.p == pytest.approx(expected["pearson_p_two_sided"], abs=TOL)

    scipy_rho = scipy.stats.spearmanr(x, y)
    scipy_r = scipy.stats.pearsonr(x, y)
    assert rho.r == pytest.approx(scipy_rho.statistic, abs=SCIPY_TOL)
    assert rho.p == pytest.approx(scipy_rho.pvalue, abs=SCIPY_TOL)
    assert r.r == pytest.approx(scipy_r.statistic, abs=SCIPY_TOL)
    assert r.p == pytest.approx(scipy_r.pvalue, abs=SCIPY_TOL)

    published = case.get("published", {})
    for key, attribute in (
        ("spearman_rho", rho.r),
        ("spearman_p", rho.p),
        ("pearson_r", r.r),
        ("pearson_p", r.p),
    ):
        if key in published:
            assert attribute == pytest.approx(published[key], abs=TOL)
    if case["has_ties"]:
        # Mid-ranks, not the 1 - 6 sum d^2 shortcut.
        assert abs(rho.r - case["naive_1_minus_6sumd2_formula_WRONG_if_ties"]) > 1e-3


def test_spearman_scipy_doc_exact_value() -> None:
    case = next(c for c in VECTORS["correlation"] if c["id"] == "scipy_doc_ties")
    assert metrics.spearman(case["x"], case["y"]).r == pytest.approx(8 / math.sqrt(95), abs=1e-12)


# --------------------------------------------------------------------------------------------
# Per item, hand computed
# --------------------------------------------------------------------------------------------


def test_count_matrix_counts_over_fixed_label_set() -> None:
    counts = metrics.count_matrix(
        item_index=np.array([0, 0, 0, 2, 2]),
        value=np.array([1, 5, 5, 3, 3]),
        label_set=metrics.ABSOLUTE_LABELS,
        n_items=3,
    )
    assert counts.tolist() == [[1, 0, 0, 0, 2], [0, 0, 0, 0, 0], [0, 0, 2, 0, 0]]


def test_count_matrix_rejects_values_outside_label_set() -> None:
    with pytest.raises(ValueError, match="not in the label set"):
        metrics.count_matrix(np.array([0, 0]), np.array([1, 6]), metrics.ABSOLUTE_LABELS, 1)


def test_count_matrix_pairwise_column_order() -> None:
    counts = metrics.count_matrix(
        np.array([0, 0, 0, 0]), np.array([2, -2, 0, 2]), metrics.PAIRWISE_LABELS, 1
    )
    assert counts.tolist() == [[1, 0, 1, 0, 2]]


def test_item_summary_hand_computed() -> None:
    counts = np.array([[2, 0, 0, 0, 1], [0, 0, 0, 0, 0], [0, 0, 4, 0, 0]])
    summary = metrics.item_summary(counts, metrics.ABSOLUTE_LABELS)
    assert summary["n"].tolist() == [3, 0, 4]
    assert summary["mean"][0] == pytest.approx(7 / 3)
    assert summary["std"][0] == pytest.approx(np.std([1, 1, 5]))  # population std, ddof=0
    assert summary["entropy_bits"][0] == pytest.approx(
        -(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3)
    )
    assert (summary["mean"][2], summary["std"][2], summary["entropy_bits"][2]) == (3.0, 0.0, 0.0)
    assert all(np.isnan(summary[key][1]) for key in ("mean", "std", "entropy_bits"))


def test_pairwise_agreement_hand_computed() -> None:
    # -2, -1, 0, +1, +2 columns: C_B = 3, C_tie = 2, C_A = 5.
    counts = np.array([[1, 2, 2, 4, 1]])
    result = metrics.pairwise_agreement(counts, metrics.PAIRWISE_LABELS)
    assert result["agreement"][0] == pytest.approx((5 + 1) / 10)
    assert result["p_disagree"][0] == pytest.approx(0.4)
    assert (result["count_a"][0], result["count_b"][0], result["count_tie"][0]) == (5, 3, 2)


def test_disagreement_alternatives_hand_computed() -> None:
    counts = np.array([[2, 3, 5, 10, 5]])
    grouped = metrics.grouped_entropy_bits(counts, metrics.THREE_GROUPS)[0]
    assert grouped == pytest.approx(-2 * 0.2 * math.log2(0.2) - 0.6 * math.log2(0.6))
    assert metrics.gini_impurity(counts)[0] == pytest.approx(1 - 163 / 625)
    assert metrics.pairwise_annotator_disagreement(counts)[0] == pytest.approx(1 - 138 / 600)
    assert metrics.majority_share(counts)[0] == pytest.approx(1 - 10 / 25)


def test_pairwise_annotator_disagreement_matches_counting_pairs() -> None:
    labels = [1, 1, 2, 4, 4, 4, 5]
    pairs = list(itertools.combinations(labels, 2))
    expected = sum(a != b for a, b in pairs) / len(pairs)
    counts = metrics.count_matrix(np.zeros(7, int), np.array(labels), metrics.ABSOLUTE_LABELS, 1)
    assert metrics.pairwise_annotator_disagreement(counts)[0] == pytest.approx(expected)


def test_per_item_alternatives_undefined_items_are_nan() -> None:
    counts = np.array([[0, 0, 0, 0, 0], [0, 1, 0, 0, 0]])
    assert np.isnan(metrics.gini_impurity(counts)[0])
    assert np.isnan(metrics.majority_share(counts)[0])
    assert np.isnan(metrics.pairwise_annotator_disagreement(counts)).all()  # n < 2
    assert metrics.majority_share(counts)[1] == 0.0


# --------------------------------------------------------------------------------------------
# Subsets, hand computed
# --------------------------------------------------------------------------------------------


def test_subset_names() -> None:
    means = np.linspace(1, 5, 20)
    assert list(metrics.tukey_subsets(means)) == [
        "tukey_k0.5",
        "tukey_k1.0",
        "tukey_k1.5",
        "tukey_k2.0",
        "tukey_k2.5",
        "tukey_k3.0",
    ]
    assert list(metrics.top_entropy_subsets(means)) == [
        f"top_entropy_{p}pct" for p in (2, 4, 6, 8, 10, 12, 14, 16)
    ]
    assert list(metrics.most_ties_subsets(np.arange(20))) == [
        f"most_ties_{p}pct" for p in (60, 65, 70, 75, 80, 85, 90, 95)
    ]
    assert list(metrics.least_agreement_subsets(means)) == [
        f"least_agreement_{p}pct" for p in (60, 65, 70, 75, 80, 85, 90, 95)
    ]


def test_tukey_fences_hand_computed() -> None:
    # Q1 = 2.25, Q3 = 4.75 (linear), IQR = 2.5; k = 0.5 -> [1.0, 6.0]; k = 1 -> [-0.25, 7.25].
    means = np.array([3.0, 7.0, 1.0, 5.0, 2.0, 4.0])
    subsets = metrics.tukey_subsets(means, ks=(0.5, 1.0))
    assert subsets["tukey_k0.5"].tolist() == [True, False, True, True, True, True]
    assert subsets["tukey_k1.0"].all()


def test_tukey_keeps_everything_when_all_means_equal() -> None:
    subsets = metrics.tukey_subsets(np.full(9, 3.4))
    assert all(mask.all() for mask in subsets.values())


def test_tukey_ignores_unlabelled_items() -> None:
    subsets = metrics.tukey_subsets(np.array([1.0, np.nan, 1.0, 1.0]))
    assert subsets["tukey_k1.5"].tolist() == [True, False, True, True]


def test_top_entropy_keeps_ties_at_threshold() -> None:
    entropy = np.array([1.0, 0.0, 2.0, 1.0, 0.0, 1.0])
    subsets = metrics.top_entropy_subsets(entropy, ps=(16, 50))
    # 84th percentile of [0, 0, 1, 1, 1, 2] = 1.2 -> only the 2; median = 1 -> all three 1s.
    assert subsets["top_entropy_16pct"].tolist() == [False, False, True, False, False, False]
    assert subsets["top_entropy_50pct"].tolist() == [True, False, True, True, False, True]


def test_top_entropy_ties_survive_floating_point() -> None:
    # Same multiset of counts in different columns must give bit-identical entropy.
    counts = np.array(
        [[7, 11, 3, 0, 4], [0, 4, 3, 11, 7], [3, 4, 7, 11, 0], [25, 0, 0, 0, 0], [20, 5, 0, 0, 0]]
    )
    entropy = metrics.entropy_bits(counts)
    assert entropy[0] == entropy[1] == entropy[2]
    subsets = metrics.top_entropy_subsets(entropy, ps=(50,))
    assert subsets["top_entropy_50pct"].tolist() == [True, True, True, False, False]


def test_most_ties_stable_descending_with_floor() -> None:
    tie_counts = np.array([1, 3, 3, 0, 2, 3, 1])  # N = 7
    subsets = metrics.most_ties_subsets(tie_counts, ps=(60, 65, 95))
    # floor(7 * 60 / 100) = 4: the three 3s (items 1, 2, 5), then the 2 (item 4).
    assert np.flatnonzero(subsets["most_ties_60pct"]).tolist() == [1, 2, 4, 5]
    assert subsets["most_ties_65pct"].sum() == 4  # floor(4.55)
    # floor(6.65) = 6: both 1s (items 0, 6) are in, only the 0 (item 3) is left out.
    assert np.flatnonzero(subsets["most_ties_95pct"]).tolist() == [0, 1, 2, 4, 5, 6]
    # floor(7 * 70 / 100) = 4 as well; at 5 items the first of the two 1s (item 0) wins.
    five = metrics.most_ties_subsets(tie_counts, ps=(75,))["most_ties_75pct"]
    assert np.flatnonzero(five).tolist() == [0, 1, 2, 4, 5]


def test_least_agreement_stable_ascending_with_floor() -> None:
    agreement = np.array([0.5, 0.6, 0.5, 0.9, 0.7, 0.6, 0.55])
    subsets = metrics.least_agreement_subsets(agreement, ps=(60, 95))
    # order: 0, 2 (0.5), 6 (0.55), 1, 5 (0.6), 4, 3 -> first 4, then first 6.
    assert np.flatnonzero(subsets["least_agreement_60pct"]).tolist() == [0, 1, 2, 6]
    assert np.flatnonzero(subsets["least_agreement_95pct"]).tolist() == [0, 1, 2, 4, 5, 6]


def test_batch_subsets_leave_out_unlabelled_items() -> None:
    counts = np.array([[0, 0, 0, 0, 0], [1, 2, 2, 0, 0], [0, 0, 5, 0, 0], [3, 0, 0, 0, 2]])
    absolute = metrics.batch_subsets(
        "absolute", metrics.item_summary(counts, metrics.ABSOLUTE_LABELS)
    )
    assert absolute["full"].tolist() == [False, True, True, True]
    assert not any(mask[0] for mask in absolute.values())
    assert len(absolute) == 1 + 6 + 8

    summary = metrics.item_summary(counts, metrics.PAIRWISE_LABELS)
    pairwise = metrics.pairwise_agreement(counts, metrics.PAIRWISE_LABELS)
    subsets = metrics.batch_subsets("pairwise", summary, pairwise)
    assert len(subsets) == 1 + 8 + 8
    assert not any(mask[0] for mask in subsets.values())
    # N = 3 labelled items, floor(3 * 60 / 100) = 1: item 2 has the most ties (5).
    assert np.flatnonzero(subsets["most_ties_60pct"]).tolist() == [2]


# --------------------------------------------------------------------------------------------
# Correlations: edge cases and the vectorised bootstrap
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "y", "reason"),
    [
        ([1.0, 2.0], [3.0, 4.0], "fewer than 3 items (n=2)"),
        ([], [], "fewer than 3 items (n=0)"),
        ([2.0, 2.0, 2.0, 2.0], [1.0, 2.0, 3.0, 4.0], "x is constant (all 4 values equal)"),
        ([1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 5.0, 5.0], "y is constant (all 4 values equal)"),
        ([1.0, np.nan, 3.0, 4.0], [1.0, 2.0, np.inf, 4.0], "fewer than 3 items (n=2)"),
    ],
)
def test_undefined_correlation_gives_none_with_reason(x: list, y: list, reason: str) -> None:
    for result in (
        metrics.spearman(x, y),
        metrics.pearson(x, y),
        *metrics.correlate_with_bootstrap(x, y, n_resamples=50),
    ):
        assert (result.r, result.p, result.ci95) == (None, None, None)
        assert result.reason == reason
        assert result.as_report() is None


def test_non_finite_pairs_are_left_out() -> None:
    x = np.array([1.0, 2.0, np.nan, 4.0, 5.0, 3.0])
    y = np.array([2.0, 1.0, 7.0, 4.0, 3.0, np.nan])
    result = metrics.spearman(x, y)
    assert result.n == 4
    assert result.r == pytest.approx(scipy.stats.spearmanr([1, 2, 4, 5], [2, 1, 4, 3]).statistic)


def test_perfect_rank_correlation_matches_scipy_exactly() -> None:
    result = metrics.spearman([1, 2, 3], [10, 20, 30])
    assert (result.r, result.p) == (1.0, 0.0)
    assert metrics.pearson([1, 2, 3, 4, 5], [2, 4, 6, 8, 10]).r == 1.0


def test_bootstrap_reproducible_and_covers_r() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=300)
    y = x + 0.3 * rng.normal(size=300)
    first = metrics.correlate_with_bootstrap(x, y, n_resamples=400, seed=11)
    again = metrics.correlate_with_bootstrap(x, y, n_resamples=400, seed=11)
    other = metrics.correlate_with_bootstrap(x, y, n_resamples=400, seed=12)
    assert first == again
    assert first.spearman.ci95 != other.spearman.ci95
    for result in first:
        low, high = result.ci95
        assert low < result.r < high
        assert result.n_resamples_used == 400
        assert result.as_report() == {"r": result.r, "p": result.p, "ci95": [low, high]}


def test_bootstrap_does_not_depend_on_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(0, 4, 500).astype(float)
    y = x + rng.normal(size=500)
    monkeypatch.setattr(metrics, "_BOOTSTRAP_CHUNK_DRAWS", 5_000)  # many chunks
    monkeypatch.setattr(metrics, "BOOTSTRAP_THREADS", 1)
    single = metrics.bootstrap_statistics(x, y, n_resamples=120, seed=3)
    monkeypatch.setattr(metrics, "BOOTSTRAP_THREADS", 2)
    threaded = metrics.bootstrap_statistics(x, y, n_resamples=120, seed=3)
    monkeypatch.setattr(metrics, "_BOOTSTRAP_CHUNK_DRAWS", 10**7)  # one chunk
    one_chunk = metrics.bootstrap_statistics(x, y, n_resamples=120, seed=3)
    for a, b, c in zip(single, threaded, one_chunk, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("ties", [True, False])
def test_vectorised_bootstrap_equals_scipy_on_explicit_resamples(ties: bool) -> None:
    rng = np.random.default_rng(8)
    n, n_resamples, seed = 60, 40, 21
    if ties:
        x = rng.integers(1, 6, n).astype(float)
        y = np.round(x + rng.normal(size=n))
    else:
        x = rng.normal(size=n)
        y = x + rng.normal(size=n)
    rho, r = metrics.bootstrap_statistics(x, y, n_resamples=n_resamples, seed=seed)
    index = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    for b in range(0, n_resamples, 7):
        xb, yb = x[index[b]], y[index[b]]
        assert rho[b] == pytest.approx(scipy.stats.spearmanr(xb, yb).statistic, abs=SCIPY_TOL)
        assert r[b] == pytest.approx(scipy.stats.pearsonr(xb, yb).statistic, abs=SCIPY_TOL)


def test_constant_resamples_are_dropped_and_ci_needs_half() -> None:
    # x = [0, 0, 1], y = [0, 1, 1]: a resample is usable only if it holds items 0 and 2,
    # which happens with probability 12/27 < 1/2, so the interval is null.
    result = metrics.correlate_with_bootstrap([0, 0, 1], [0, 1, 1], n_resamples=1000, seed=0)
    assert result.spearman.r == pytest.approx(0.5)
    assert result.spearman.ci95 is None and result.pearson.ci95 is None
    assert 380 < result.spearman.n_resamples_used < 500
    rho, _ = metrics.bootstrap_statistics([0, 0, 1], [0, 1, 1], n_resamples=1000, seed=0)
    assert np.isnan(rho).sum() == 1000 - result.spearman.n_resamples_used


def test_correlate_subsets_equals_per_subset_bootstrap() -> None:
    rng = np.random.default_rng(4)
    n = 400
    x = rng.normal(size=n)
    x[::17] = np.nan  # items without a model score
    y = np.round(x * 2 + rng.normal(size=n)) / 2
    masks = {
        "full": np.ones(n, dtype=bool),
        "full_again": np.ones(n, dtype=bool),  # computed once, reported under both names
        "half": rng.random(n) < 0.5,
        "tiny": np.arange(n) < 3,  # item 0 has no score: n = 2
        "constant_y": np.isclose(y, 0.5),
    }
    results = metrics.correlate_subsets(x, y, masks, n_resamples=200, seed=9)
    assert list(results) == list(masks)
    for name, mask in masks.items():
        assert results[name] == metrics.correlate_with_bootstrap(
            x[mask], y[mask], n_resamples=200, seed=9
        )
    assert results["tiny"].spearman.reason == "fewer than 3 items (n=2)"
    with pytest.raises(ValueError, match="bool mask"):
        metrics.correlate_subsets(x, y, {"indices": np.arange(10)})
    assert results["constant_y"].pearson.reason.startswith("y is constant")


def test_bootstrap_speed_large_batch() -> None:
    """The documented budget: 26,070 items x 1,000 resamples in a couple of seconds.

    Measured in CPU time (summed over the bootstrap threads) so that other work on a shared
    machine does not make it flaky; about 0.7 s CPU / 0.5 s wall on 2 idle cores.
    """
    rng = np.random.default_rng(0)
    x = rng.normal(size=26_070)
    y = np.round(x + rng.normal(size=26_070), 1)
    start = time.process_time()
    result = metrics.correlate_with_bootstrap(x, y, n_resamples=1000, seed=0)
    cpu_seconds = time.process_time() - start
    assert result.spearman.ci95 is not None and result.pearson.ci95 is not None
    assert cpu_seconds < 8


# --------------------------------------------------------------------------------------------
# Several sources at once: correlate_sources_subsets shares the resamples
# --------------------------------------------------------------------------------------------


def assert_same_correlation(
    shared: metrics.BootstrapCorrelation, single: metrics.BootstrapCorrelation
) -> None:
    """Spearman identical; Pearson's point result identical and its interval to 1e-12."""
    assert shared.spearman == single.spearman
    ours, theirs = shared.pearson, single.pearson
    assert (ours.r, ours.p, ours.n, ours.reason) == (theirs.r, theirs.p, theirs.n, theirs.reason)
    assert ours.n_resamples_used == theirs.n_resamples_used
    if theirs.ci95 is None:
        assert ours.ci95 is None
    else:
        assert ours.ci95 == pytest.approx(theirs.ci95, abs=1e-12, rel=0)


def assert_same_as_per_source(
    xs: list[np.ndarray],
    y: np.ndarray,
    masks: dict[str, np.ndarray],
    n_resamples: int,
    seed: int,
    shared: list[dict[str, metrics.BootstrapCorrelation]] | None = None,
) -> list[dict[str, metrics.BootstrapCorrelation]]:
    if shared is None:
        shared = metrics.correlate_sources_subsets(xs, y, masks, n_resamples, seed)
    assert len(shared) == len(xs)
    for x, results in zip(xs, shared, strict=True):
        single = metrics.correlate_subsets(x, y, masks, n_resamples, seed)
        assert list(results) == list(single)
        for name in single:
            assert_same_correlation(results[name], single[name])
    return shared


def sources_and_masks(y_kind: str) -> tuple[list[np.ndarray], np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(31)
    n = 700
    quality = rng.uniform(1, 5, n)
    if y_kind == "absolute":  # item means of 25 labels 1..5: at most 101 distinct values
        labels = np.clip(np.rint(quality[:, None] + rng.normal(0, 1, (n, 25))), 1, 5)
        y = labels.mean(axis=1)
    else:
        y = quality + rng.normal(0, 0.5, n)
    gaps = quality + rng.normal(0, 1.0, n)
    gaps[rng.random(n) < 0.1] = np.nan  # items without a score: its own item sets
    xs = [
        quality + rng.normal(0, 0.3, n),  # continuous, every item scored
        gaps,
        np.rint(quality + rng.normal(0, 1.0, n)),  # ties: a 1..5-like judge score
        -quality + rng.normal(0, 2.0, n),  # negative correlation
        np.full(n, 4.0),  # constant: undefined, no bootstrap
        np.where(quality > 2, quality, np.nan),  # a different coverage again
    ]
    top = y >= np.quantile(y, 0.9)
    masks = {
        "full": np.ones(n, dtype=bool),
        "full_again": np.ones(n, dtype=bool),
        "half": rng.random(n) < 0.5,
        "top_decile": top,
        "tiny": np.arange(n) < 3,
        "constant_y": y == np.median(y),
        "empty": np.zeros(n, dtype=bool),
    }
    return xs, y, masks


@pytest.mark.parametrize("y_kind", ["absolute", "continuous"])
def test_correlate_sources_subsets_equals_per_source(y_kind: str) -> None:
    xs, y, masks = sources_and_masks(y_kind)
    shared = assert_same_as_per_source(xs, y, masks, n_resamples=300, seed=17)
    assert shared[4]["full"].spearman.reason.startswith("x is constant")
    assert shared[0]["tiny"].spearman.reason == "fewer than 3 items (n=3)" or (
        shared[0]["tiny"].spearman.r is not None
    )
    assert shared[1]["full"].spearman.n < shared[0]["full"].spearman.n  # the NaN gaps
    for results in shared[:4]:
        assert results["full"].spearman.ci95 is not None
        assert results["full"].pearson.n_resamples_used == 300


def test_correlate_sources_subsets_no_resamples_and_no_sources() -> None:
    xs, y, masks = sources_and_masks("absolute")
    shared = assert_same_as_per_source(xs, y, masks, n_resamples=0, seed=0)
    assert shared[0]["full"].spearman.ci95 is None
    assert metrics.correlate_sources_subsets([], y, masks) == []


def test_correlate_sources_subsets_constant_resamples_dropped() -> None:
    # x = [0, 0, 1], y = [0, 1, 1]: most resamples have a constant column (see above).
    x, y = np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0])
    masks = {"all": np.ones(3, dtype=bool)}
    [shared] = assert_same_as_per_source([x], y, masks, n_resamples=1000, seed=0)
    assert shared["all"].spearman.ci95 is None
    assert 380 < shared["all"].spearman.n_resamples_used < 500


def test_correlate_sources_subsets_does_not_depend_on_chunks_or_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    xs, y, masks = sources_and_masks("absolute")
    monkeypatch.setattr(metrics, "_SHARED_CHUNK_DRAWS", 1_000)  # many chunks, 1 row at n=700
    monkeypatch.setattr(metrics, "BOOTSTRAP_THREADS", 1)
    single = metrics.correlate_sources_subsets(xs, y, masks, n_resamples=150, seed=5)
    monkeypatch.setattr(metrics, "BOOTSTRAP_THREADS", 3)
    threaded = metrics.correlate_sources_subsets(xs, y, masks, n_resamples=150, seed=5)
    monkeypatch.setattr(metrics, "_SHARED_CHUNK_DRAWS", 10**8)  # one chunk per item set
    one_chunk = metrics.correlate_sources_subsets(xs, y, masks, n_resamples=150, seed=5)
    assert single == threaded == one_chunk
    assert_same_as_per_source(xs, y, masks, 150, 5, shared=one_chunk)


def test_correlate_sources_subsets_large_sets_fall_back(monkeypatch: pytest.MonkeyPatch) -> None:
    xs, y, masks = sources_and_masks("continuous")
    monkeypatch.setattr(metrics, "_SHARED_MAX_ITEMS", 100)  # only the small subsets share
    assert_same_as_per_source(xs, y, masks, n_resamples=120, seed=2)


def test_correlate_sources_subsets_many_items() -> None:
    """From ~52,000 items the cross sum is unpacked before summing (int64 range)."""
    rng = np.random.default_rng(6)
    n = 60_000
    quality = rng.normal(size=n)
    y = np.round(quality + rng.normal(size=n), 1)
    xs = [quality + rng.normal(size=n), np.round(quality * 3)]  # all differ / tied
    masks = {"full": np.ones(n, dtype=bool), "half": np.arange(n) % 2 == 0}
    assert_same_as_per_source(xs, y, masks, n_resamples=8, seed=1)


def test_correlate_sources_subsets_progress_and_validation() -> None:
    xs, y, masks = sources_and_masks("absolute")
    calls: list[tuple[int, int]] = []
    metrics.correlate_sources_subsets(
        xs, y, masks, n_resamples=20, progress=lambda done, total: calls.append((done, total))
    )
    total = calls[0][1]
    # full/full_again and the empty/constant subsets coincide per coverage; 3 coverages.
    assert 3 <= total < len(masks) * len(xs)
    assert calls == [(done, total) for done in range(total + 1)]
    with pytest.raises(ValueError, match="bool mask"):
        metrics.correlate_sources_subsets(xs, y, {"indices": np.arange(10)})
    with pytest.raises(ValueError, match="same length"):
        metrics.correlate_sources_subsets([xs[0][:-1]], y, masks)


# Values on a grid, like label means and scores: with y values 1e-246 apart a resample's
# Pearson variance is rounding noise and the two summation orders disagree on it.
GRID_VALUES = st.integers(-24, 24).map(lambda v: v / 8)


@PROPERTY_SETTINGS
@given(
    data=st.lists(
        st.tuples(
            GRID_VALUES | st.just(math.nan),
            GRID_VALUES,
            st.integers(1, 3),
            st.booleans(),
        ),
        max_size=25,
    )
)
def test_correlate_sources_subsets_matches_per_source_property(data: list[tuple]) -> None:
    values = np.array([row[0] for row in data], dtype=float)
    y = np.array([row[1] for row in data], dtype=float)
    ties = np.array([row[2] for row in data], dtype=float)
    xs = [values, ties, -values + ties]
    masks = {
        "all": np.ones(len(data), dtype=bool),
        "some": np.array([row[3] for row in data], dtype=bool),
    }
    assert_same_as_per_source(xs, y, masks, n_resamples=25, seed=3)


# --------------------------------------------------------------------------------------------
# Krippendorff's alpha: properties and a brute-force cross-check
# --------------------------------------------------------------------------------------------


def brute_force_alpha(units: dict[int, list[int]], level: str) -> float | None:
    """Pair-by-pair coincidences and an explicit ordinal sum, straight from Krippendorff 2011."""
    values = sorted({v for unit in units.values() for v in unit})
    coincidence = {(c, k): 0.0 for c in values for k in values}
    for unit in units.values():
        m = len(unit)
        if m < 2:
            continue
        for i, j in itertools.permutations(range(m), 2):
            coincidence[unit[i], unit[j]] += 1 / (m - 1)
    frequency = {c: sum(coincidence[c, k] for k in values) for c in values}
    n = sum(frequency.values())

    def delta2(c: int, k: int) -> float:
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return float((c - k) ** 2)
        low, high = min(c, k), max(c, k)
        between = sum(frequency[g] for g in values if low <= g <= high)
        return (between - (frequency[c] + frequency[k]) / 2) ** 2

    observed = sum(coincidence[c, k] * delta2(c, k) for c in values for k in values) / n
    expected = sum(frequency[c] * frequency[k] * delta2(c, k) for c in values for k in values) / (
        n * (n - 1)
    )
    return None if expected == 0 else 1 - observed / expected


label_tables = st.lists(
    st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=4, max_size=4),
    min_size=2,
    max_size=12,
)


@PROPERTY_SETTINGS
@given(table=label_tables, level=st.sampled_from(["nominal", "ordinal", "interval"]))
def test_krippendorff_matches_brute_force(table: list[list[int | None]], level: str) -> None:
    units: dict[int, list[int]] = {}
    for unit, row in enumerate(table):
        units[unit] = [v for v in row if v is not None]
    expected = None
    if sum(len(u) for u in units.values() if len(u) >= 2) >= 2:
        expected = brute_force_alpha({u: v for u, v in units.items() if len(v) >= 2}, level)
    # table rows are units here, columns coders: transpose for the helper.
    coders_by_units = [list(column) for column in zip(*table, strict=True)]
    item_index, annotator_index, value = reliability_to_arrays(coders_by_units)
    alpha = metrics.krippendorff_alpha(item_index, annotator_index, value, level, range(1, 6))
    if expected is None:
        assert alpha is None
    else:
        assert alpha == pytest.approx(expected, abs=1e-9)


def test_krippendorff_edge_cases() -> None:
    items, coders = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    assert metrics.krippendorff_alpha(items, coders, np.array([2, 2, 4, 4])) == 1.0
    assert metrics.krippendorff_alpha(items, coders, np.array([3, 3, 3, 3])) is None
    assert metrics.krippendorff_alpha(np.array([0, 1]), np.array([0, 0]), np.array([1, 2])) is None
    with pytest.raises(ValueError, match="more than one value"):
        metrics.krippendorff_alpha(np.array([0, 0]), np.array([1, 1]), np.array([1, 2]))
    with pytest.raises(ValueError, match="not in the label set"):
        metrics.krippendorff_alpha(items, coders, np.array([1, 2, 3, 9]), value_domain=range(1, 6))
    with pytest.raises(ValueError, match="non-negative"):
        metrics.krippendorff_alpha(items, coders, np.array([-1, 2, 1, 1]), "ratio")


def test_krippendorff_unobserved_domain_values_change_nothing() -> None:
    case = next(c for c in VECTORS["krippendorff_alpha"] if c["id"] == "wikipedia_3x15")
    item_index, annotator_index, value = reliability_to_arrays(case["reliability_data"])
    for level in ("nominal", "ordinal", "interval"):
        assert metrics.krippendorff_alpha(
            item_index, annotator_index, value, level
        ) == pytest.approx(
            metrics.krippendorff_alpha(item_index, annotator_index, value, level, range(1, 6)),
            abs=1e-12,
        )


# --------------------------------------------------------------------------------------------
# Per annotator and batch agreement
# --------------------------------------------------------------------------------------------


def test_leave_one_out_means_hand_computed() -> None:
    item_index = np.array([0, 0, 0, 1, 2, 2])
    value = np.array([1, 2, 6, 3, 4, 5])
    others = metrics.leave_one_out_means(item_index, value, 3)
    np.testing.assert_allclose(others, [4.0, 3.5, 1.5, np.nan, 5.0, 4.0])


def test_annotator_crowd_agreement() -> None:
    rng = np.random.default_rng(6)
    n_items, n_annotators = 12, 5
    item_index = np.repeat(np.arange(n_items), n_annotators)
    annotator_index = np.tile(np.arange(n_annotators), n_items)
    quality = rng.integers(1, 6, n_items)
    value = np.clip(quality[item_index] + rng.integers(-1, 2, item_index.size), 1, 5)
    value[annotator_index == 3] = 3  # an annotator who always answers 3
    keep = ~((annotator_index == 4) & (item_index >= 2))  # annotator 4 labels only 2 items
    item_index, annotator_index, value = item_index[keep], annotator_index[keep], value[keep]

    result = metrics.annotator_crowd_agreement(
        item_index, annotator_index, value, n_items, n_annotators + 1
    )
    assert result.n_labels.tolist() == [12, 12, 12, 12, 2, 0]
    assert result.n_compared.tolist() == [12, 12, 12, 12, 2, 0]
    for annotator in range(3):
        own = annotator_index == annotator
        others = [np.mean(value[(item_index == item) & ~own]) for item in item_index[own]]
        expected = scipy.stats.spearmanr(value[own], others)
        assert result.crowd_spearman[annotator].r == pytest.approx(expected.statistic, abs=1e-9)
        assert result.crowd_spearman[annotator].p == pytest.approx(expected.pvalue, abs=1e-9)
    assert result.crowd_spearman[3].reason.startswith("x is constant")
    assert result.crowd_spearman[4].reason == "fewer than 3 items (n=2)"
    assert result.crowd_spearman[5].reason == "fewer than 3 items (n=0)"


def test_agreement_summary_is_json_safe() -> None:
    counts = np.array([[6, 7, 4, 5, 3], [0, 0, 25, 0, 0], [0, 0, 0, 0, 0], [10, 5, 3, 4, 3]])
    item_index, annotator_index, value = labels_from_counts(counts, metrics.PAIRWISE_LABELS)
    summary = metrics.agreement_summary(
        item_index, annotator_index, value, metrics.PAIRWISE_LABELS, n_items=4
    )
    assert set(summary) >= {
        "krippendorff_alpha_ordinal",
        "krippendorff_alpha_interval",
        "mean_entropy_bits",
        "mean_grouped_entropy_bits",
        "mean_gini_impurity",
        "mean_pairwise_annotator_disagreement",
        "mean_majority_share",
        "mean_p_disagree",
    }
    json.dumps(summary, allow_nan=False)
    assert summary["mean_p_disagree"] == pytest.approx((0.4 + 0.5 + 0.34) / 3)


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------


@st.composite
def label_batches(draw: st.DrawFn, label_set: np.ndarray = metrics.ABSOLUTE_LABELS) -> tuple:
    """A batch as (item_index, value, n_items): each item gets 0..12 labels."""
    n_items = draw(st.integers(1, 10))
    item_index, value = [], []
    for item in range(n_items):
        labels = draw(st.lists(st.sampled_from(label_set.tolist()), max_size=12))
        item_index.extend([item] * len(labels))
        value.extend(labels)
    return np.array(item_index, dtype=np.int64), np.array(value, dtype=np.int64), n_items


@PROPERTY_SETTINGS
@given(counts=st.lists(st.lists(st.integers(0, 30), min_size=5, max_size=5), min_size=1))
def test_entropy_bounds(counts: list[list[int]]) -> None:
    counts = np.array(counts)
    entropy = metrics.entropy_bits(counts)
    labelled = counts.sum(axis=1) > 0
    assert np.all(entropy[labelled] >= 0) and np.all(entropy[labelled] <= math.log2(5))
    assert np.isnan(entropy[~labelled]).all()
    grouped = metrics.grouped_entropy_bits(counts, metrics.THREE_GROUPS)[labelled]
    assert np.all(grouped >= 0) and np.all(grouped <= math.log2(3))
    assert np.all(grouped <= entropy[labelled] + 1e-12)  # merging labels cannot add entropy


@PROPERTY_SETTINGS
@given(batch=label_batches(), data=st.data())
def test_invariant_to_label_order_and_item_order(batch: tuple, data: st.DataObject) -> None:
    item_index, value, n_items = batch
    labels = metrics.ABSOLUTE_LABELS
    counts = metrics.count_matrix(item_index, value, labels, n_items)
    summary = metrics.item_summary(counts, labels)
    subsets = {
        **metrics.tukey_subsets(summary["mean"]),
        **metrics.top_entropy_subsets(summary["entropy_bits"]),
    }

    shuffle = np.array(data.draw(st.permutations(range(item_index.size))), dtype=np.int64)
    shuffled_counts = metrics.count_matrix(item_index[shuffle], value[shuffle], labels, n_items)
    np.testing.assert_array_equal(shuffled_counts, counts)

    item_perm = np.array(data.draw(st.permutations(range(n_items))), dtype=np.int64)
    # item i becomes item item_perm[i]: new_results[item_perm] == results
    moved = metrics.count_matrix(item_perm[item_index], value, labels, n_items)
    moved_summary = metrics.item_summary(moved, labels)
    for key, array in summary.items():
        np.testing.assert_array_equal(moved_summary[key][item_perm], array)
    moved_subsets = {
        **metrics.tukey_subsets(moved_summary["mean"]),
        **metrics.top_entropy_subsets(moved_summary["entropy_bits"]),
    }
    for name, mask in subsets.items():
        np.testing.assert_array_equal(moved_subsets[name][item_perm], mask)


@PROPERTY_SETTINGS
@given(batch=label_batches(metrics.PAIRWISE_LABELS))
def test_pairwise_disagreement_bounds(batch: tuple) -> None:
    item_index, value, n_items = batch
    counts = metrics.count_matrix(item_index, value, metrics.PAIRWISE_LABELS, n_items)
    result = metrics.pairwise_agreement(counts, metrics.PAIRWISE_LABELS)
    labelled = counts.sum(axis=1) > 0
    p_disagree = result["p_disagree"][labelled]
    assert np.all(p_disagree >= 0) and np.all(p_disagree <= 0.5)
    np.testing.assert_allclose(result["agreement"][labelled] + p_disagree, 1.0, atol=1e-12)
    assert np.isnan(result["p_disagree"][~labelled]).all()
    for name, mask in metrics.most_ties_subsets(result["count_tie"]).items():
        p = int(name.split("_")[2].removesuffix("pct"))
        assert mask.sum() == n_items * p // 100


@PROPERTY_SETTINGS
@given(
    pairs=st.lists(
        st.tuples(st.integers(-3, 3), st.integers(-3, 3) | st.floats(-10, 10)), max_size=30
    )
)
def test_correlations_match_scipy_or_are_null(pairs: list[tuple[int, float]]) -> None:
    x = np.array([p[0] for p in pairs], dtype=float)
    y = np.array([p[1] for p in pairs], dtype=float)
    for ours, theirs in (
        (metrics.spearman(x, y), scipy.stats.spearmanr),
        (metrics.pearson(x, y), scipy.stats.pearsonr),
    ):
        if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
            assert ours.r is None and ours.p is None and ours.reason
            continue
        reference = theirs(x, y)
        assert ours.reason is None
        assert ours.r == pytest.approx(reference.statistic, abs=SCIPY_TOL)
        assert ours.p == pytest.approx(reference.pvalue, abs=SCIPY_TOL)
        assert math.isfinite(ours.r) and math.isfinite(ours.p)


@PROPERTY_SETTINGS
@given(values=st.lists(st.integers(0, 6) | st.floats(-5, 5), max_size=40))
def test_midranks_match_scipy_rankdata(values: list[float]) -> None:
    np.testing.assert_array_equal(metrics.midranks(values), scipy.stats.rankdata(values))


def test_reference_copy_matches_the_shared_file_when_present():
    shared = Path(__file__).resolve().parents[3] / "shared" / "reference" / "stat_vectors.json"
    if not shared.exists():
        pytest.skip(f"no shared reference folder next to the repository ({shared})")
    assert json.loads(shared.read_text()) == VECTORS
