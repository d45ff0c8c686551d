"""The bundle statistics (analysis/stats/bundles.py) against values computed another way:
Kendall's W through Friedman's chi-square (scipy, which corrects for ties the same way:
χ²_F = m(n − 1)·W) and a hand-made table; the two-way decomposition and the ICCs by
explicit loops over the cells; idiosyncrasy and the position effect by plain Python."""

import itertools

import numpy as np
import pytest
from scipy.stats import friedmanchisquare, spearmanr

from analysis.stats.bundles import (
    idiosyncrasy,
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
