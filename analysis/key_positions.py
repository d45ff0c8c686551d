"""Database keys → positions in arrays, for hundreds of thousands of keys at a time.

A batch's items and annotators mostly have keys close together (rows made together get
consecutive ids), so a table over the key range answers each key with one lookup where
a sort-based search needs a binary search per key, or a sort of all of them: some twenty
times faster on a large batch. Keys spread over a wide range (a batch among millions of
rows) take the sort-based way, with the same result.
"""

import numpy as np

__all__ = ["positions_of", "unique_keys"]

# A table is used when the key range is at most this many times the number of keys
# (its memory: 8 bytes per key of the range for positions, 1 for presence).
DENSE_RANGE = 8
DENSE_SLACK = 4096  # and for small arrays, whatever their range up to this


def _is_compact(keys: np.ndarray, count: int) -> tuple[bool, int, int]:
    low, high = int(keys.min()), int(keys.max())
    return high - low < DENSE_RANGE * count + DENSE_SLACK, low, high


def positions_of(keys_by_position: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The position of each of ``keys`` in ``keys_by_position`` (distinct keys, in any
    order), -1 for a key that is not there."""
    keys = np.asarray(keys, dtype=np.int64)
    keys_by_position = np.asarray(keys_by_position, dtype=np.int64)
    if keys_by_position.size == 0 or keys.size == 0:
        return np.full(keys.size, -1, dtype=np.int64)
    # the table's size follows the keys looked up in it, not the keys looked up
    compact, low, high = _is_compact(keys_by_position, keys_by_position.size)
    if compact:
        table = np.full(high - low + 1, -1, dtype=np.int64)
        table[keys_by_position - low] = np.arange(keys_by_position.size)
        inside = (keys >= low) & (keys <= high)
        positions = np.full(keys.size, -1, dtype=np.int64)
        positions[inside] = table[keys[inside] - low]
        return positions
    order = np.argsort(keys_by_position, kind="stable")
    ordered = keys_by_position[order]
    found = np.minimum(np.searchsorted(ordered, keys), ordered.size - 1)
    return np.where(ordered[found] == keys, order[found], -1)


def unique_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What ``np.unique(keys, return_index=True, return_inverse=True)`` gives: the distinct
    keys ascending, the first position of each in ``keys``, and each key's index among
    the distinct ones."""
    keys = np.asarray(keys, dtype=np.int64)
    if keys.size == 0:
        return np.unique(keys, return_index=True, return_inverse=True)
    compact, low, high = _is_compact(keys, keys.size)
    if not compact:
        return np.unique(keys, return_index=True, return_inverse=True)
    present = np.zeros(high - low + 1, dtype=bool)
    present[keys - low] = True
    distinct = np.flatnonzero(present) + low
    inverse = (np.cumsum(present) - 1)[keys - low]
    first = np.full(distinct.size, keys.size, dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(keys.size))
    return distinct, first, inverse
