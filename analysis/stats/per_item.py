"""Per-item statistics of a batch's counted labels (ANALYSIS.md, "Per item").

A batch's counted labels arrive as parallel 1-D integer arrays, one entry per label:
``item_index`` (``0 .. n_items - 1``), ``annotator_index`` and ``value`` (absolute ``1..5``;
pairwise ``-2..2``, ``+2`` = A much better). :func:`count_matrix` turns them into an
``(n_items, k)`` count matrix whose columns follow the fixed, ordered ``label_set``; every
other function here takes that matrix and returns one value per item, in item order,
vectorised over all items. Items without labels (``n == 0``) give ``NaN``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "ABSOLUTE_LABELS",
    "PAIRWISE_LABELS",
    "THREE_GROUPS",
    "count_matrix",
    "entropy_bits",
    "gini_impurity",
    "grouped_entropy_bits",
    "item_summary",
    "label_columns",
    "majority_share",
    "pairwise_agreement",
    "pairwise_annotator_disagreement",
]

ABSOLUTE_LABELS = np.arange(1, 6)
PAIRWISE_LABELS = np.arange(-2, 3)

#: Group id per label column for the 3-group entropy, for both fixed label sets in ascending
#: order: absolute 1-2 / 3 / 4-5 (low / mid / high); pairwise -2,-1 / 0 / +1,+2 (B / tie / A).
THREE_GROUPS = np.array([0, 0, 1, 2, 2])


def label_columns(value: np.ndarray, label_set: np.ndarray) -> np.ndarray:
    """Column of each value in ``label_set``; ``ValueError`` for a value outside it."""
    sorter = np.argsort(label_set, kind="stable")
    position = np.searchsorted(label_set, value, sorter=sorter)
    position = np.minimum(position, len(label_set) - 1)
    column = sorter[position]
    unknown = label_set[column] != value
    if np.any(unknown):
        bad = np.unique(value[unknown])[:5].tolist()
        raise ValueError(f"label values {bad} are not in the label set {label_set.tolist()}")
    return column


def count_matrix(
    item_index: np.ndarray, value: np.ndarray, label_set: np.ndarray, n_items: int
) -> np.ndarray:
    """Count each label value per item over the fixed label set.

    ``counts[i, j]`` = number of labels of item ``i`` equal to ``label_set[j]``; zeros are
    included so every item has the same ``k = len(label_set)`` columns (ANALYSIS.md, "Per
    item"). One ``np.bincount`` over ``item * k + column``.

    Returns an ``(n_items, k)`` int64 array. Raises ``ValueError`` if a value is not in
    ``label_set`` or an item index is out of range.
    """
    item_index = np.asarray(item_index, dtype=np.int64).ravel()
    value = np.asarray(value).ravel()
    label_set = np.asarray(label_set).ravel()
    if item_index.shape != value.shape:
        raise ValueError("item_index and value must have the same length")
    if item_index.size and (item_index.min() < 0 or item_index.max() >= n_items):
        raise ValueError(f"item_index must lie in 0..{n_items - 1}")
    k = len(label_set)
    column = label_columns(value, label_set)
    flat = np.bincount(item_index * k + column, minlength=n_items * k)
    return flat.reshape(n_items, k)


def entropy_bits(counts: np.ndarray) -> np.ndarray:
    """Shannon entropy in bits of each row of a count matrix.

    ``H = -sum_j p_j log2 p_j`` with ``p_j = counts_j / n`` and ``0 log 0 = 0`` (Shannon 1948;
    ANALYSIS.md ``entropy_bits``), over the columns given, i.e. over the fixed label set.
    Terms are summed in ascending order of count, so items with the same multiset of counts
    get bit-identical entropies (ties at a percentile threshold stay ties). The result is
    clipped to ``[0, log2 k]`` against last-bit rounding. Rows with ``n == 0`` give ``NaN``.
    """
    counts = np.asarray(counts)
    k = counts.shape[-1]
    n = counts.sum(axis=-1)
    ordered = np.sort(counts, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = ordered / n[..., None]
        terms = np.where(ordered > 0, share * np.log2(np.where(ordered > 0, share, 1.0)), 0.0)
        entropy = np.clip(-terms.sum(axis=-1), 0.0, np.log2(k) if k > 0 else 0.0) + 0.0
    return np.where(n > 0, entropy, np.nan)


def item_summary(counts: np.ndarray, label_set: np.ndarray) -> dict[str, np.ndarray]:
    """Per-item ``n``, ``mean``, ``std`` and ``entropy_bits`` (ANALYSIS.md, "Per item").

    - ``n`` = ``sum_j counts_j``;
    - ``mean`` = ``sum_j counts_j * label_j / n`` (pairwise: the human preference for A);
    - ``std`` = population standard deviation ``sqrt(sum_j counts_j (label_j - mean)^2 / n)``
      (``ddof = 0``: the item's labels are the whole distribution of opinion we describe,
      not a sample used to estimate a wider one; this is also what ``np.std`` gives);
    - ``entropy_bits`` as :func:`entropy_bits`.

    Items with ``n == 0`` give ``NaN`` for mean, std and entropy.
    """
    counts = np.asarray(counts)
    labels = np.asarray(label_set, dtype=np.float64).ravel()
    n = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = counts @ labels / n
        deviation = labels[None, :] - mean[:, None]
        std = np.sqrt((counts * deviation**2).sum(axis=1) / n)
    return {"n": n, "mean": mean, "std": std, "entropy_bits": entropy_bits(counts)}


def pairwise_agreement(counts: np.ndarray, label_set: np.ndarray) -> dict[str, np.ndarray]:
    """Pairwise items: ``agreement`` and ``p_disagree`` (ANALYSIS.md, "Per item").

    With ``C_A`` = labels > 0, ``C_B`` = labels < 0, ``C_tie`` = labels == 0 and ``n`` their sum:
    ``agreement = max(C_A + C_tie/2, C_B + C_tie/2) / n`` and ``p_disagree = 1 - agreement``
    (the Infinity-Chat percentage disagreement, strength of preference collapsed). ``p_disagree``
    is computed as the equal ``(min(C_A, C_B) + C_tie/2) / n``, which is exact and lies in
    ``[0, 0.5]``. Also returns ``count_a``, ``count_b``, ``count_tie`` (ints). ``n == 0`` gives
    ``NaN``.
    """
    counts = np.asarray(counts)
    labels = np.asarray(label_set).ravel()
    count_a = counts[:, labels > 0].sum(axis=1)
    count_b = counts[:, labels < 0].sum(axis=1)
    count_tie = counts[:, labels == 0].sum(axis=1)
    n = count_a + count_b + count_tie
    with np.errstate(divide="ignore", invalid="ignore"):
        agreement = (np.maximum(count_a, count_b) + count_tie / 2) / n
        p_disagree = (np.minimum(count_a, count_b) + count_tie / 2) / n
    return {
        "agreement": agreement,
        "p_disagree": p_disagree,
        "count_a": count_a,
        "count_b": count_b,
        "count_tie": count_tie,
    }


def grouped_entropy_bits(counts: np.ndarray, groups: Sequence[int] | np.ndarray) -> np.ndarray:
    """Entropy in bits after merging label columns into groups (ANALYSIS.md, "Agreement").

    ``groups[j]`` is the group id (``0 .. G-1``) of label column ``j``; use
    :data:`THREE_GROUPS` for low 1-2 / mid 3 / high 4-5 (absolute) or B / tie / A (pairwise).
    The entropy is taken over all ``G`` groups, as :func:`entropy_bits`.
    """
    counts = np.asarray(counts)
    groups = np.asarray(groups, dtype=np.int64).ravel()
    if groups.shape != (counts.shape[1],):
        raise ValueError("groups needs one group id per label column")
    membership = np.zeros((counts.shape[1], groups.max() + 1), dtype=counts.dtype)
    membership[np.arange(counts.shape[1]), groups] = 1
    return entropy_bits(counts @ membership)


def gini_impurity(counts: np.ndarray) -> np.ndarray:
    """Gini impurity ``1 - sum_j p_j^2`` per item (Breiman et al. 1984); ``n == 0`` → ``NaN``."""
    counts = np.asarray(counts)
    n = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - ((counts / n[:, None]) ** 2).sum(axis=1)


def pairwise_annotator_disagreement(counts: np.ndarray) -> np.ndarray:
    """Share of annotator pairs on an item who gave different labels.

    ``1 - sum_j c_j (c_j - 1) / (n (n - 1))`` (the observed disagreement of Krippendorff's
    alpha for one unit, nominal metric). Items with ``n < 2`` give ``NaN``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        agreeing_pairs = (counts * (counts - 1)).sum(axis=1)
        share = 1.0 - agreeing_pairs / (n * (n - 1))
    return np.where(n >= 2, share, np.nan)


def majority_share(counts: np.ndarray) -> np.ndarray:
    """``1 - max_j c_j / n`` per item: the share of labels *outside* the most common label.

    Named as ANALYSIS.md lists it ("majority share (1 − share of the most common label)");
    it is 0 when everyone agrees. ``n == 0`` gives ``NaN``.
    """
    counts = np.asarray(counts)
    n = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - counts.max(axis=1, initial=0) / n
