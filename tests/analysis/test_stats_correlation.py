"""Tests of analysis.stats.correlation: reference vectors, scipy, undefined correlations.

Plain pytest, no database.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.reports import correlation_figures
from analysis.stats import correlate_sources_subsets, correlation
from tests.analysis.oracles import VECTOR_TOL, VECTORS, vector_params

SCIPY_TOL = 1e-9
PROPERTY_SETTINGS = settings(max_examples=60, deadline=None)


def _rowwise_spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    rx, ry = scipy.stats.rankdata(x, axis=-1), scipy.stats.rankdata(y, axis=-1)
    return _rowwise_pearson(rx, ry)


def _rowwise_pearson(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.mean(axis=-1, keepdims=True)
    y = y - y.mean(axis=-1, keepdims=True)
    return (x * y).sum(axis=-1) / np.sqrt((x * x).sum(axis=-1) * (y * y).sum(axis=-1))


def brute_force_permutation_p(x, y, statistic) -> float:
    """Two-sided p over every pairing, as scipy.stats.permutation_test defines it: twice the
    smaller tail, at most 1 (the statistic of each pairing computed afresh)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    pairings = np.array(list(itertools.permutations(range(x.size))))
    null = statistic(np.broadcast_to(x, pairings.shape), y[pairings])
    observed = statistic(x, y)
    tolerance = 1e-9
    below = np.mean(null <= observed + tolerance)
    above = np.mean(null >= observed - tolerance)
    return min(1.0, 2 * min(below, above))


def expected_p(x, y, statistic, scipy_p: float) -> float | None:
    """The p-value ANALYSIS.md defines: none under the minimum, exact over all pairings up to
    the exact limit, scipy's own beyond."""
    n = len(x)
    if n < correlation.MIN_P_VALUE_PAIRS:
        return None
    if n <= correlation.EXACT_P_MAX_PAIRS:
        return brute_force_permutation_p(x, y, statistic)
    return scipy_p


@pytest.mark.parametrize("case", vector_params("correlation"))
def test_correlation_reference(case: dict) -> None:
    x, y, expected = case["x"], case["y"], case["expected"]
    rho = correlation.spearman(x, y)
    r = correlation.pearson(x, y)
    assert rho.reason is None and r.reason is None
    assert rho.n == r.n == len(x)
    assert rho.r == pytest.approx(expected["spearman_rho"], abs=VECTOR_TOL)
    assert r.r == pytest.approx(expected["pearson_r"], abs=VECTOR_TOL)
    exact = len(x) <= correlation.EXACT_P_MAX_PAIRS
    if not exact:  # the published p-values are the approximations
        assert rho.p == pytest.approx(expected["spearman_p_two_sided_t_approx"], abs=VECTOR_TOL)
        assert r.p == pytest.approx(expected["pearson_p_two_sided"], abs=VECTOR_TOL)
    assert (rho.p_method, r.p_method) == (("exact", "exact") if exact else ("t", "beta"))

    scipy_rho = scipy.stats.spearmanr(x, y)
    scipy_r = scipy.stats.pearsonr(x, y)
    assert rho.r == pytest.approx(scipy_rho.statistic, abs=SCIPY_TOL)
    assert rho.p == pytest.approx(
        expected_p(x, y, _rowwise_spearman, scipy_rho.pvalue), abs=SCIPY_TOL
    )
    assert r.r == pytest.approx(scipy_r.statistic, abs=SCIPY_TOL)
    assert r.p == pytest.approx(expected_p(x, y, _rowwise_pearson, scipy_r.pvalue), abs=SCIPY_TOL)

    published = case.get("published", {})
    checked = [("spearman_rho", rho.r), ("pearson_r", r.r)]
    if not exact:
        checked += [("spearman_p", rho.p), ("pearson_p", r.p)]
    for key, attribute in checked:
        if key in published:
            assert attribute == pytest.approx(published[key], abs=VECTOR_TOL)
    if case["has_ties"]:
        # Mid-ranks, not the 1 - 6 sum d^2 shortcut.
        assert abs(rho.r - case["naive_1_minus_6sumd2_formula_WRONG_if_ties"]) > 1e-3


def test_spearman_scipy_doc_exact_value() -> None:
    case = next(c for c in VECTORS["correlation"] if c["id"] == "scipy_doc_ties")
    assert correlation.spearman(case["x"], case["y"]).r == pytest.approx(
        8 / math.sqrt(95), abs=1e-12
    )


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
    [bootstrapped] = correlate_sources_subsets(
        [np.array(x)], np.array(y), {"all": np.ones(len(x), dtype=bool)}, n_resamples=50
    )
    for result in (
        correlation.spearman(x, y),
        correlation.pearson(x, y),
        *bootstrapped["all"],
    ):
        assert (result.r, result.p, result.ci95) == (None, None, None)
        assert result.reason == reason
        assert correlation_figures(result) is None


def test_non_finite_pairs_are_left_out() -> None:
    x = np.array([1.0, 2.0, np.nan, 4.0, 5.0, 3.0])
    y = np.array([2.0, 1.0, 7.0, 4.0, 3.0, np.nan])
    result = correlation.spearman(x, y)
    assert result.n == 4
    assert result.r == pytest.approx(scipy.stats.spearmanr([1, 2, 4, 5], [2, 1, 4, 3]).statistic)


def test_perfect_rank_correlation_matches_scipy_exactly() -> None:
    assert correlation.spearman([1, 2, 3], [10, 20, 30]).r == 1.0
    values = np.arange(1.0, 11.0)  # beyond the exact limit: scipy's p as well
    reference = scipy.stats.spearmanr(values, 10 * values)
    result = correlation.spearman(values, 10 * values)
    assert (result.r, result.p) == (reference.statistic, reference.pvalue)
    assert correlation.pearson([1, 2, 3, 4, 5], [2, 4, 6, 8, 10]).r == 1.0


@pytest.mark.parametrize("n", [3, 4])
def test_a_handful_of_points_has_no_p_value(n: int) -> None:
    """ρ = −1 from 4 points is not "p < 0.001": under the minimum there is no p at all."""
    x = np.arange(float(n))
    for result in (correlation.spearman(x, -x), correlation.pearson(x, -x)):
        assert result.r == pytest.approx(-1.0)
        assert (result.p, result.p_method) == (None, None)
    assert scipy.stats.spearmanr(x, -x).pvalue < 0.001  # what the approximation would say


@pytest.mark.parametrize("n", [5, 6, 7, 8])
def test_a_perfect_correlation_of_few_points_has_the_exact_p(n: int) -> None:
    # 2 of the n! pairings are as extreme as a perfect ranking (it and its reverse)
    x = np.arange(float(n))
    result = correlation.spearman(x, -x)
    assert result.p_method == "exact"
    assert result.p == pytest.approx(2 / math.factorial(n), rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_the_exact_p_is_scipys_permutation_test(seed: int) -> None:
    """Ties included: the same p as ``scipy.stats.permutation_test`` over all pairings."""
    rng = np.random.default_rng(seed)
    n = 5 + seed % 2  # scipy enumerates pairings slowly beyond 6
    x = rng.integers(1, 4, n).astype(float)
    y = rng.integers(1, 6, n).astype(float) + rng.integers(0, 2, n) * 0.5
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        x[0], y[0] = x.max() + 1, y.max() + 1
    for ours, statistic in (
        (correlation.spearman(x, y), _rowwise_spearman),
        (correlation.pearson(x, y), _rowwise_pearson),
    ):
        reference = scipy.stats.permutation_test(
            (x, y),
            statistic,
            permutation_type="pairings",
            n_resamples=np.inf,
            vectorized=True,
        )
        assert ours.p == pytest.approx(reference.pvalue, abs=SCIPY_TOL)


# Subnormal scores (below 2.2e-308) are left out: no score is one, and there scipy's own
# answer is float underflow (x = 0, 0, 1 against y = 0, 0, 2e-311 gives 5.5e-08, not 1).
SCORES = st.floats(-10, 10, allow_subnormal=False)


@PROPERTY_SETTINGS
@given(pairs=st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3) | SCORES), max_size=30))
def test_correlations_match_scipy_or_are_null(pairs: list[tuple[int, float]]) -> None:
    x = np.array([p[0] for p in pairs], dtype=float)
    y = np.array([p[1] for p in pairs], dtype=float)
    for ours, theirs in (
        (correlation.spearman(x, y), scipy.stats.spearmanr),
        (correlation.pearson(x, y), scipy.stats.pearsonr),
    ):
        if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
            assert ours.r is None and ours.p is None and ours.reason
            continue
        reference = theirs(x, y)
        assert ours.reason is None
        assert ours.r == pytest.approx(reference.statistic, abs=SCIPY_TOL)
        assert math.isfinite(ours.r)
        if len(x) < correlation.MIN_P_VALUE_PAIRS:
            assert ours.p is None
        elif len(x) > correlation.EXACT_P_MAX_PAIRS:  # small n: the tests above
            assert ours.p == pytest.approx(reference.pvalue, abs=SCIPY_TOL)
        else:
            assert 0 < ours.p <= 1


@PROPERTY_SETTINGS
@given(values=st.lists(st.integers(0, 6) | st.floats(-5, 5), max_size=40))
def test_midranks_match_scipy_rankdata(values: list[float]) -> None:
    np.testing.assert_array_equal(correlation.midranks(values), scipy.stats.rankdata(values))


@PROPERTY_SETTINGS
@given(pairs=st.lists(st.tuples(st.integers(-3, 3), st.floats(-10, 10)), min_size=3, max_size=30))
def test_point_correlations_equal_spearman_and_pearson(pairs: list[tuple[int, float]]) -> None:
    """The bootstrap's point estimates are bit-identical to spearman() / pearson()."""
    x = np.array([p[0] for p in pairs], dtype=float)
    y = np.array([p[1] for p in pairs], dtype=float)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return
    point = correlation.point_correlations(
        correlation.prepare_column(x, correlation.group_by_value(x).item_group),
        correlation.prepare_column(y, correlation.group_by_value(y).item_group),
    )
    assert point == (correlation.spearman(x, y), correlation.pearson(x, y))
