"""Calibration to the human distribution: each measure against values worked out by hand."""

import math

import numpy as np
import pytest
from scipy import stats

from analysis.stats.calibration import (
    calibration_figures,
    cross_entropy,
    earth_movers_distance,
    expected_calibration_error,
    jensen_shannon_bits,
    manhattan,
    spread_tracking,
)


def test_jensen_shannon_in_bits():
    assert jensen_shannon_bits([1, 0], [0, 1])[0] == pytest.approx(1.0)
    assert jensen_shannon_bits([0.3, 0.7], [0.3, 0.7])[0] == pytest.approx(0.0)
    # h = (1/2, 1/2), q = (1, 0): m = (3/4, 1/4)
    kl_h = 0.5 * math.log2(0.5 / 0.75) + 0.5 * math.log2(0.5 / 0.25)
    kl_q = 1.0 * math.log2(1 / 0.75)
    assert jensen_shannon_bits([0.5, 0.5], [1, 0])[0] == pytest.approx(0.5 * kl_h + 0.5 * kl_q)
    assert 0.5 * kl_h + 0.5 * kl_q == pytest.approx(0.311278, abs=1e-6)


def test_earth_movers_distance_on_the_ordinal_scale():
    assert earth_movers_distance([1, 0, 0, 0, 0], [0, 0, 0, 0, 1])[0] == pytest.approx(4)
    # half at 1 and half at 3 against all at 2: each half moves one step
    assert earth_movers_distance([0.5, 0, 0.5, 0, 0], [0, 1, 0, 0, 0])[0] == pytest.approx(1)
    # a quarter moves two steps
    assert earth_movers_distance([0.75, 0, 0.25], [1, 0, 0])[0] == pytest.approx(0.5)


def test_manhattan_and_cross_entropy_between_soft_labels():
    assert manhattan([0.5, 0.5, 0], [0, 0.5, 0.5])[0] == pytest.approx(1.0)
    expected = -(0.5 * math.log(0.25) + 0.5 * math.log(0.75))
    assert cross_entropy([0.5, 0.5], [0.25, 0.75])[0] == pytest.approx(expected)
    assert expected == pytest.approx(0.836988, abs=1e-6)
    # a zero the humans did not avoid costs -ln(1e-12), not infinity
    assert cross_entropy([0.5, 0.5], [1.0, 0.0])[0] == pytest.approx(-0.5 * math.log(1e-12))


def test_expected_calibration_error_of_the_modal_choice():
    human = np.array(
        [
            [0, 0, 1, 0, 0],  # majority 3
            [0, 0, 1, 0, 0],
            [0.5, 0.5, 0, 0, 0],  # majorities 1 and 2
            [0, 0, 0, 0, 1],
        ]
    )
    source = np.array(
        [
            [0, 0, 0.95, 0.05, 0],  # chooses 3 at 0.95: right
            [0.95, 0, 0.05, 0, 0],  # chooses 1 at 0.95: wrong
            [0, 0.55, 0.45, 0, 0],  # chooses 2 at 0.55: one of the two majorities
            [0.2, 0.2, 0.1, 0.15, 0.35],  # chooses 5 at 0.35: right
        ]
    )
    # bin [0.9, 1): accuracy 1/2, confidence 0.95, 2 of 4 items; [0.5, 0.6): 1 vs 0.55;
    # [0.3, 0.4): 1 vs 0.35
    expected = 2 / 4 * abs(0.5 - 0.95) + 1 / 4 * abs(1 - 0.55) + 1 / 4 * abs(1 - 0.35)
    assert expected_calibration_error(human, source)[0] == pytest.approx(expected)
    assert expected == pytest.approx(0.5)
    # weights as a resample's draw counts: the same as repeating the items
    weights = np.array([[2, 0, 1, 1]])
    repeated = expected_calibration_error(human[[0, 0, 2, 3]], source[[0, 0, 2, 3]])[0]
    assert expected_calibration_error(human, source, weights=weights)[0] == pytest.approx(repeated)


def test_calibration_figures_average_with_item_intervals_and_follow_entropy():
    rng = np.random.default_rng(0)
    n = 200
    human = rng.dirichlet(np.ones(5) * 0.7, size=n)
    source = rng.dirichlet(np.ones(5), size=n)
    entropy = -(np.where(human > 0, human * np.log2(human), 0)).sum(axis=1)
    figures = calibration_figures(human, source, entropy, n_resamples=300, seed=1)
    assert figures.n == n
    assert figures.jsd.mean == pytest.approx(jensen_shannon_bits(human, source).mean())
    assert figures.manhattan.mean == pytest.approx(manhattan(human, source).mean())
    for measure in (
        figures.jsd,
        figures.emd,
        figures.manhattan,
        figures.cross_entropy,
        figures.ece,
    ):
        low, high = measure.ci95
        assert low <= measure.mean <= high
    expected = stats.spearmanr(jensen_shannon_bits(human, source), entropy).statistic
    assert figures.entropy_spearman.r == pytest.approx(expected)
    assert sum(count for _, _, count, _ in figures.entropy_bins) == n
    assert figures.entropy_bins[-1][1] == pytest.approx(math.log2(5))


def test_spread_tracking_ranks_distance_from_the_mean_against_human_spread():
    scores = np.array([0.0, 1.0, 2.0, 3.0, 4.0, np.nan])
    human_std = np.array([0.1, 0.5, 0.9, 0.4, 0.2, 1.0])
    # |score - 2| = 2, 1, 0, 1, 2 against std 0.1, 0.5, 0.9, 0.4, 0.2
    result = spread_tracking(scores, human_std)
    expected = stats.spearmanr([2, 1, 0, 1, 2], [0.1, 0.5, 0.9, 0.4, 0.2]).statistic
    assert result.n == 5 and result.r == pytest.approx(expected)
    assert result.r < -0.8  # extreme scores where people agree: spread tracked
