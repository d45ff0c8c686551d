"""The bundle statistics (analysis/stats/bundles.py) against values computed another way:
Kendall's W against published examples (Siegel & Castellan's textbook table, and a table
with ties whose corrected W R's DescTools and irr publish), through Friedman's chi-square
(scipy, which corrects for ties the same way: χ²_F = m(n − 1)·W) and a hand-made table;
the two-way decomposition and the ICCs by explicit loops over the cells; idiosyncrasy,
the items it rests on, the position effect and the spread over bundles by plain Python."""

import itertools

import numpy as np
import pytest
from scipy.stats import friedmanchisquare, spearmanr

from analysis.stats.bundles import (
    distribution,
    idiosyncrasy,
    idiosyncrasy_items,
    kendalls_w,
    position_effect,
    two_way_decomposition,
)


def test_kendalls_w_perfect_agreement_none_and_a_hand_made_table():
    assert kendalls_w(np.array([[1, 2, 3, 4]] * 5)) == pytest.approx(1.0)
    # two raters in exactly opposite order: rank sums all equal, W = 0
    assert kendalls_w(np.array([[1, 2, 3], [3, 2, 1]])) == pytest.approx(0.0)
    # 3 raters, 3 items: rank sums 3, 6, 9 (from ranks [1,2,3] x 3) -> S = 18,
    # W = 12 * 18 / (9 * 24) = 1; and one rater swapping the last two: sums 3, 7, 8
    assert kendalls_w(np.array([[1, 2, 3], [1, 2, 3], [1, 3, 2]])) == pytest.approx(
        12 * ((3 - 6) ** 2 + (7 - 6) ** 2 + (8 - 6) ** 2) / (9 * 24)
    )


def test_kendalls_w_against_published_examples():
    """Siegel & Castellan (1988), Nonparametric Statistics for the Behavioral Sciences, 2nd
    ed., §9.4: three judges rank eight factors — W = 0.656 (χ² = 13.778, 7 df; the
    figures as R's DescTools ``KendallW`` reproduces the example). And the ``anxiety``
    ratings of R's irr package (20 subjects, 3 raters, many ties): the tie-corrected
    W = 0.5396569 (χ² = 30.76, 19 df), as DescTools and ``irr::kendall(correct=TRUE)`` give
    it."""
    judges = np.array(
        [
            [5, 6, 7, 1, 2, 4, 3, 8],  # rater 4: airfare, climate, season, people, program,
            [1, 7, 6, 2, 3, 5, 4, 8],  # rater 21:   publicity, present, interest
            [4, 5, 1, 3, 2, 7, 6, 8],  # rater 11
        ]
    )
    assert kendalls_w(judges) == pytest.approx(0.6560847, abs=5e-8)
    assert 3 * 7 * kendalls_w(judges) == pytest.approx(13.778, abs=5e-4)
    anxiety = np.array(
        [
            [3, 3, 3, 4, 5, 5, 2, 3, 5, 2, 2, 6, 1, 5, 2, 2, 1, 2, 4, 3],
            [3, 6, 4, 6, 2, 4, 2, 4, 3, 3, 2, 3, 3, 3, 2, 2, 1, 3, 3, 4],
            [2, 1, 4, 4, 3, 2, 1, 6, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 2, 2],
        ]
    )
    assert kendalls_w(anxiety) == pytest.approx(0.5396569, abs=5e-8)
    assert 3 * 19 * kendalls_w(anxiety) == pytest.approx(30.76, abs=5e-3)


@pytest.mark.parametrize("seed", range(5))
def test_kendalls_w_with_ties_agrees_with_friedman(seed):
    rng = np.random.default_rng(seed)
    table = rng.integers(1, 6, size=(7, 5)).astype(float)  # 1-5 ratings: many ties
    m, n = table.shape
    chi2 = friedmanchisquare(*table.T).statistic
    assert kendalls_w(table) == pytest.approx(chi2 / (m * (n - 1)), rel=1e-12)


def test_kendalls_w_uses_complete_rows_only():
    table = np.array([[1, 2, 3], [1, 2, 3], [3, np.nan, 1]])
    assert kendalls_w(table) == pytest.approx(1.0)


def icc_by_loops(table):
    rows = [row for row in table if not np.isnan(row).any()]
    k, n = len(rows), len(rows[0])
    cells = {(i, j): rows[j][i] for i in range(n) for j in range(k)}
    grand = sum(cells.values()) / (n * k)
    item_means = [sum(cells[(i, j)] for j in range(k)) / k for i in range(n)]
    rater_means = [sum(cells[(i, j)] for i in range(n)) / n for j in range(k)]
    ssr = k * sum((mean - grand) ** 2 for mean in item_means)
    ssc = n * sum((mean - grand) ** 2 for mean in rater_means)
    sse = sum(
        (cells[(i, j)] - item_means[i] - rater_means[j] + grand) ** 2
        for i, j in itertools.product(range(n), range(k))
    )
    msr, msc, mse = ssr / (n - 1), ssc / (k - 1), sse / ((n - 1) * (k - 1))
    icc2 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    icc3 = (msr - mse) / (msr + (k - 1) * mse)
    return msr, msc, mse, icc2, icc3, ssc / (ssr + ssc + sse)


@pytest.mark.parametrize("seed", range(4))
def test_two_way_decomposition_and_iccs_agree_with_explicit_loops(seed):
    rng = np.random.default_rng(seed)
    harshness = rng.normal(0, 1, size=(6, 1))
    quality = rng.normal(0, 1, size=(1, 8))
    table = np.clip(np.round(3 + harshness + quality + rng.normal(0, 0.7, (6, 8))), 1, 5)
    result = two_way_decomposition(table)
    msr, msc, mse, icc2, icc3, share = icc_by_loops(table)
    assert (result.n_items, result.n_participants) == (8, 6)
    assert result.ms_items == pytest.approx(msr, rel=1e-12)
    assert result.ms_participants == pytest.approx(msc, rel=1e-12)
    assert result.ms_residual == pytest.approx(mse, rel=1e-12)
    assert result.icc_2_1 == pytest.approx(icc2, rel=1e-12)
    assert result.icc_3_1 == pytest.approx(icc3, rel=1e-12)
    assert result.participant_share == pytest.approx(share, rel=1e-12)


def test_idiosyncrasy_is_the_leave_one_out_spearman():
    table = np.array(
        [[1, 2, 3, 4, 5], [2, 2, 3, 5, 4], [5, 4, 3, 2, 1], [1, np.nan, 4, 4, 5]], dtype=float
    )
    results = idiosyncrasy(table)
    for index, row in enumerate(table):
        others = np.delete(table, index, axis=0)
        means = [np.nanmean(others[:, column]) for column in range(table.shape[1])]
        usable = [c for c in range(5) if not np.isnan(row[c])]
        expected = spearmanr([row[c] for c in usable], [means[c] for c in usable]).statistic
        assert results[index] == pytest.approx(expected, rel=1e-12)
    assert results[2] < 0  # the one who ranks the other way round


def test_idiosyncrasy_items_counts_the_items_shared_with_someone_else():
    table = np.array(
        [[1, 2, 3, np.nan], [2, np.nan, 3, np.nan], [np.nan, np.nan, 1, 5]], dtype=float
    )
    # the first shares items 1 and 3 with the second, 3 with the third; nobody else
    # labelled item 4, so it is nobody's
    assert idiosyncrasy_items(table) == [2, 2, 1]
    assert idiosyncrasy(table) == [None, None, None]


def test_distribution_over_the_defined_values():
    values = [0.2, None, 0.9, float("nan"), 0.5, 0.4]
    spread = distribution(values)
    finite = sorted([0.2, 0.9, 0.5, 0.4])
    assert spread.n == 4 and spread.mean == pytest.approx(sum(finite) / 4)
    assert spread.median == pytest.approx((0.4 + 0.5) / 2)
    # linear interpolation between order statistics: position (n − 1)·q
    assert spread.q1 == pytest.approx(0.2 + 0.75 * (0.4 - 0.2))
    assert spread.q3 == pytest.approx(0.5 + 0.25 * (0.9 - 0.5))
    assert (spread.low, spread.high) == (0.2, 0.9)
    assert distribution([None, float("nan")]) is None


def test_position_effect_means_rho_and_a_permutation_p_value():
    rng = np.random.default_rng(3)
    groups = np.repeat(np.arange(20), 5)
    positions = np.tile(np.arange(5), 20)
    drifting = np.clip(np.round(2 + 0.5 * positions + rng.normal(0, 0.5, 100)), 1, 5)
    effect = position_effect(drifting, positions, groups, permutations=200, seed=1)
    assert effect.positions == [0, 1, 2, 3, 4] and effect.n_labels == [20] * 5
    for place in range(5):
        assert effect.mean_label[place] == pytest.approx(drifting[positions == place].mean())
    assert effect.spearman_rho == pytest.approx(spearmanr(drifting, positions).statistic)
    assert effect.permutation_p < 0.01
    flat = rng.integers(1, 6, 100).astype(float)
    null = position_effect(flat, positions, groups, permutations=200, seed=1)
    assert null.permutation_p > 0.05
