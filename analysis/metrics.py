"""Pure statistics over a batch's counted labels (numpy / scipy only, no Django).

Definitions follow ``ANALYSIS.md`` (the Infinity-Chat study, Jiang et al., "Artificial
Hivemind", NeurIPS 2025). The database-facing code loads a batch once and hands over arrays;
everything here is vectorised over all items (``np.bincount`` / fancy indexing), never a
Python loop or a scipy call per item or per bootstrap resample.

Data layout
-----------
A batch's *counted* labels are three parallel 1-D integer arrays of equal length (one entry
per label):

``item_index``
    ``0 .. n_items - 1``: which item the label belongs to.
``annotator_index``
    ``0 .. n_annotators - 1``: who gave it.
``value``
    the label value: absolute ``1..5``; pairwise ``-2..2`` (``+2`` = A much better,
    ``-2`` = B much better).

plus ``label_set``, the fixed, ordered label values (``ABSOLUTE_LABELS = np.arange(1, 6)``,
``PAIRWISE_LABELS = np.arange(-2, 3)``). :func:`count_matrix` turns the labels into an
``(n_items, k)`` count matrix whose columns follow ``label_set``; the per-item functions take
that matrix and return one value per item, in item order.

Correlation bootstraps are vectorised across resamples (one index matrix per chunk of
resamples, ranks from resample weights, see :func:`_bootstrap_chunk`) and evaluated by
:data:`BOOTSTRAP_THREADS` threads; a seed fixes the result whatever the chunking or threading.
:func:`correlate_sources_subsets` bootstraps several score sources against the same y at once:
sources that see the same items share the resamples, the ranks of y and the Pearson sums
(see :func:`_shared_bootstrap_chunk`), with the results of :func:`correlate_subsets`.

Items without labels (``n == 0``) give ``NaN`` in the per-item arrays; the report layer drops
them (they are not in the ``full`` subset) so no ``NaN`` reaches the JSON report. Functions
that return a single number return ``None`` (with a reason where there is one) instead of
``NaN`` when the number is undefined.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Literal, NamedTuple, TypeVar

import numpy as np
from scipy import special

ABSOLUTE_LABELS = np.arange(1, 6)
PAIRWISE_LABELS = np.arange(-2, 3)

#: Group id per label column for the 3-group entropy, for both fixed label sets in ascending
#: order: absolute 1-2 / 3 / 4-5 (low / mid / high); pairwise -2,-1 / 0 / +1,+2 (B / tie / A).
THREE_GROUPS = np.array([0, 0, 1, 2, 2])

TUKEY_KS = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
TOP_ENTROPY_PERCENTS = tuple(range(2, 17, 2))
PAIRWISE_SUBSET_PERCENTS = tuple(range(60, 100, 5))

KrippendorffLevel = Literal["nominal", "ordinal", "interval", "ratio"]
T = TypeVar("T")

# Rows of resamples processed at once are chosen so that one chunk holds about this many
# draws: at n = 26,070 that is 11 resamples and ~25 MB of temporaries per chunk. Chunks that
# stay in cache were faster than larger ones (measured 250k-2M draws on 2 cores).
_BOOTSTRAP_CHUNK_DRAWS = 300_000
_MIN_CORRELATION_ITEMS = 3


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: Threads evaluating bootstrap chunks (the results do not depend on it); 1 disables
#: threading. Set it to 1 in processes that already run one analysis per core.
BOOTSTRAP_THREADS = min(4, _usable_cpus())


# --------------------------------------------------------------------------------------------
# Per item
# --------------------------------------------------------------------------------------------


def _label_columns(value: np.ndarray, label_set: np.ndarray) -> np.ndarray:
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
    column = _label_columns(value, label_set)
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


def percentage_disagreement(counts: np.ndarray, label_set: np.ndarray) -> np.ndarray:
    """``P = 1 - (max(C_A, C_B) + C_tie/2) / n`` per item; see :func:`pairwise_agreement`."""
    return pairwise_agreement(counts, label_set)["p_disagree"]


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


# --------------------------------------------------------------------------------------------
# Subsets
# --------------------------------------------------------------------------------------------


def tukey_subsets(means: np.ndarray, ks: Iterable[float] = TUKEY_KS) -> dict[str, np.ndarray]:
    """Similar-quality subsets by Tukey fences on the item means (ANALYSIS.md, "Subsets").

    ``Q1, Q3 = np.percentile(means, [25, 75])`` (numpy's default linear interpolation) over all
    items, ``IQR = Q3 - Q1``; subset ``tukey_k{k}`` keeps ``Q1 - k IQR <= mean <= Q3 + k IQR``
    (Tukey 1977). ``NaN`` means (unlabelled items) are ignored for the quartiles and never kept.
    Returns ``name -> bool mask`` in item order.
    """
    means = np.asarray(means, dtype=np.float64)
    labelled = np.isfinite(means)
    ks = list(ks)
    if not labelled.any():
        return {f"tukey_k{k:.1f}": np.zeros(means.shape, dtype=bool) for k in ks}
    q1, q3 = np.percentile(means[labelled], [25, 75])
    iqr = q3 - q1
    return {
        f"tukey_k{k:.1f}": labelled & (means >= q1 - k * iqr) & (means <= q3 + k * iqr) for k in ks
    }


def top_entropy_subsets(
    entropy: np.ndarray, ps: Iterable[int] = TOP_ENTROPY_PERCENTS
) -> dict[str, np.ndarray]:
    """High-disagreement subsets: the top ``p`` % of items by entropy (ANALYSIS.md).

    ``threshold = np.percentile(entropy, 100 - p)``; subset ``top_entropy_{p}pct`` keeps every
    item with ``entropy >= threshold`` (ties at the threshold are all kept, so a subset can
    hold more than ``p`` %). ``NaN`` entropies are ignored and never kept.
    """
    entropy = np.asarray(entropy, dtype=np.float64)
    labelled = np.isfinite(entropy)
    subsets = {}
    for p in ps:
        name = f"top_entropy_{p}pct"
        if not labelled.any():
            subsets[name] = np.zeros(entropy.shape, dtype=bool)
            continue
        threshold = np.percentile(entropy[labelled], 100 - p)
        subsets[name] = labelled & (entropy >= threshold)
    return subsets


def _first_share(order: np.ndarray, n_total: int, p: int, shape: tuple[int, ...]) -> np.ndarray:
    mask = np.zeros(shape, dtype=bool)
    mask[order[: n_total * p // 100]] = True
    return mask


def most_ties_subsets(
    tie_counts: np.ndarray, ps: Iterable[int] = PAIRWISE_SUBSET_PERCENTS
) -> dict[str, np.ndarray]:
    """Similar-quality pairwise subsets: items with the most ties (ANALYSIS.md).

    Items sorted by ``C_tie`` descending, equal counts in item order (stable sort); subset
    ``most_ties_{p}pct`` keeps the first ``floor(N p / 100)`` (integer arithmetic).
    """
    tie_counts = np.asarray(tie_counts)
    order = np.argsort(-tie_counts, kind="stable")
    return {
        f"most_ties_{p}pct": _first_share(order, len(tie_counts), p, tie_counts.shape) for p in ps
    }


def least_agreement_subsets(
    agreement: np.ndarray, ps: Iterable[int] = PAIRWISE_SUBSET_PERCENTS
) -> dict[str, np.ndarray]:
    """High-disagreement pairwise subsets: lowest ``agreement`` first (ANALYSIS.md).

    Stable ascending sort by ``agreement``; subset ``least_agreement_{p}pct`` keeps the first
    ``floor(N p / 100)``. ``NaN`` (unlabelled) items are not counted in ``N`` and never kept.
    """
    agreement = np.asarray(agreement, dtype=np.float64)
    n_labelled = int(np.isfinite(agreement).sum())
    order = np.argsort(agreement, kind="stable")  # NaN sorts last
    return {
        f"least_agreement_{p}pct": _first_share(order, n_labelled, p, agreement.shape) for p in ps
    }


def batch_subsets(
    kind: Literal["absolute", "pairwise"],
    summary: Mapping[str, np.ndarray],
    pairwise: Mapping[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """All subsets of ANALYSIS.md for one batch, as bool masks over all items.

    ``full`` = items with at least one label; the other rules are applied to the labelled items
    only. Absolute batches get ``tukey_k*`` and ``top_entropy_*``; pairwise batches get
    ``most_ties_*`` and ``least_agreement_*`` (``pairwise`` from :func:`pairwise_agreement`).
    """
    labelled = np.asarray(summary["n"]) > 0
    subsets: dict[str, np.ndarray] = {"full": labelled.copy()}
    if kind == "absolute":
        rules = {
            **tukey_subsets(np.asarray(summary["mean"])[labelled]),
            **top_entropy_subsets(np.asarray(summary["entropy_bits"])[labelled]),
        }
    elif kind == "pairwise":
        if pairwise is None:
            raise ValueError("pairwise batches need the pairwise_agreement() arrays")
        rules = {
            **most_ties_subsets(np.asarray(pairwise["count_tie"])[labelled]),
            **least_agreement_subsets(np.asarray(pairwise["agreement"])[labelled]),
        }
    else:
        raise ValueError(f"unknown batch kind {kind!r}")
    for name, local_mask in rules.items():
        mask = np.zeros(labelled.shape, dtype=bool)
        mask[labelled] = local_mask
        subsets[name] = mask
    return subsets


# --------------------------------------------------------------------------------------------
# Correlations
# --------------------------------------------------------------------------------------------


class CorrelationResult(NamedTuple):
    """One correlation: ``r``, two-sided ``p``, 95 % bootstrap CI and ``n`` pairs used.

    ``r`` and ``p`` are ``None`` (with ``reason``) when fewer than 3 pairs or a constant column;
    never ``NaN``. ``ci95`` is ``None`` when no bootstrap was run or fewer than half of the
    resamples were usable; ``n_resamples_used`` says how many entered the interval.
    """

    r: float | None
    p: float | None
    ci95: tuple[float, float] | None
    n: int
    reason: str | None = None
    n_resamples_used: int = 0

    def as_report(self) -> dict[str, object] | None:
        """``{"r", "p", "ci95"}`` as in the JSON report, or ``None`` when undefined."""
        if self.r is None:
            return None
        ci95 = list(self.ci95) if self.ci95 is not None else None
        return {"r": self.r, "p": self.p, "ci95": ci95}


class BootstrapCorrelation(NamedTuple):
    """Spearman and Pearson results of :func:`correlate_with_bootstrap` for one (x, y)."""

    spearman: CorrelationResult
    pearson: CorrelationResult


def _finite_pairs(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length ({x.size} != {y.size})")
    finite = np.isfinite(x) & np.isfinite(y)
    if finite.all():
        return x, y
    return x[finite], y[finite]


def _undefined_reason(x: np.ndarray, y: np.ndarray) -> str | None:
    n = x.size
    if n < _MIN_CORRELATION_ITEMS:
        return f"fewer than 3 items (n={n})"
    if x.min() == x.max():
        return f"x is constant (all {n} values equal)"
    if y.min() == y.max():
        return f"y is constant (all {n} values equal)"
    return None


def _pearson_r(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r as scipy.stats.pearsonr computes it (centred, norm-scaled dot product)."""
    return _pearson_r_of(_pearson_side(x), _pearson_side(y))


def _pearson_side(values: np.ndarray) -> np.ndarray:
    """One column's part of :func:`_pearson_r`: centred, max-scaled, unit-norm."""
    centred = values - values.mean()
    centred = centred / np.abs(centred).max()
    return centred / np.linalg.norm(centred)


def _pearson_r_of(x_side: np.ndarray, y_side: np.ndarray) -> float:
    return float(np.clip(np.dot(x_side, y_side), -1.0, 1.0))


def _rank_correlation(rank_x: np.ndarray, rank_y: np.ndarray) -> float:
    """Correlation of two rank vectors as ``np.corrcoef`` computes it (scipy.stats.spearmanr).

    ``c = X_c X_c^T / (n - 1)``, ``r = c_xy / sd_y / sd_x``; mirroring the operation order makes
    a perfect rank correlation exactly 1, as scipy reports it.
    """
    return _rank_correlation_of(_rank_side(rank_x), _rank_side(rank_y))


def _rank_side(rank: np.ndarray) -> tuple[np.ndarray, float]:
    """One rank vector's part of :func:`_rank_correlation`: centred ranks and their variance."""
    centred = rank - rank.mean()
    return centred, np.dot(centred, centred) * (1.0 / (rank.size - 1))


def _rank_correlation_of(
    x_side: tuple[np.ndarray, float], y_side: tuple[np.ndarray, float]
) -> float:
    (x_centred, c_xx), (y_centred, c_yy) = x_side, y_side
    c_xy = np.dot(y_centred, x_centred) * (1.0 / (x_centred.size - 1))
    return float(np.clip(c_xy / np.sqrt(c_yy) / np.sqrt(c_xx), -1.0, 1.0))


def _pearson_p(r: float, n: int) -> float:
    """Two-sided p of Pearson's r: r ~ Beta(n/2 - 1, n/2 - 1) on (-1, 1) under H0.

    Exact for bivariate normal data (Fisher 1915; as scipy.stats.pearsonr).
    """
    ab = n / 2 - 1
    return float(min(1.0, 2 * special.betaincc(ab, ab, (abs(r) + 1) / 2)))


def _spearman_p(rho: float, n: int) -> float:
    """Two-sided p of Spearman's rho by the t approximation (as scipy.stats.spearmanr).

    ``t = rho sqrt((n - 2) / ((1 + rho)(1 - rho)))`` with ``n - 2`` degrees of freedom.
    """
    dof = n - 2
    rho = np.float64(rho)
    with np.errstate(divide="ignore"):
        t = rho * np.sqrt(np.clip(dof / ((rho + 1.0) * (1.0 - rho)), 0.0, None))
    return float(min(1.0, 2 * special.stdtr(dof, -abs(t))))


def _group_by_value(values: np.ndarray, order: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Group equal values: ``(group_of_item, group_values, group_sizes)``, groups ascending."""
    if order is None:
        order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts_group = np.empty(values.size, dtype=bool)
    starts_group[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts_group[1:])
    group_sorted = np.cumsum(starts_group) - 1
    group_of_item = np.empty(values.size, dtype=np.int64)
    group_of_item[order] = group_sorted
    group_values = ordered[starts_group]
    group_sizes = np.bincount(group_sorted, minlength=group_values.size)
    return group_of_item, group_values, group_sizes


def _midranks_from_weights(group_weights: np.ndarray) -> np.ndarray:
    """Mid-rank of each value group given how often each group occurs (last axis ascending).

    Group g spans ranks ``C_{g-1} + 1 .. C_g`` (``C`` = cumulative weight), so its mid-rank is
    ``C_g - (w_g - 1) / 2`` (the average rank assigned to ties, as scipy.stats.rankdata).
    """
    return np.cumsum(group_weights, axis=-1) - (group_weights - 1) / 2


def midranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties given their average rank (``scipy.stats.rankdata``, ``'average'``)."""
    values = np.asarray(values, dtype=np.float64).ravel()
    group_of_item, _, group_sizes = _group_by_value(values)
    return _midranks_from_weights(group_sizes)[group_of_item]


def pearson(x: np.ndarray, y: np.ndarray) -> CorrelationResult:
    """Pearson's r with its two-sided p-value (Pearson 1896; as ``scipy.stats.pearsonr``).

    Pairs where either value is not finite (e.g. an item without a model score) are left out;
    ``n`` counts the pairs used. Fewer than 3 pairs or a constant column give ``r = p = None``
    and a ``reason``; no bootstrap is run (``ci95 = None``).
    """
    x, y = _finite_pairs(x, y)
    reason = _undefined_reason(x, y)
    if reason is not None:
        return CorrelationResult(None, None, None, x.size, reason)
    r = _pearson_r(x, y)
    return CorrelationResult(r, _pearson_p(r, x.size), None, x.size)


def spearman(x: np.ndarray, y: np.ndarray) -> CorrelationResult:
    """Spearman's rho with its two-sided p-value (Spearman 1904; as ``scipy.stats.spearmanr``).

    rho = Pearson's r of the mid-ranks (ties get their average rank, so the ``1 - 6 sum d^2 /
    (n (n^2 - 1))`` shortcut is *not* used); p from the t approximation with ``n - 2`` degrees
    of freedom. Non-finite pairs are left out; fewer than 3 pairs or a constant column give
    ``None`` with a ``reason``.
    """
    x, y = _finite_pairs(x, y)
    reason = _undefined_reason(x, y)
    if reason is not None:
        return CorrelationResult(None, None, None, x.size, reason)
    rho = _rank_correlation(midranks(x), midranks(y))
    return CorrelationResult(rho, _spearman_p(rho, x.size), None, x.size)


class _PreparedPair(NamedTuple):
    """What the vectorised bootstrap needs of one (x, y), computed once."""

    x_group: np.ndarray  # (n,) group id of each item by equal x, ascending
    y_group: np.ndarray
    x_group_z: np.ndarray  # (Gx,) standardised x of each group
    y_group_z: np.ndarray
    xy_z: np.ndarray  # (n,) product of the standardised values


def _prepare_pair(
    x: np.ndarray,
    y: np.ndarray,
    x_order: np.ndarray | None = None,
    y_order: np.ndarray | None = None,
) -> _PreparedPair:
    x_group, x_values, _ = _group_by_value(x, x_order)
    y_group, y_values, _ = _group_by_value(y, y_order)
    # Standardising keeps the raw-moment sums below well conditioned.
    x_mean, x_std = x.mean(), x.std()
    y_mean, y_std = y.mean(), y.std()
    x_z = (x - x_mean) / x_std
    y_z = (y - y_mean) / y_std
    return _PreparedPair(
        x_group=x_group,
        y_group=y_group,
        x_group_z=(x_values - x_mean) / x_std,
        y_group_z=(y_values - y_mean) / y_std,
        xy_z=x_z * y_z,
    )


def _resample_index_chunks(
    n: int, n_resamples: int, seed: int | None, chunk_draws: int | None = None
) -> Iterator[np.ndarray]:
    """Resample indices in chunks of rows of ``rng.integers(0, n, size=(n_resamples, n))``.

    numpy's generator yields the same stream however the rows are split, so resample ``b`` is
    row ``b`` of ``np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))``.
    A chunk holds about ``chunk_draws`` draws (default :data:`_BOOTSTRAP_CHUNK_DRAWS`).
    """
    rng = np.random.default_rng(seed)
    if chunk_draws is None:
        chunk_draws = _BOOTSTRAP_CHUNK_DRAWS
    rows = max(1, chunk_draws // max(n, 1))
    for start in range(0, n_resamples, rows):
        yield rng.integers(0, n, size=(min(rows, n_resamples - start), n))


def _ordered_results(function: Callable[..., T], tasks: Iterable[tuple]) -> Iterator[T]:
    """``function(*task)`` for each task, in task order, evaluated by ``BOOTSTRAP_THREADS``.

    Tasks are taken from ``tasks`` in this thread (so anything drawn there, like resample
    indices, does not depend on the threading), at most one task per thread waiting, to bound
    memory; numpy releases the GIL in the heavy steps.
    """
    if BOOTSTRAP_THREADS <= 1:
        for task in tasks:
            yield function(*task)
        return
    with ThreadPoolExecutor(max_workers=BOOTSTRAP_THREADS) as pool:
        pending: deque[Future[T]] = deque()
        for task in tasks:
            pending.append(pool.submit(function, *task))
            while len(pending) > BOOTSTRAP_THREADS:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _doubled_midranks(group_weights: np.ndarray) -> np.ndarray:
    """Twice the mid-rank of each value group, ``2 C_g - w_g + 1`` (odd integers)."""
    doubled = np.cumsum(group_weights, axis=-1)
    doubled *= 2
    doubled -= group_weights
    doubled += 1
    return doubled


def _bootstrap_chunk(prepared: _PreparedPair, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman and Pearson of ``b`` resamples at once; ``NaN`` where a column is constant.

    Each row of ``index`` (``b x n``) lists the items drawn. For each resample and each group
    of equal x values the draw count ``w_g`` comes from one ``np.bincount``; the mid-rank of
    group ``g`` is then ``C_g - (w_g - 1)/2`` (``C`` = cumulative weight), so x and y are sorted
    once, not once per resample. Ranks are kept doubled (``2 C_g - w_g + 1``, odd integers with
    mean ``n + 1``): every rank sum below is then a sum of integers under 2**53, exact in
    float64 for n up to ~10^5, and Spearman is the weighted Pearson correlation of the ranks.
    Pearson uses raw moments of the standardised values: group sums per resample, the cross
    term by one gather. Per-row sums do not depend on how many rows a chunk has, so results
    are identical however the resamples are split into chunks or threads.
    """
    b, n = index.shape
    n_x_groups = prepared.x_group_z.size
    n_y_groups = prepared.y_group_z.size
    x_flat = np.take(prepared.x_group, index)
    x_flat += (np.arange(b, dtype=np.int64) * n_x_groups)[:, None]
    y_flat = np.take(prepared.y_group, index)
    y_flat += (np.arange(b, dtype=np.int64) * n_y_groups)[:, None]
    x_count = np.bincount(x_flat.ravel(), minlength=b * n_x_groups).reshape(b, n_x_groups)
    y_count = np.bincount(y_flat.ravel(), minlength=b * n_y_groups).reshape(b, n_y_groups)
    usable = (x_count.max(axis=1) < n) & (y_count.max(axis=1) < n)
    x_weight = x_count.astype(np.float64)
    y_weight = y_count.astype(np.float64)

    x_rank = _doubled_midranks(x_weight)
    y_rank = _doubled_midranks(y_weight)
    # sum_i w_i R_i = n (n + 1), hence sum w (R - (n + 1))^2 = sum w R^2 - n (n + 1)^2.
    centre = float(n * (n + 1) ** 2)
    x_ss = np.einsum("ij,ij,ij->i", x_weight, x_rank, x_rank) - centre
    y_ss = np.einsum("ij,ij,ij->i", y_weight, y_rank, y_rank) - centre
    cross = np.take(x_rank, x_flat)
    cross *= np.take(y_rank, y_flat)
    xy_sp = cross.sum(axis=1) - centre
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = xy_sp / np.sqrt(x_ss * y_ss)

    sum_x = np.einsum("ij,j->i", x_weight, prepared.x_group_z)
    sum_xx = np.einsum("ij,j->i", x_weight, prepared.x_group_z**2)
    sum_y = np.einsum("ij,j->i", y_weight, prepared.y_group_z)
    sum_yy = np.einsum("ij,j->i", y_weight, prepared.y_group_z**2)
    sum_xy = np.take(prepared.xy_z, index).sum(axis=1)
    return _resampled_results(rho, sum_x, sum_xx, sum_y, sum_yy, sum_xy, n, usable)


def _resampled_results(rho, sum_x, sum_xx, sum_y, sum_yy, sum_xy, n, usable):
    """Pearson r from the resamples' raw moment sums; both statistics clipped to [-1, 1],
    NaN for resamples in which a column came out constant."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sum_xy / n - (sum_x / n) * (sum_y / n)
        x_var = sum_xx / n - (sum_x / n) ** 2
        y_var = sum_yy / n - (sum_y / n) ** 2
        r = cov / np.sqrt(x_var * y_var)
    rho = np.where(usable, np.clip(rho, -1.0, 1.0), np.nan)
    r = np.where(usable, np.clip(r, -1.0, 1.0), np.nan)
    return rho, r


def bootstrap_statistics(
    x: np.ndarray, y: np.ndarray, n_resamples: int = 1000, seed: int | None = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Spearman's rho and Pearson's r for each bootstrap resample of the (x, y) pairs.

    Resample ``b`` draws the items of row ``b`` of
    ``np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))`` (with replacement;
    ``n`` = finite pairs). Returns two ``(n_resamples,)`` arrays; a resample in which x or y is
    constant gives ``NaN`` there. Vectorised across resamples (see :func:`_bootstrap_chunk`).
    """
    x, y = _finite_pairs(x, y)
    if _undefined_reason(x, y) is not None:
        nan = np.full(n_resamples, np.nan)
        return nan, nan.copy()
    return _bootstrap_prepared(_prepare_pair(x, y), x.size, n_resamples, seed)


def _bootstrap_prepared(
    prepared: _PreparedPair, n: int, n_resamples: int, seed: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Run :func:`_bootstrap_chunk` over all resamples (threads: :func:`_ordered_results`)."""
    rhos: list[np.ndarray] = []
    rs: list[np.ndarray] = []
    tasks = ((prepared, index) for index in _resample_index_chunks(n, n_resamples, seed))
    for rho, r in _ordered_results(_bootstrap_chunk, tasks):
        rhos.append(rho)
        rs.append(r)
    if not rhos:
        return np.empty(0), np.empty(0)
    return np.concatenate(rhos), np.concatenate(rs)


def _with_interval(point: CorrelationResult, resampled: np.ndarray) -> CorrelationResult:
    """95 % percentile interval (Efron & Tibshirani 1993, ch. 13) of the usable resamples.

    Resamples where a column came out constant are dropped; if fewer than half of the
    resamples are usable the interval is ``None``.
    """
    usable = resampled[np.isfinite(resampled)]
    if resampled.size == 0 or usable.size * 2 < resampled.size:
        return point._replace(n_resamples_used=int(usable.size))
    low, high = np.percentile(usable, [2.5, 97.5])
    return point._replace(ci95=(float(low), float(high)), n_resamples_used=int(usable.size))


def _correlate_finite(
    x: np.ndarray,
    y: np.ndarray,
    n_resamples: int,
    seed: int | None,
    x_order: np.ndarray | None = None,
    y_order: np.ndarray | None = None,
) -> BootstrapCorrelation:
    reason = _undefined_reason(x, y)
    if reason is not None:
        undefined = CorrelationResult(None, None, None, x.size, reason)
        return BootstrapCorrelation(undefined, undefined)
    prepared = _prepare_pair(x, y, x_order, y_order)
    spearman_point, pearson_point = _point_results(x, y, prepared.x_group, prepared.y_group)
    rho_boot, r_boot = _bootstrap_prepared(prepared, x.size, n_resamples, seed)
    return BootstrapCorrelation(
        spearman=_with_interval(spearman_point, rho_boot),
        pearson=_with_interval(pearson_point, r_boot),
    )


def _point_results(
    x: np.ndarray, y: np.ndarray, x_group: np.ndarray, y_group: np.ndarray
) -> tuple[CorrelationResult, CorrelationResult]:
    """Spearman and Pearson of the finite, defined (x, y) without an interval."""
    return _point_results_of(x, x_group, _point_side(y, y_group))


def _point_side(
    values: np.ndarray, group: np.ndarray
) -> tuple[tuple[np.ndarray, float], np.ndarray]:
    """One column's parts of :func:`_point_results`, computed once for many partners."""
    rank = _midranks_from_weights(np.bincount(group))[group]
    return _rank_side(rank), _pearson_side(values)


def _point_results_of(
    x: np.ndarray, x_group: np.ndarray, y_side: tuple[tuple[np.ndarray, float], np.ndarray]
) -> tuple[CorrelationResult, CorrelationResult]:
    n = x.size
    x_rank_side, x_pearson_side = _point_side(x, x_group)
    rho = _rank_correlation_of(x_rank_side, y_side[0])
    r = _pearson_r_of(x_pearson_side, y_side[1])
    return (
        CorrelationResult(rho, _spearman_p(rho, n), None, n),
        CorrelationResult(r, _pearson_p(r, n), None, n),
    )


def correlate_with_bootstrap(
    x: np.ndarray, y: np.ndarray, n_resamples: int = 1000, seed: int | None = 0
) -> BootstrapCorrelation:
    """Spearman and Pearson of (x, y), each with a 95 % percentile bootstrap interval.

    Point estimates and p-values as :func:`spearman` / :func:`pearson`; the interval resamples
    items (pairs) with replacement, ``n_resamples`` times from
    ``np.random.default_rng(seed)`` (see :func:`bootstrap_statistics`), so a seed reproduces it
    exactly. Resamples in which a column is constant are dropped from the interval; if fewer
    than half are usable ``ci95`` is ``None``. Non-finite pairs are left out first.
    """
    x, y = _finite_pairs(x, y)
    return _correlate_finite(x, y, n_resamples, seed)


def correlate_subsets(
    x: np.ndarray,
    y: np.ndarray,
    masks: Mapping[str, np.ndarray],
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> dict[str, BootstrapCorrelation]:
    """:func:`correlate_with_bootstrap` for many subsets of the same items.

    ``masks`` maps a subset name to a bool mask over the items. x and y are sorted once and
    each subset's sort order is read off the full one, so a subset costs only its resamples;
    subsets holding exactly the same items are computed once. Each subset is resampled from
    its own ``default_rng(seed)``: the result for a subset equals
    ``correlate_with_bootstrap(x[mask], y[mask], n_resamples, seed)``.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length ({x.size} != {y.size})")
    finite = np.isfinite(x) & np.isfinite(y)
    x_order = np.argsort(x, kind="stable")
    y_order = np.argsort(y, kind="stable")
    results: dict[str, BootstrapCorrelation] = {}
    # Subsets often coincide (wide Tukey fences keep every item): compute each distinct
    # set of items once; the same items and seed give the same result.
    by_items: dict[bytes, BootstrapCorrelation] = {}
    for name, mask in masks.items():
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != x.shape:
            raise ValueError(f"subset {name!r} must be a bool mask over the {x.size} items")
        keep = mask & finite
        key = np.packbits(keep).tobytes()
        if key not in by_items:
            local_index = np.cumsum(keep) - 1
            sub_x_order = local_index[x_order[keep[x_order]]]
            sub_y_order = local_index[y_order[keep[y_order]]]
            by_items[key] = _correlate_finite(
                x[keep], y[keep], n_resamples, seed, sub_x_order, sub_y_order
            )
        results[name] = by_items[key]
    return results


# Resample draws per chunk of the shared bootstrap (:func:`correlate_sources_subsets`). Its
# kernel keeps six (b x n) int64 / float64 buffers per thread; measured on 2 cores over the
# bench-large subsets (25k-400k draws), 100k-200k was fastest, 400k ~20 % slower (cache).
_SHARED_CHUNK_DRAWS = 100_000
# The kernel packs ``M << bits(n) | W`` into int64 (``M <= n (2n + 1)``, sums up to
# ``n (n + 1)``); larger item sets use the per-source bootstrap.
_SHARED_MAX_ITEMS = 2**20 - 1


class _SharedSource(NamedTuple):
    """One x of a :class:`_SharedItems`: where its items sit along ascending y."""

    x_along_y: np.ndarray  # (n,) position along ascending y of each item, items in ascending x
    z_row: int  # first of its rows in ``_SharedItems.z``
    # Groups of equal x (None when all x differ, every item its own group):
    x_ends: np.ndarray | None  # (Gx,) end of each group along ``x_along_y``
    x_group_z: np.ndarray | None  # (Gx,) standardised x of each group
    x_group_zz: np.ndarray | None  # (Gx,) its square


class _SharedItems(NamedTuple):
    """Everything the shared bootstrap kernel needs of one item set and its sources.

    The kernel keeps a resample's draw counts ``W`` (``b x n``) along ascending y (stable), so
    groups of equal y are contiguous.
    """

    n: int
    y_order: np.ndarray  # (n,) the items in ascending y: column j of W counts item y_order[j]
    y_ends: np.ndarray | None  # (Gy,) end of each group of equal y; None when all y differ
    y_group: np.ndarray | None  # (n,) group of each position along y (None when all differ)
    y_group_z: np.ndarray  # (Gy,) standardised y of each group
    y_group_zz: np.ndarray  # (Gy,) its square
    z: np.ndarray  # (K, n) along y, per source: x_z, x_z**2, x_z * y_z (only the last for tied x)
    sources: tuple[_SharedSource, ...]


class _ItemsPlan(NamedTuple):
    """One distinct item set: the sources that see it, their point results, the shared data."""

    points: dict[int, BootstrapCorrelation]  # per member: point results, or the whole result
    bootstrapped: tuple[int, ...]  # members left to the kernel, in its order
    shared: _SharedItems | None  # None when no member is left to the kernel


def _rank_sum_of_squares(n: int, cubes: np.ndarray) -> np.ndarray:
    """``sum_g w_g R_g^2 - n (n + 1)^2`` of doubled mid-ranks ``R`` from ``sum_g w_g^3``.

    Ranks 1..n sum to ``n (n + 1)(2n + 1) / 6`` in squares; ties of ``w`` items at their mid-rank
    lose ``(w^3 - w) / 12`` of it, so ``sum_g w_g R_g^2 = (2n(n+1)(2n+1) - sum w^3 + n) / 3``.
    Integer arithmetic: equal to the float sums of :func:`_bootstrap_chunk` while they are exact.
    """
    total = (2 * n * (n + 1) * (2 * n + 1) + n - cubes) // 3
    return (total - n * (n + 1) ** 2).astype(np.float64)


def _doubled_from_cumulative(cumulative: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``2 C - w + 1``: the doubled mid-rank of each group (see :func:`_doubled_midranks`)."""
    rank = cumulative * 2
    rank -= weight
    rank += 1
    return rank


def _cube_sums(weight: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij,ij->i", weight, weight, weight)


class _Buffers:
    """Flat arrays reused as ``b x n`` temporaries by one thread, grown when needed.

    Fresh arrays of that size cost a page fault per 4 KiB on every use, several times the
    arithmetic done on them.
    """

    def __init__(self) -> None:
        self._flat: dict[str, np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, int], dtype: type) -> np.ndarray:
        size = shape[0] * shape[1]
        flat = self._flat.get(name)
        if flat is None or flat.size < size:
            flat = self._flat[name] = np.empty(size, dtype=dtype)
        return flat[:size].reshape(shape)


def _thread_buffers(scratch: threading.local) -> _Buffers:
    buffers = getattr(scratch, "buffers", None)
    if buffers is None:
        buffers = scratch.buffers = _Buffers()
    return buffers


def _shared_bootstrap_chunk(
    items: _SharedItems, index: np.ndarray, scratch: threading.local
) -> tuple[np.ndarray, np.ndarray]:
    """Spearman and Pearson of ``b`` resamples for every source of ``items``: ``(S, b)`` each.

    The statistics of :func:`_bootstrap_chunk`, with the work on the draws and on y done once
    for all sources. One ``np.bincount`` gives each resample's draw count ``W_j`` of every item
    (kept along ascending y); one cumulative sum gives the doubled mid-ranks of y (``R^y``, per
    group of equal y) and ``M_j = W_j R^y_j``. Per source one gather reads the packed
    ``Q = M << s | W`` in x order (``W <= n < 2**s``, so the low bits of ``Q`` and of its
    cumulative sums hold ``W`` and ``C = cumsum(W)``, the high bits ``M`` and ``cumsum(M)``).
    When all x differ ``R^x_j = 2 C_j - W_j + 1``, so the cross sum
    ``sum_j W_j R^x_j R^y_j = 2 sum_j C_j M_j - sum_j W_j M_j + n (n + 1)`` (the last two
    shared, ``sum C M`` read off ``sum C Q``); for tied x, ``cumsum(Q)`` at the group ends gives
    each group's weight and sum of ``M``. The sums of squares follow from ``sum w^3``
    (:func:`_rank_sum_of_squares`). All rank sums are int64, so Spearman equals
    :func:`_bootstrap_chunk` exactly. Pearson uses the same raw-moment formula; its sums over
    ``W`` come from one ``einsum`` over all sources (group weights for tied x) and agree with
    :func:`_bootstrap_chunk` to rounding (~1e-14). The ``b x n`` temporaries live in per-thread
    buffers (``scratch``).
    """
    b, n = index.shape
    buffers = _thread_buffers(scratch)
    slot = np.add(index, (np.arange(b) * n)[:, None], out=buffers.get("slot", (b, n), np.intp))
    weight = buffers.get("weight", (b, n), np.int64)
    counts = np.bincount(slot.ravel(), minlength=b * n).reshape(b, n)
    np.take(counts, items.y_order, axis=1, out=weight, mode="clip")
    del counts
    packed = np.cumsum(weight, axis=1, out=buffers.get("packed", (b, n), np.int64))
    if items.y_ends is None:
        y_weight = weight
        packed *= 2  # 2 C - W + 1: the doubled mid-rank of each item
        packed -= weight
        packed += 1
    else:
        y_cumulative = np.take(packed, items.y_ends - 1, axis=1)
        y_weight = np.diff(y_cumulative, axis=1, prepend=0)
        y_rank = _doubled_from_cumulative(y_cumulative, y_weight)
        np.take(y_rank, items.y_group, axis=1, out=packed, mode="clip")
    packed *= weight  # M
    # sum w^3 <= (sum w)^3 = n^3, with equality exactly when one group holds every draw: the
    # resample is usable when neither column is constant.
    item_cubes = _cube_sums(weight)
    y_cubes = item_cubes if items.y_ends is None else _cube_sums(y_weight)
    y_ss = _rank_sum_of_squares(n, y_cubes)
    y_usable = y_cubes < n**3
    centre = n * (n + 1) ** 2
    if any(source.x_ends is None for source in items.sources):
        item_ss = _rank_sum_of_squares(n, item_cubes)
        item_usable = item_cubes < n**3
        # sum_j W_j R^y_j = n (n + 1) (ranks of all draws), so the cross sum with
        # R^x = 2 C - W + 1 is 2 sum C M - sum W M + n (n + 1).
        shared_cross = n * (n + 1) - np.einsum("ij,ij->i", weight, packed)
    shift = n.bit_length()
    low = (1 << shift) - 1
    packed <<= shift
    packed |= weight
    # sum_j C_j Q_j = 2**s sum_j C_j M_j + sum_j C_j W_j, and when all x differ
    # sum_j C_j W_j = ((sum W)^2 + sum W^2) / 2 whatever the order: sum C M without unpacking
    # M, while sum C Q <= n sum Q fits int64.
    unpack = n * ((n * (n + 1) << shift) + n) >= 2**63
    if not unpack:
        self_pairs = (n * n + np.einsum("ij,ij->i", weight, weight)) // 2

    float_weight = buffers.get("float_weight", (b, n), np.float64)
    float_weight[...] = weight
    # Each (moment, resample) is a dot product over the items in a fixed order, so a resample's
    # value does not depend on the chunk it is in (BLAS would be faster, but its order depends
    # on the shapes and its threads spin on a busy machine).
    moments = np.einsum("ij,kj->ki", float_weight, items.z)

    n_sources = len(items.sources)
    rho = np.empty((n_sources, b))
    usable = np.empty((n_sources, b), dtype=bool)
    sum_x, sum_xx, sum_xy = np.empty((3, n_sources, b))
    x_packed = buffers.get("x_packed", (b, n), np.int64)
    x_cumulative = buffers.get("x_cumulative", (b, n), np.int64)
    for k, source in enumerate(items.sources):
        np.take(packed, source.x_along_y, axis=1, out=x_packed, mode="clip")
        if source.x_ends is None:
            np.bitwise_and(x_packed, low, out=x_cumulative)
            np.cumsum(x_cumulative, axis=1, out=x_cumulative)
            if unpack:
                x_packed >>= shift
                cm = np.einsum("ij,ij->i", x_cumulative, x_packed)
            else:
                cm = (np.einsum("ij,ij->i", x_cumulative, x_packed) - self_pairs) >> shift
            cross = 2 * cm + shared_cross
            x_ss = item_ss
            usable[k] = item_usable & y_usable
            sum_x[k], sum_xx[k], sum_xy[k] = moments[source.z_row : source.z_row + 3]
        else:
            np.cumsum(x_packed, axis=1, out=x_packed)
            at_ends = np.take(x_packed, source.x_ends - 1, axis=1)
            group_weight = np.diff(at_ends & low, axis=1, prepend=0)
            group_ranked = np.diff(at_ends >> shift, axis=1, prepend=0)
            group_rank = _doubled_from_cumulative(at_ends & low, group_weight)
            cross = np.einsum("ij,ij->i", group_rank, group_ranked)
            group_cubes = _cube_sums(group_weight)
            x_ss = _rank_sum_of_squares(n, group_cubes)
            usable[k] = (group_cubes < n**3) & y_usable
            float_group_weight = group_weight.astype(np.float64)
            sum_x[k] = np.einsum("ij,j->i", float_group_weight, source.x_group_z)
            sum_xx[k] = np.einsum("ij,j->i", float_group_weight, source.x_group_zz)
            sum_xy[k] = moments[source.z_row]
        xy_sp = (cross - centre).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            rho[k] = xy_sp / np.sqrt(x_ss * y_ss)

    float_y_weight = float_weight if items.y_ends is None else y_weight.astype(np.float64)
    sum_y = np.einsum("ij,j->i", float_y_weight, items.y_group_z)
    sum_yy = np.einsum("ij,j->i", float_y_weight, items.y_group_zz)
    return _resampled_results(rho, sum_x, sum_xx, sum_y, sum_yy, sum_xy, n, usable)


def _plan_items(
    keep: np.ndarray,
    members: Sequence[int],
    xs: Sequence[np.ndarray],
    y: np.ndarray,
    x_orders: Sequence[np.ndarray],
    y_order: np.ndarray,
    n_resamples: int,
    seed: int | None,
) -> _ItemsPlan:
    """Point results of each member on the items ``keep`` and the kernel's shared data.

    Members whose correlation is undefined, and all members of a set too large for the
    kernel, get their whole result here.
    """
    local_index = np.cumsum(keep) - 1
    y_local = y[keep]
    y_sorted = local_index[y_order[keep[y_order]]]
    n = y_local.size
    points: dict[int, BootstrapCorrelation] = {}
    defined: list[tuple[int, np.ndarray, np.ndarray]] = []
    for member in members:
        x_local = xs[member][keep]
        reason = _undefined_reason(x_local, y_local)
        if reason is not None:
            undefined = CorrelationResult(None, None, None, n, reason)
            points[member] = BootstrapCorrelation(undefined, undefined)
            continue
        x_sorted = local_index[x_orders[member][keep[x_orders[member]]]]
        if n > _SHARED_MAX_ITEMS:
            points[member] = _correlate_finite(
                x_local, y_local, n_resamples, seed, x_sorted, y_sorted
            )
        else:
            defined.append((member, x_local, x_sorted))
    if not defined:
        return _ItemsPlan(points, (), None)

    y_group, y_values, y_sizes = _group_by_value(y_local, y_sorted)
    y_side = _point_side(y_local, y_group)
    y_position = np.empty(n, dtype=np.intp)
    y_position[y_sorted] = np.arange(n)
    # Standardised as in _prepare_pair.
    y_mean, y_std = y_local.mean(), y_local.std()
    y_z = (y_local - y_mean) / y_std
    sources: list[_SharedSource] = []
    z_rows: list[np.ndarray] = []
    for member, x_local, x_sorted in defined:
        x_group, x_values, x_sizes = _group_by_value(x_local, x_sorted)
        points[member] = BootstrapCorrelation(*_point_results_of(x_local, x_group, y_side))
        x_mean, x_std = x_local.mean(), x_local.std()
        x_z = (x_local - x_mean) / x_std
        source = _SharedSource(y_position[x_sorted], len(z_rows), None, None, None)
        if x_sizes.size == n:
            z_rows += [x_z, x_z**2, x_z * y_z]
        else:
            x_group_z = (x_values - x_mean) / x_std
            z_rows.append(x_z * y_z)
            source = source._replace(
                x_ends=np.cumsum(x_sizes), x_group_z=x_group_z, x_group_zz=x_group_z**2
            )
        sources.append(source)
    if n_resamples <= 0:
        return _ItemsPlan(points, (), None)
    y_group_z = (y_values - y_mean) / y_std
    distinct_y = y_sizes.size == n
    shared = _SharedItems(
        n=n,
        y_order=y_sorted,
        y_ends=None if distinct_y else np.cumsum(y_sizes),
        y_group=None if distinct_y else y_group[y_sorted],
        y_group_z=y_group_z,
        y_group_zz=y_group_z**2,
        z=np.stack(z_rows)[:, y_sorted],
        sources=tuple(sources),
    )
    return _ItemsPlan(points, tuple(member for member, _, _ in defined), shared)


def _finish_plan(
    plan: _ItemsPlan, chunks: list[tuple[np.ndarray, np.ndarray]]
) -> dict[int, BootstrapCorrelation]:
    """Each member's result: the point results with the intervals of the kernel's resamples."""
    results = dict(plan.points)
    if not plan.bootstrapped:
        return results
    rho = np.concatenate([chunk[0] for chunk in chunks], axis=1)
    r = np.concatenate([chunk[1] for chunk in chunks], axis=1)
    for k, member in enumerate(plan.bootstrapped):
        point = plan.points[member]
        results[member] = BootstrapCorrelation(
            spearman=_with_interval(point.spearman, rho[k]),
            pearson=_with_interval(point.pearson, r[k]),
        )
    return results


def correlate_sources_subsets(
    xs: Sequence[np.ndarray],
    y: np.ndarray,
    masks: Mapping[str, np.ndarray],
    n_resamples: int = 1000,
    seed: int | None = 0,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, BootstrapCorrelation]]:
    """:func:`correlate_subsets` for several x against the same y, sharing the resamples.

    Returns one dict per x, each equal to ``correlate_subsets(x, y, masks, n_resamples, seed)``
    (Spearman exactly, Pearson to rounding, ~1e-14): the same seed draws the same resamples.
    Per subset, the sources whose items (``mask & finite(x) & finite(y)``) coincide form one
    item set (with full coverage, all sources share it); each distinct set is resampled once
    and its draws, the ranks of y and the Pearson sums are computed once for all its sources
    (see :func:`_shared_bootstrap_chunk`). ``progress(done, total)`` is called with
    ``done = 0`` once the ``total`` distinct item sets are known and after each finished set.
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    xs = [np.asarray(x, dtype=np.float64).ravel() for x in xs]
    for x in xs:
        if x.shape != y.shape:
            raise ValueError(f"x and y must have the same length ({x.size} != {y.size})")
    for name, mask in masks.items():
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != y.shape:
            raise ValueError(f"subset {name!r} must be a bool mask over the {y.size} items")
    finite_y = np.isfinite(y)
    finite = [np.isfinite(x) & finite_y for x in xs]
    y_order = np.argsort(y, kind="stable")
    x_orders = [np.argsort(x, kind="stable") for x in xs]

    # Distinct item sets in order of first use, with the sources that see each.
    set_of: list[dict[str, bytes]] = [{} for _ in xs]
    sets: dict[bytes, tuple[np.ndarray, list[int]]] = {}
    for name, mask in masks.items():
        mask = np.asarray(mask)
        for source, source_finite in enumerate(finite):
            keep = mask & source_finite
            key = np.packbits(keep).tobytes()
            entry = sets.setdefault(key, (keep, []))
            if source not in entry[1]:
                entry[1].append(source)
            set_of[source][name] = key
    keys = list(sets)
    if progress is not None:
        progress(0, len(keys))

    plans: list[_ItemsPlan] = []
    scratch = threading.local()  # buffers of each evaluating thread, freed with this call

    def tasks() -> Iterator[tuple[int, _SharedItems, np.ndarray, threading.local]]:
        for key in keys:
            keep, members = sets[key]
            plan = _plan_items(keep, members, xs, y, x_orders, y_order, n_resamples, seed)
            plans.append(plan)
            if plan.shared is not None:
                draws = _resample_index_chunks(
                    plan.shared.n, n_resamples, seed, _SHARED_CHUNK_DRAWS
                )
                for index in draws:
                    yield len(plans) - 1, plan.shared, index, scratch

    results: dict[tuple[bytes, int], BootstrapCorrelation] = {}
    chunks: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    finished = 0

    def finish_before(stop: int) -> None:
        nonlocal finished
        while finished < stop:
            finished_results = _finish_plan(plans[finished], chunks.pop(finished, []))
            for member, result in finished_results.items():
                results[keys[finished], member] = result
            finished += 1
            if progress is not None:
                progress(finished, len(keys))

    for set_number, rho, r in _ordered_results(_numbered_shared_chunk, tasks()):
        finish_before(set_number)
        chunks.setdefault(set_number, []).append((rho, r))
    finish_before(len(plans))
    return [
        {name: results[key, source] for name, key in set_of[source].items()}
        for source in range(len(xs))
    ]


def _numbered_shared_chunk(
    set_number: int, items: _SharedItems, index: np.ndarray, scratch: threading.local
) -> tuple[int, np.ndarray, np.ndarray]:
    return (set_number, *_shared_bootstrap_chunk(items, index, scratch))


# --------------------------------------------------------------------------------------------
# Agreement across the batch
# --------------------------------------------------------------------------------------------


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """Distinct values, ascending (a sort; ``np.unique``'s hash path is slow on big inputs)."""
    ordered = np.sort(np.asarray(values).ravel())
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def _difference_squared(
    domain: np.ndarray, frequency: np.ndarray, level: KrippendorffLevel
) -> np.ndarray:
    """Krippendorff's squared difference ``delta^2_ck`` between the domain values."""
    k = domain.size
    if level == "nominal":
        return 1.0 - np.eye(k)
    values = domain.astype(np.float64)
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    if level == "ratio":
        if np.any(values < 0):
            raise ValueError("the ratio metric needs non-negative values")
        total = values[:, None] + values[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = ((values[:, None] - values[None, :]) / total) ** 2
        return np.where(total == 0, 0.0, ratio)
    if level == "ordinal":
        # (sum_{g=c..k} n_g - (n_c + n_k)/2)^2 with n_g the marginal frequencies.
        cumulative = np.cumsum(frequency)
        position = np.arange(k)
        low = np.minimum.outer(position, position)
        high = np.maximum.outer(position, position)
        between = cumulative[high] - cumulative[low] + frequency[low]
        return (between - (frequency[:, None] + frequency[None, :]) / 2) ** 2
    raise ValueError(f"unknown level {level!r}; use nominal, ordinal, interval or ratio")


def krippendorff_alpha(
    item_index: np.ndarray,
    annotator_index: np.ndarray,
    value: np.ndarray,
    level: KrippendorffLevel = "interval",
    value_domain: Sequence[float] | np.ndarray | None = None,
) -> float | None:
    """Krippendorff's alpha from the coincidence matrix (Krippendorff 2011, "Computing
    Krippendorff's Alpha-Reliability").

    Units are items. Per unit the value counts ``n_uc``; units with fewer than 2 values are
    unpairable and dropped. Coincidences ``o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)``
    (one matrix product), marginals ``n_c = sum_k o_ck``, ``n = sum_c n_c``, and
    ``alpha = 1 - (n - 1) sum o_ck delta^2_ck / sum n_c n_k delta^2_ck`` with the metric of
    ``level``: nominal ``[c != k]``, interval ``(c - k)^2``, ratio ``((c - k)/(c + k))^2``,
    ordinal ``(sum_{g=c..k} n_g - (n_c + n_k)/2)^2``.

    ``value_domain`` (e.g. the label set) fixes the categories; values outside it raise
    ``ValueError``. Categories nobody used have ``n_g = 0`` and so change none of the levels.
    Each annotator may give one value per item (a second one raises ``ValueError``). Returns
    ``None`` when alpha is undefined: no pairable unit, or a single value observed
    (no expected disagreement).
    """
    item_index = np.asarray(item_index, dtype=np.int64).ravel()
    annotator_index = np.asarray(annotator_index, dtype=np.int64).ravel()
    value = np.asarray(value).ravel()
    if not (item_index.shape == annotator_index.shape == value.shape):
        raise ValueError("item_index, annotator_index and value must have the same length")
    if value.size == 0:
        return None
    if item_index.min() < 0 or annotator_index.min() < 0:
        raise ValueError("item_index and annotator_index must be non-negative")
    pair_key = np.sort(item_index * (int(annotator_index.max()) + 1) + annotator_index)
    if np.any(pair_key[1:] == pair_key[:-1]):
        raise ValueError("an annotator has more than one value for the same item")
    domain = _sorted_unique(value if value_domain is None else np.asarray(value_domain))
    category = _label_columns(value, domain)
    k = domain.size
    # Units are the item indices themselves; items without values give empty rows, which are
    # unpairable and dropped with the others.
    n_units = int(item_index.max()) + 1
    unit_counts = np.bincount(item_index * k + category, minlength=n_units * k).reshape(n_units, k)
    values_per_unit = unit_counts.sum(axis=1)
    pairable = values_per_unit >= 2
    if not pairable.any():
        return None
    unit_counts = unit_counts[pairable].astype(np.float64)
    weighted = unit_counts / (values_per_unit[pairable] - 1)[:, None]
    coincidence = weighted.T @ unit_counts - np.diag(weighted.sum(axis=0))
    frequency = coincidence.sum(axis=1)
    total = frequency.sum()
    delta2 = _difference_squared(domain, frequency, level)
    observed = (coincidence * delta2).sum()
    expected = (np.outer(frequency, frequency) * delta2).sum()
    if expected <= 0:
        return None
    return float(1.0 - (total - 1) * observed / expected)


def _nan_mean(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def agreement_summary(
    item_index: np.ndarray,
    annotator_index: np.ndarray,
    value: np.ndarray,
    label_set: np.ndarray,
    n_items: int,
) -> dict[str, float | None]:
    """Batch-level agreement (ANALYSIS.md, "Agreement across the batch").

    Krippendorff's alpha (ordinal and interval, ``value_domain = label_set``) and the item
    means of entropy, 3-group entropy, Gini impurity, pairwise-annotator disagreement and
    majority share; pairwise label sets (with negative values) add the mean ``p_disagree``.
    Means run over items with a defined value (n >= 1; n >= 2 for pairwise-annotator
    disagreement); ``None`` when there is none.
    """
    label_set = np.asarray(label_set).ravel()
    counts = count_matrix(item_index, value, label_set, n_items)
    summary: dict[str, float | None] = {
        "krippendorff_alpha_ordinal": krippendorff_alpha(
            item_index, annotator_index, value, "ordinal", label_set
        ),
        "krippendorff_alpha_interval": krippendorff_alpha(
            item_index, annotator_index, value, "interval", label_set
        ),
        "mean_entropy_bits": _nan_mean(entropy_bits(counts)),
        "mean_grouped_entropy_bits": None,
        "mean_gini_impurity": _nan_mean(gini_impurity(counts)),
        "mean_pairwise_annotator_disagreement": _nan_mean(pairwise_annotator_disagreement(counts)),
        "mean_majority_share": _nan_mean(majority_share(counts)),
    }
    if label_set.size == THREE_GROUPS.size:
        summary["mean_grouped_entropy_bits"] = _nan_mean(grouped_entropy_bits(counts, THREE_GROUPS))
    if label_set.min() < 0:
        summary["mean_p_disagree"] = _nan_mean(pairwise_agreement(counts, label_set)["p_disagree"])
    return summary


# --------------------------------------------------------------------------------------------
# Per annotator
# --------------------------------------------------------------------------------------------


class AnnotatorCrowdAgreement(NamedTuple):
    """Per annotator (index = annotator): labels given, labels compared, crowd Spearman."""

    n_labels: np.ndarray  # (n_annotators,) labels given
    n_compared: np.ndarray  # (n_annotators,) labels on items that have other labels too
    crowd_spearman: list[CorrelationResult]


def leave_one_out_means(item_index: np.ndarray, value: np.ndarray, n_items: int) -> np.ndarray:
    """For each label, the mean of the *other* labels of its item: ``(S_i - v) / (n_i - 1)``.

    ``S_i``, ``n_i`` = sum and number of labels of item ``i``. ``NaN`` where ``n_i < 2``.
    """
    item_index = np.asarray(item_index, dtype=np.int64).ravel()
    value = np.asarray(value, dtype=np.float64).ravel()
    item_sum = np.bincount(item_index, weights=value, minlength=n_items)
    item_n = np.bincount(item_index, minlength=n_items)[item_index]
    with np.errstate(divide="ignore", invalid="ignore"):
        others = (item_sum[item_index] - value) / (item_n - 1)
    return np.where(item_n >= 2, others, np.nan)


def annotator_crowd_agreement(
    item_index: np.ndarray,
    annotator_index: np.ndarray,
    value: np.ndarray,
    n_items: int,
    n_annotators: int,
) -> AnnotatorCrowdAgreement:
    """Each annotator's agreement with the crowd (ANALYSIS.md, "Per annotator").

    Spearman (:func:`spearman`) between the annotator's labels and the leave-one-out mean of
    the other annotators on the same items (:func:`leave_one_out_means`, all labels at once);
    items with only this annotator's label are dropped. ``None`` with a reason when fewer than
    3 items remain or either column is constant (e.g. an annotator who always answers 3).
    """
    annotator_index = np.asarray(annotator_index, dtype=np.int64).ravel()
    value = np.asarray(value, dtype=np.float64).ravel()
    others = leave_one_out_means(item_index, value, n_items)
    n_labels = np.bincount(annotator_index, minlength=n_annotators)
    compared = np.isfinite(others)
    compared_annotator = annotator_index[compared]
    n_compared = np.bincount(compared_annotator, minlength=n_annotators)
    order = np.argsort(compared_annotator, kind="stable")
    own = value[compared][order]
    crowd = others[compared][order]
    ends = np.cumsum(n_compared)
    starts = ends - n_compared
    results = [
        spearman(own[start:end], crowd[start:end])
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True)
    ]
    return AnnotatorCrowdAgreement(n_labels, n_compared, results)
