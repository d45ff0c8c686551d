"""Tests of analysis.stats.agreement: Krippendorff's alpha (published values and a
brute-force cross-check), the batch agreement summary and annotator-crowd agreement.

Plain pytest, no database.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.stats import agreement
from analysis.stats.per_item import PAIRWISE_LABELS
from tests.analysis.oracles import VECTOR_TOL, VECTORS, brute_force_alpha

PROPERTY_SETTINGS = settings(max_examples=60, deadline=None)


def reliability_to_arrays(reliability_data: list[list[float | None]]) -> tuple[np.ndarray, ...]:
    """Coders x units table with ``None`` for missing -> (item_index, annotator_index, value)."""
    item_index, annotator_index, value = [], [], []
    for coder, row in enumerate(reliability_data):
        for unit, entry in enumerate(row):
            if entry is not None:
                item_index.append(unit)
                annotator_index.append(coder)
                value.append(entry)
    return np.array(item_index), np.array(annotator_index), np.array(value)


def labels_from_counts(counts: np.ndarray, label_set: np.ndarray) -> tuple[np.ndarray, ...]:
    """Expand a count matrix into (item_index, annotator_index, value) label arrays."""
    item_index, value = [], []
    for item, row in enumerate(counts):
        for label, count in zip(label_set, row, strict=True):
            item_index.extend([item] * int(count))
            value.extend([int(label)] * int(count))
    item_index = np.array(item_index, dtype=np.int64)
    # annotator j of an item = the j-th label of that item: one value per (item, annotator).
    annotator_index = np.zeros(item_index.size, dtype=np.int64)
    for item in np.unique(item_index):
        positions = np.flatnonzero(item_index == item)
        annotator_index[positions] = np.arange(positions.size)
    return item_index, annotator_index, np.array(value, dtype=np.int64)


# --------------------------------------------------------------------------------------------
# Krippendorff's alpha
# --------------------------------------------------------------------------------------------


def krippendorff_params() -> list:
    return [
        pytest.param(case, level, id=f"{case['id']}-{level}")
        for case in VECTORS["krippendorff_alpha"]
        for level in case["expected"]
    ]


@pytest.mark.parametrize(("case", "level"), krippendorff_params())
def test_krippendorff_alpha_reference(case: dict, level: str) -> None:
    item_index, annotator_index, value = reliability_to_arrays(case["reliability_data"])
    expected = case["expected"][level]
    alpha = agreement.krippendorff_alpha(
        item_index, annotator_index, value, level, case.get("value_domain")
    )
    assert alpha == pytest.approx(expected["expected"], abs=VECTOR_TOL)
    assert alpha == pytest.approx(float(Fraction(expected["exact_fraction"])), abs=1e-12)


label_tables = st.lists(
    st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=4, max_size=4),
    min_size=2,
    max_size=12,
)


@PROPERTY_SETTINGS
@given(table=label_tables, level=st.sampled_from(["nominal", "ordinal", "interval"]))
def test_krippendorff_matches_brute_force(table: list[list[int | None]], level: str) -> None:
    units: dict[int, list[int]] = {}
    for unit, row in enumerate(table):
        units[unit] = [v for v in row if v is not None]
    expected = None
    if sum(len(u) for u in units.values() if len(u) >= 2) >= 2:
        expected = brute_force_alpha({u: v for u, v in units.items() if len(v) >= 2}, level)
    # table rows are units here, columns coders: transpose for the helper.
    coders_by_units = [list(column) for column in zip(*table, strict=True)]
    item_index, annotator_index, value = reliability_to_arrays(coders_by_units)
    alpha = agreement.krippendorff_alpha(item_index, annotator_index, value, level, range(1, 6))
    if expected is None:
        assert alpha is None
    else:
        assert alpha == pytest.approx(expected, abs=1e-9)


def test_krippendorff_edge_cases() -> None:
    items, coders = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    alpha = agreement.krippendorff_alpha
    assert alpha(items, coders, np.array([2, 2, 4, 4])) == 1.0
    assert alpha(items, coders, np.array([3, 3, 3, 3])) is None
    assert alpha(np.array([0, 1]), np.array([0, 0]), np.array([1, 2])) is None
    with pytest.raises(ValueError, match="more than one value"):
        alpha(np.array([0, 0]), np.array([1, 1]), np.array([1, 2]))
    with pytest.raises(ValueError, match="not in the label set"):
        alpha(items, coders, np.array([1, 2, 3, 9]), value_domain=range(1, 6))
    with pytest.raises(ValueError, match="non-negative"):
        alpha(items, coders, np.array([-1, 2, 1, 1]), "ratio")


def test_krippendorff_unobserved_domain_values_change_nothing() -> None:
    case = next(c for c in VECTORS["krippendorff_alpha"] if c["id"] == "wikipedia_3x15")
    item_index, annotator_index, value = reliability_to_arrays(case["reliability_data"])
    for level in ("nominal", "ordinal", "interval"):
        assert agreement.krippendorff_alpha(
            item_index, annotator_index, value, level
        ) == pytest.approx(
            agreement.krippendorff_alpha(item_index, annotator_index, value, level, range(1, 6)),
            abs=1e-12,
        )


# --------------------------------------------------------------------------------------------
# Per annotator and batch agreement
# --------------------------------------------------------------------------------------------


def test_leave_one_out_means_hand_computed() -> None:
    item_index = np.array([0, 0, 0, 1, 2, 2])
    value = np.array([1, 2, 6, 3, 4, 5])
    others = agreement.leave_one_out_means(item_index, value, 3)
    np.testing.assert_allclose(others, [4.0, 3.5, 1.5, np.nan, 5.0, 4.0])


def test_annotator_crowd_agreement() -> None:
    rng = np.random.default_rng(6)
    n_items, n_annotators = 12, 5
    item_index = np.repeat(np.arange(n_items), n_annotators)
    annotator_index = np.tile(np.arange(n_annotators), n_items)
    quality = rng.integers(1, 6, n_items)
    value = np.clip(quality[item_index] + rng.integers(-1, 2, item_index.size), 1, 5)
    value[annotator_index == 3] = 3  # an annotator who always answers 3
    keep = ~((annotator_index == 4) & (item_index >= 2))  # annotator 4 labels only 2 items
    item_index, annotator_index, value = item_index[keep], annotator_index[keep], value[keep]

    result = agreement.annotator_crowd_agreement(
        item_index, annotator_index, value, n_items, n_annotators + 1
    )
    assert result.n_labels.tolist() == [12, 12, 12, 12, 2, 0]
    assert result.n_compared.tolist() == [12, 12, 12, 12, 2, 0]
    for annotator in range(3):
        own = annotator_index == annotator
        others = [np.mean(value[(item_index == item) & ~own]) for item in item_index[own]]
        expected = scipy.stats.spearmanr(value[own], others)
        assert result.crowd_spearman[annotator].r == pytest.approx(expected.statistic, abs=1e-9)
        assert result.crowd_spearman[annotator].p == pytest.approx(expected.pvalue, abs=1e-9)
    assert result.crowd_spearman[3].reason.startswith("x is constant")
    assert result.crowd_spearman[4].reason == "fewer than 3 items (n=2)"
    assert result.crowd_spearman[5].reason == "fewer than 3 items (n=0)"


def test_agreement_summary_is_json_safe() -> None:
    counts = np.array([[6, 7, 4, 5, 3], [0, 0, 25, 0, 0], [0, 0, 0, 0, 0], [10, 5, 3, 4, 3]])
    item_index, annotator_index, value = labels_from_counts(counts, PAIRWISE_LABELS)
    summary = agreement.agreement_summary(
        item_index, annotator_index, value, PAIRWISE_LABELS, n_items=4
    )
    assert set(summary._fields) >= {
        "krippendorff_alpha_ordinal",
        "krippendorff_alpha_interval",
        "mean_entropy_bits",
        "mean_grouped_entropy_bits",
        "mean_gini_impurity",
        "mean_pairwise_annotator_disagreement",
        "mean_majority_share",
        "mean_p_disagree",
    }
    json.dumps(summary._asdict(), allow_nan=False)
    assert summary.mean_p_disagree == pytest.approx((0.4 + 0.5 + 0.34) / 3)
