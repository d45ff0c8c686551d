"""Agreement across a batch and per annotator (ANALYSIS.md, "Agreement across the batch" and
"Per annotator").

Takes the counted labels as parallel arrays (``item_index``, ``annotator_index``, ``value``;
see :mod:`analysis.stats.per_item`). Krippendorff's alpha is computed from the coincidence
matrix with one matrix product; each annotator's agreement with the crowd from the
leave-one-out means of all labels at once, the Spearman correlations of all annotators from
one grouped computation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np

from analysis.stats.correlation import CorrelationResult
from analysis.stats.grouped_correlation import grouped_spearman
from analysis.stats.per_item import (
    THREE_GROUPS,
    count_matrix,
    entropy_bits,
    gini_impurity,
    grouped_entropy_bits,
    label_columns,
    majority_share,
    pairwise_agreement,
    pairwise_annotator_disagreement,
)

__all__ = [
    "AgreementSummary",
    "AnnotatorCrowdAgreement",
    "KrippendorffLevel",
    "agreement_summary",
    "annotator_crowd_agreement",
    "krippendorff_alpha",
    "leave_one_out_means",
]

KrippendorffLevel = Literal["nominal", "ordinal", "interval", "ratio"]


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
    units = _unit_counts(item_index, annotator_index, value, value_domain)
    if units is None:
        return None
    return _alpha_of(_coincidences(units[0]), units[1], level)


def _unit_counts(
    item_index: np.ndarray,
    annotator_index: np.ndarray,
    value: np.ndarray,
    value_domain: Sequence[float] | np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The checked labels of :func:`krippendorff_alpha` as ``(n_uc, domain)``: each unit's
    count of each domain value (units × categories), and the domain; ``None`` without labels.

    Every level's alpha starts from these counts: computing them once (a sort of all the
    (item, annotator) pairs to check for doubles, the category of every label) serves all.
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
    category = label_columns(value, domain)
    k = domain.size
    # Units are the item indices themselves; items without values give empty rows, which are
    # unpairable and dropped with the others.
    n_units = int(item_index.max()) + 1
    unit_counts = np.bincount(item_index * k + category, minlength=n_units * k).reshape(n_units, k)
    return unit_counts, domain


def _coincidences(unit_counts: np.ndarray) -> np.ndarray | None:
    """Krippendorff's coincidence matrix ``o_ck`` of the pairable units (``m_u >= 2``);
    ``None`` when no unit is pairable."""
    values_per_unit = unit_counts.sum(axis=1)
    pairable = values_per_unit >= 2
    if not pairable.any():
        return None
    unit_counts = unit_counts[pairable].astype(np.float64)
    weighted = unit_counts / (values_per_unit[pairable] - 1)[:, None]
    return weighted.T @ unit_counts - np.diag(weighted.sum(axis=0))


def _alpha_of(
    coincidence: np.ndarray | None, domain: np.ndarray, level: KrippendorffLevel
) -> float | None:
    """Alpha at ``level`` from the coincidence matrix (``None``: no pairable unit)."""
    if coincidence is None:
        return None
    frequency = coincidence.sum(axis=1)
    total = frequency.sum()
    delta2 = _difference_squared(domain, frequency, level)
    observed = (coincidence * delta2).sum()
    expected = (np.outer(frequency, frequency) * delta2).sum()
    if expected <= 0:
        return None
    return float(1.0 - (total - 1) * observed / expected)


class AgreementSummary(NamedTuple):
    """Batch-level agreement figures; ``None`` where a figure is undefined or does not apply."""

    krippendorff_alpha_ordinal: float | None
    krippendorff_alpha_interval: float | None
    mean_entropy_bits: float | None
    mean_grouped_entropy_bits: float | None  # None unless the label set has 5 values
    mean_gini_impurity: float | None
    mean_pairwise_annotator_disagreement: float | None
    mean_majority_share: float | None
    mean_p_disagree: float | None  # None unless the label set has negative (pairwise) values


def _nan_mean(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def agreement_summary(
    item_index: np.ndarray,
    annotator_index: np.ndarray,
    value: np.ndarray,
    label_set: np.ndarray,
    n_items: int,
) -> AgreementSummary:
    """Batch-level agreement (ANALYSIS.md, "Agreement across the batch").

    Krippendorff's alpha (ordinal and interval, ``value_domain = label_set``) and the item
    means of entropy, 3-group entropy (:data:`~analysis.stats.per_item.THREE_GROUPS`, for
    5-value label sets), Gini impurity, pairwise-annotator disagreement and majority share;
    pairwise label sets (with negative values) add the mean ``p_disagree``. Means run over
    items with a defined value (n >= 1; n >= 2 for pairwise-annotator disagreement); ``None``
    when there is none.
    """
    label_set = np.asarray(label_set).ravel()
    counts = count_matrix(item_index, value, label_set, n_items)
    grouped = None
    if label_set.size == THREE_GROUPS.size:
        grouped = _nan_mean(grouped_entropy_bits(counts, THREE_GROUPS))
    p_disagree = None
    if label_set.min() < 0:
        p_disagree = _nan_mean(pairwise_agreement(counts, label_set)["p_disagree"])
    # krippendorff_alpha at both levels, from one set of counts and coincidences
    units = _unit_counts(item_index, annotator_index, value, label_set)
    alpha = dict.fromkeys(("ordinal", "interval"))
    if units is not None:
        coincidence = _coincidences(units[0])
        alpha = {level: _alpha_of(coincidence, units[1], level) for level in alpha}
    return AgreementSummary(
        krippendorff_alpha_ordinal=alpha["ordinal"],
        krippendorff_alpha_interval=alpha["interval"],
        mean_entropy_bits=_nan_mean(entropy_bits(counts)),
        mean_grouped_entropy_bits=grouped,
        mean_gini_impurity=_nan_mean(gini_impurity(counts)),
        mean_pairwise_annotator_disagreement=_nan_mean(pairwise_annotator_disagreement(counts)),
        mean_majority_share=_nan_mean(majority_share(counts)),
        mean_p_disagree=p_disagree,
    )


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

    Spearman (:func:`~analysis.stats.correlation.spearman`) between the annotator's labels and
    the leave-one-out mean of the other annotators on the same items
    (:func:`leave_one_out_means`, all labels at once); items with only this annotator's label
    are dropped. ``None`` with a reason when fewer than 3 items remain or either column is
    constant (e.g. an annotator who always answers 3). All annotators' correlations come from
    one :func:`~analysis.stats.grouped_correlation.grouped_spearman`: a batch has thousands of
    annotators, and a call per annotator costs more than the arithmetic.
    """
    annotator_index = np.asarray(annotator_index, dtype=np.int64).ravel()
    value = np.asarray(value, dtype=np.float64).ravel()
    others = leave_one_out_means(item_index, value, n_items)
    n_labels = np.bincount(annotator_index, minlength=n_annotators)
    compared = np.isfinite(others)
    compared_annotator = annotator_index[compared]
    n_compared = np.bincount(compared_annotator, minlength=n_annotators)
    results = grouped_spearman(value[compared], others[compared], compared_annotator, n_annotators)
    return AnnotatorCrowdAgreement(n_labels, n_compared, results)
