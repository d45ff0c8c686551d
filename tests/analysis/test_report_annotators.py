"""Tests of analysis.report_annotators' per-annotator median, against ``np.nanmedian``.

Plain pytest, no database.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.report_annotators import _median_by_group
from analysis.stats.grouped_correlation import order_within_groups

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None)

durations = st.one_of(
    st.just(np.nan),
    st.integers(0, 20).map(float),  # ties
    st.floats(0, 1e7, allow_nan=False),
    st.floats(-1e300, 1e300, allow_nan=False),
)


@st.composite
def grouped_values(draw) -> tuple[np.ndarray, np.ndarray, int]:
    """Groups of 0–12 values (some NaN, many ties), in a random order, and some groups
    without values."""
    n_groups = draw(st.integers(1, 8))
    group = draw(st.lists(st.integers(0, n_groups - 1), max_size=80))
    values = draw(st.lists(durations, min_size=len(group), max_size=len(group)))
    return np.array(group, dtype=np.int64), np.array(values, dtype=np.float64), n_groups


@PROPERTY_SETTINGS
@given(grouped_values())
def test_median_by_group_is_nanmedian_per_group(case) -> None:
    group, values, n_groups = case
    expected = np.full(n_groups, np.nan)
    for g in range(n_groups):
        mine = values[group == g]
        if np.isfinite(mine).any():
            expected[g] = np.nanmedian(mine)
    np.testing.assert_array_equal(_median_by_group(group, values, n_groups), expected)


@PROPERTY_SETTINGS
@given(grouped_values())
def test_order_within_groups_sorts_by_group_then_value(case) -> None:
    group, values, n_groups = case
    order = order_within_groups(values, group, n_groups)
    assert sorted(order.tolist()) == list(range(group.size))
    expected = np.lexsort((values, group))
    np.testing.assert_array_equal(group[order], group[expected])
    np.testing.assert_array_equal(values[order], values[expected])
