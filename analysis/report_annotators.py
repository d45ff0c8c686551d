"""The report's ``annotators`` entries (ANALYSIS.md, "Per annotator"): labels given, median
time, attention checks and each annotator's agreement with the crowd. Pure, as
``analysis.reports``."""

from __future__ import annotations

from typing import NotRequired, TypedDict

import numpy as np

from analysis import stats
from analysis.loading import BatchArrays
from analysis.stats.grouped_correlation import order_within_groups


class AnnotatorEntry(TypedDict):
    """One annotator; ``reason`` is present when the crowd Spearman is undefined."""

    annotator: str
    n_labels: int
    n_compared: int
    crowd_spearman: float | None
    crowd_spearman_p: float | None
    crowd_spearman_p_method: str | None
    median_duration_ms: float | None
    attention_checks_passed: int
    attention_checks_failed: int
    reason: NotRequired[str | None]


def _number(value) -> float | None:
    """A finite float, or ``None`` for a missing, NaN or infinite value (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def annotator_entries(arrays: BatchArrays) -> list[AnnotatorEntry]:
    crowd = stats.annotator_crowd_agreement(
        arrays.item_index,
        arrays.annotator_index,
        arrays.value,
        arrays.n_items,
        arrays.n_annotators,
    )
    medians = _median_by_group(arrays.annotator_index, arrays.duration_ms, arrays.n_annotators)
    entries = []
    for index, pseudonym in enumerate(arrays.annotators):
        result = crowd.crowd_spearman[index]
        entry: AnnotatorEntry = {
            "annotator": pseudonym,
            "n_labels": int(crowd.n_labels[index]),
            "n_compared": int(crowd.n_compared[index]),
            "crowd_spearman": _number(result.r),
            "crowd_spearman_p": _number(result.p),
            "crowd_spearman_p_method": result.p_method,
            "median_duration_ms": _number(medians[index]),
            "attention_checks_passed": int(arrays.checks_passed[index]),
            "attention_checks_failed": int(arrays.checks_failed[index]),
        }
        if result.r is None:
            entry["reason"] = result.reason
        entries.append(entry)
    return entries


def _median_by_group(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Median of ``values`` per group, ignoring NaN; NaN for a group without values.

    The mean of the two middle values of each group's sorted values, as ``np.nanmedian``.
    """
    known = np.isfinite(values)
    group, values = group[known], values[known]
    order = order_within_groups(values, group, n_groups)
    group, values = group[order], values[order]
    sizes = np.bincount(group, minlength=n_groups)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    medians = np.full(n_groups, np.nan)
    has = sizes > 0
    low = starts[has] + (sizes[has] - 1) // 2
    high = starts[has] + sizes[has] // 2
    medians[has] = (values[low] + values[high]) / 2
    return medians
