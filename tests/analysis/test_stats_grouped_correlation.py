"""Tests of analysis.stats.grouped_correlation: every group's result is ``spearman``'s.

Plain pytest, no database.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.stats import agreement
from analysis.stats.correlation import CorrelationResult, midranks, spearman
from analysis.stats.grouped_correlation import grouped_midranks, grouped_spearman

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None)
TOL = 1e-12


@st.composite
def column(draw, size: int) -> list[float]:
    """A column of one group: few distinct values (ties), any floats, or a constant."""
    kind = draw(st.sampled_from(["labels", "floats", "constant", "halves"]))
    if kind == "labels":
        return draw(st.lists(st.integers(1, 5).map(float), min_size=size, max_size=size))
    if kind == "halves":  # leave-one-out means of a few labels: many ties, not integers
        return draw(st.lists(st.integers(-8, 8).map(lambda v: v / 4), min_size=size, max_size=size))
    if kind == "constant":
        return [draw(st.floats(-10, 10, allow_nan=False))] * size
    values = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
    return draw(st.lists(values, min_size=size, max_size=size))


@st.composite
def grouped_pairs(draw) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Groups of 0–10 pairs (the small-n rules) and some larger ones, interleaved in a random
    order, plus groups without any pair."""
    sizes = draw(
        st.lists(st.one_of(st.integers(0, 10), st.integers(11, 60)), min_size=0, max_size=8)
    )
    x, y, group = [], [], []
    for g, size in enumerate(sizes):
        x += draw(column(size))
        y += draw(column(size))
        group += [g] * size
    n_groups = len(sizes) + draw(st.integers(0, 2))
    order = draw(st.permutations(range(len(group))))
    return (
        np.array(x, dtype=np.float64)[order],
        np.array(y, dtype=np.float64)[order],
        np.array(group, dtype=np.int64)[order],
        n_groups,
    )


def assert_same_result(got: CorrelationResult, expected: CorrelationResult) -> None:
    assert got.n == expected.n
    assert got.reason == expected.reason
    assert got.p_method == expected.p_method
    assert got.ci95 is None
    for value, reference in ((got.r, expected.r), (got.p, expected.p)):
        if reference is None:
            assert value is None
        else:
            assert isinstance(value, float)
            assert value == pytest.approx(reference, abs=TOL, rel=0)


@PROPERTY_SETTINGS
@given(grouped_pairs())
def test_grouped_spearman_is_spearman_per_group(case) -> None:
    x, y, group, n_groups = case
    results = grouped_spearman(x, y, group, n_groups)
    assert len(results) == n_groups
    for g, result in enumerate(results):
        assert_same_result(result, spearman(x[group == g], y[group == g]))


@PROPERTY_SETTINGS
@given(grouped_pairs())
def test_grouped_midranks_are_midranks_per_group(case) -> None:
    x, _, group, n_groups = case
    ranks = grouped_midranks(x, group, n_groups)
    for g in range(n_groups):
        np.testing.assert_array_equal(ranks[group == g], midranks(x[group == g]))


def test_grouped_spearman_leaves_out_non_finite_pairs() -> None:
    x = np.array([1.0, 2.0, np.nan, 4.0, 3.0, 5.0, 1.0, 2.0, 3.0])
    y = np.array([2.0, 1.0, 3.0, np.inf, 4.0, 6.0, 3.0, 1.0, 2.0])
    group = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1])
    results = grouped_spearman(x, y, group, 2)
    for g in range(2):
        assert_same_result(results[g], spearman(x[group == g], y[group == g]))
    assert results[0].n == 4


def test_grouped_spearman_checks_lengths() -> None:
    with pytest.raises(ValueError, match="same length"):
        grouped_spearman(np.zeros(3), np.zeros(3), np.zeros(2, dtype=np.int64), 1)


def test_annotator_crowd_agreement_is_spearman_per_annotator() -> None:
    """The crowd ρ of every annotator, as ``spearman`` of their labels against the
    leave-one-out means, including annotators in the exact-p range and with too few items."""
    rng = np.random.default_rng(11)
    n_items, n_annotators = 80, 40
    per_annotator = rng.integers(0, 30, n_annotators)
    item_index = np.concatenate([rng.choice(n_items, k, replace=False) for k in per_annotator])
    annotator_index = np.repeat(np.arange(n_annotators), per_annotator)
    value = rng.integers(1, 6, item_index.size)
    result = agreement.annotator_crowd_agreement(
        item_index, annotator_index, value, n_items, n_annotators
    )
    others = agreement.leave_one_out_means(item_index, value, n_items)
    for annotator in range(n_annotators):
        mine = (annotator_index == annotator) & np.isfinite(others)
        expected = spearman(value[mine], others[mine])
        assert_same_result(result.crowd_spearman[annotator], expected)
    assert {r.p_method for r in result.crowd_spearman} >= {None, "exact", "t"}
