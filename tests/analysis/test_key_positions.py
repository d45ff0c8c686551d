"""analysis.key_positions: the table over a compact key range answers as numpy's sort-based
search and ``np.unique`` do, and keys over a wide range take that way."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis import key_positions
from analysis.key_positions import positions_of, unique_keys

keys_lists = st.lists(st.integers(min_value=0, max_value=60), min_size=1, max_size=300)
offsets = st.sampled_from([0, 1, 10**6, 2**40])
spreads = st.sampled_from([1, 3, 10**5])  # the last one makes the range wide


def as_keys(values, offset, spread):
    return np.array(values, dtype=np.int64) * spread + offset


@settings(max_examples=200, deadline=None)
@given(keys_lists, offsets, spreads)
def test_unique_keys_is_numpys_unique(values, offset, spread):
    keys = as_keys(values, offset, spread)
    expected = np.unique(keys, return_index=True, return_inverse=True)
    for mine, theirs in zip(unique_keys(keys), expected, strict=True):
        assert np.array_equal(mine, theirs)


@settings(max_examples=200, deadline=None)
@given(keys_lists, keys_lists, offsets, spreads, st.randoms(use_true_random=False))
def test_positions_of_finds_each_key_and_minus_one_for_the_others(
    values, looked_up, offset, spread, rng
):
    distinct = sorted(set(values))
    rng.shuffle(distinct)  # positions are in any order, not sorted by key
    keys_by_position = as_keys(distinct, offset, spread)
    # keys among them and not, below, inside and above their range
    keys = np.concatenate([as_keys(looked_up, offset, spread), keys_by_position[:3] - 1])
    positions = positions_of(keys_by_position, keys)
    expected = [distinct.index(v) if v in distinct else -1 for v in (keys - offset) / spread]
    assert positions.tolist() == expected


def test_both_ways_are_taken(monkeypatch):
    keys = np.array([5, 9, 5, 7], dtype=np.int64)
    compact = unique_keys(keys)
    monkeypatch.setattr(key_positions, "DENSE_SLACK", 0)
    monkeypatch.setattr(key_positions, "DENSE_RANGE", 0)  # every range is too wide now
    assert key_positions._is_compact(keys, keys.size)[0] is False
    for mine, theirs in zip(unique_keys(keys), compact, strict=True):
        assert np.array_equal(mine, theirs)
    assert positions_of(np.array([9, 5, 7]), keys).tolist() == [1, 0, 1, 2]
    assert positions_of(np.array([9, 5]), np.array([4, 7, 10])).tolist() == [-1, -1, -1]


def test_no_keys():
    assert positions_of(np.array([3, 4]), np.array([], dtype=np.int64)).size == 0
    assert positions_of(np.array([], dtype=np.int64), np.array([3])).tolist() == [-1]
    distinct, first, inverse = unique_keys(np.array([], dtype=np.int64))
    assert distinct.size == first.size == inverse.size == 0
