"""Position bias, test–retest agreement and the group breakdown, checked against plain
computations written here (loops, fractions, scipy's binomial test)."""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis import stats
from analysis.stats.consistency import A_FIRST, B_FIRST

PAIRWISE = np.arange(-2, 3)
ABSOLUTE = np.arange(1, 6)


def test_position_bias_by_hand():
    # annotator 0: A first & +2 (first), B first & -1 (first), A first & 0 (tie), B first & +1
    # annotator 1: A first & -2 (second), B first & -2 (first)
    order = np.array([A_FIRST, B_FIRST, A_FIRST, B_FIRST, A_FIRST, B_FIRST])
    value = np.array([2, -1, 0, 1, -2, -2])
    annotator = np.array([0, 0, 0, 0, 1, 1])
    bias = stats.position_bias(order, value, annotator, 2)
    assert bias.n_choices == 5
    assert bias.first_share == pytest.approx(3 / 5)
    assert bias.p_value == pytest.approx(scipy.stats.binomtest(3, 5, 0.5).pvalue)
    assert bias.mean_value_a_first == pytest.approx((2 + 0 - 2) / 3)
    assert bias.mean_value_b_first == pytest.approx((-1 + 1 - 2) / 3)
    assert (bias.n_a_first, bias.n_b_first) == (3, 3)
    first, second = bias.annotators
    assert (first.n_choices, first.first_share) == (3, pytest.approx(2 / 3))
    assert (second.n_choices, second.first_share) == (2, pytest.approx(1 / 2))


def test_labels_without_an_order_and_no_choices():
    bias = stats.position_bias(np.array([0, 0]), np.array([1, -1]), np.array([0, 0]), 1)
    assert bias.n_choices == 0 and bias.first_share is None and bias.p_value is None
    ties = stats.position_bias(np.array([A_FIRST]), np.array([0]), np.array([0]), 1)
    assert ties.n_choices == 0 and ties.mean_value_a_first == 0.0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([A_FIRST, B_FIRST]), st.integers(-2, 2), st.integers(0, 3)),
        min_size=1,
        max_size=40,
    )
)
def test_position_bias_matches_a_loop(labels):
    order = np.array([row[0] for row in labels])
    value = np.array([row[1] for row in labels])
    annotator = np.array([row[2] for row in labels])
    bias = stats.position_bias(order, value, annotator, 4)
    firsts = [(o == A_FIRST and v > 0) or (o == B_FIRST and v < 0) for o, v, _ in labels if v]
    assert bias.n_choices == len(firsts)
    if firsts:
        assert bias.first_share == pytest.approx(sum(firsts) / len(firsts))
    for entry in bias.annotators:
        mine = [
            (o == A_FIRST and v > 0) or (o == B_FIRST and v < 0)
            for o, v, a in labels
            if v and a == entry.annotator
        ]
        assert entry.n_choices == len(mine)
        if mine:
            assert entry.first_share == pytest.approx(sum(mine) / len(mine))
            expected = scipy.stats.binomtest(sum(mine), len(mine), 0.5).pvalue
            assert entry.p_value == pytest.approx(expected)


def test_retest_agreement_by_hand():
    result = stats.retest_agreement(np.array([2, 1, 0, -1]), np.array([2, -1, 0, -2]), signed=True)
    assert result.n_pairs == 4
    assert result.exact_share == pytest.approx(2 / 4)
    assert result.mean_abs_difference == pytest.approx((0 + 2 + 0 + 1) / 4)
    assert result.sign_agreement == pytest.approx(3 / 4)  # 1 vs -1 changes side
    absolute = stats.retest_agreement(np.array([5, 3]), np.array([4, 3]), signed=False)
    assert absolute.sign_agreement is None and absolute.exact_share == 0.5
    assert stats.retest_agreement(np.array([]), np.array([]), signed=True).exact_share is None


def entropy(values):
    counts = [values.count(v) for v in set(values)]
    n = len(values)
    return -sum(Fraction(c, n) * math.log2(c / n) for c in counts) if n else 0.0


def test_group_breakdown_by_hand():
    # items 0,1; annotators 0,1 (group "yes"), 2,3 (group "no"), 4 (no answer)
    item = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1])
    annotator = np.array([0, 1, 2, 3, 4, 0, 1, 2, 3])
    value = np.array([5, 5, 1, 2, 3, 4, 4, 4, 4])
    groups = ["yes", "yes", "no", "no", None]
    figures, overall = stats.group_breakdown(
        item, annotator, value, ABSOLUTE, 2, groups, min_annotators=2
    )
    by = {entry.group: entry for entry in figures}
    assert by["yes"].n_annotators == 2 and by["yes"].n_labels == 4
    assert by["yes"].mean_value == pytest.approx((5 + 5 + 4 + 4) / 4)
    assert by["yes"].mean_entropy_within == pytest.approx(0.0)  # they always agree
    assert by["no"].mean_entropy_within == pytest.approx((entropy([1, 2]) + 0) / 2)
    everyone = (entropy([5, 5, 1, 2, 3]) + entropy([4, 4, 4, 4])) / 2
    assert overall == pytest.approx(float(everyone))


def test_small_groups_are_suppressed():
    figures, _ = stats.group_breakdown(
        np.array([0, 0]), np.array([0, 1]), np.array([1, 2]), ABSOLUTE, 1, ["a", "b"],
        min_annotators=2,
    )  # fmt: skip
    assert all(entry.suppressed and entry.mean_value is None for entry in figures)
    assert [entry.n_annotators for entry in figures] == [1, 1]
