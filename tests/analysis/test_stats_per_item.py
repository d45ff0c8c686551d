"""Tests of analysis.stats.per_item: reference vectors, hand-computed items, properties.

Plain pytest, no database.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.stats import per_item
from analysis.stats.subsets import most_ties_subsets, top_entropy_subsets, tukey_subsets
from tests.analysis.oracles import VECTOR_TOL, VECTORS, vector_params

PROPERTY_SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def label_batches(draw: st.DrawFn, label_set: np.ndarray = per_item.ABSOLUTE_LABELS) -> tuple:
    """A batch as (item_index, value, n_items): each item gets 0..12 labels."""
    n_items = draw(st.integers(1, 10))
    item_index, value = [], []
    for item in range(n_items):
        labels = draw(st.lists(st.sampled_from(label_set.tolist()), max_size=12))
        item_index.extend([item] * len(labels))
        value.extend(labels)
    return np.array(item_index, dtype=np.int64), np.array(value, dtype=np.int64), n_items


# --------------------------------------------------------------------------------------------
# Reference vectors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", vector_params("entropy", "cases"))
def test_entropy_reference(case: dict) -> None:
    counts = np.array([case["counts"]])
    assert per_item.entropy_bits(counts)[0] == pytest.approx(
        case["expected"]["bits"], abs=VECTOR_TOL
    )


def test_entropy_closed_forms() -> None:
    closed = VECTORS["entropy"]["closed_forms"]
    assert per_item.entropy_bits(np.ones((1, 2)))[0] == pytest.approx(closed["fair_coin_bits"])
    assert per_item.entropy_bits(np.ones((1, 6)))[0] == pytest.approx(closed["fair_die_bits"])
    assert per_item.entropy_bits(np.ones((1, 5)))[0] == pytest.approx(
        closed["uniform5_bits"], abs=VECTOR_TOL
    )


@pytest.mark.parametrize("case", vector_params("percentage_disagreement", "cases"))
def test_percentage_disagreement_reference(case: dict) -> None:
    # The vectors order counts +2, +1, 0, -1, -2; PAIRWISE_LABELS is -2..2.
    counts = np.array([case["counts_strongA_weakA_tie_weakB_strongB"][::-1]])
    result = per_item.pairwise_agreement(counts, per_item.PAIRWISE_LABELS)
    p_disagree = result["p_disagree"][0]
    assert p_disagree == pytest.approx(case["expected"], abs=VECTOR_TOL)
    assert p_disagree == pytest.approx(float(Fraction(case["exact_fraction"])), abs=1e-12)
    assert result["agreement"][0] + p_disagree == pytest.approx(1.0, abs=1e-12)


def test_reference_copy_matches_the_shared_file_when_present():
    shared = Path(__file__).resolve().parents[3] / "shared" / "reference" / "stat_vectors.json"
    if not shared.exists():
        pytest.skip(f"no shared reference folder next to the repository ({shared})")
    assert json.loads(shared.read_text()) == VECTORS


# --------------------------------------------------------------------------------------------
# Hand computed
# --------------------------------------------------------------------------------------------


def test_count_matrix_counts_over_fixed_label_set() -> None:
    counts = per_item.count_matrix(
        item_index=np.array([0, 0, 0, 2, 2]),
        value=np.array([1, 5, 5, 3, 3]),
        label_set=per_item.ABSOLUTE_LABELS,
        n_items=3,
    )
    assert counts.tolist() == [[1, 0, 0, 0, 2], [0, 0, 0, 0, 0], [0, 0, 2, 0, 0]]


def test_count_matrix_rejects_values_outside_label_set() -> None:
    with pytest.raises(ValueError, match="not in the label set"):
        per_item.count_matrix(np.array([0, 0]), np.array([1, 6]), per_item.ABSOLUTE_LABELS, 1)


def test_count_matrix_pairwise_column_order() -> None:
    counts = per_item.count_matrix(
        np.array([0, 0, 0, 0]), np.array([2, -2, 0, 2]), per_item.PAIRWISE_LABELS, 1
    )
    assert counts.tolist() == [[1, 0, 1, 0, 2]]


def test_item_summary_hand_computed() -> None:
    counts = np.array([[2, 0, 0, 0, 1], [0, 0, 0, 0, 0], [0, 0, 4, 0, 0]])
    summary = per_item.item_summary(counts, per_item.ABSOLUTE_LABELS)
    assert summary["n"].tolist() == [3, 0, 4]
    assert summary["mean"][0] == pytest.approx(7 / 3)
    assert summary["std"][0] == pytest.approx(np.std([1, 1, 5]))  # population std, ddof=0
    assert summary["entropy_bits"][0] == pytest.approx(
        -(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3)
    )
    assert (summary["mean"][2], summary["std"][2], summary["entropy_bits"][2]) == (3.0, 0.0, 0.0)
    assert all(np.isnan(summary[key][1]) for key in ("mean", "std", "entropy_bits"))


def test_pairwise_agreement_hand_computed() -> None:
    # -2, -1, 0, +1, +2 columns: C_B = 3, C_tie = 2, C_A = 5.
    counts = np.array([[1, 2, 2, 4, 1]])
    result = per_item.pairwise_agreement(counts, per_item.PAIRWISE_LABELS)
    assert result["agreement"][0] == pytest.approx((5 + 1) / 10)
    assert result["p_disagree"][0] == pytest.approx(0.4)
    assert (result["count_a"][0], result["count_b"][0], result["count_tie"][0]) == (5, 3, 2)


def test_disagreement_alternatives_hand_computed() -> None:
    counts = np.array([[2, 3, 5, 10, 5]])
    grouped = per_item.grouped_entropy_bits(counts, per_item.THREE_GROUPS)[0]
    assert grouped == pytest.approx(-2 * 0.2 * math.log2(0.2) - 0.6 * math.log2(0.6))
    assert per_item.gini_impurity(counts)[0] == pytest.approx(1 - 163 / 625)
    assert per_item.pairwise_annotator_disagreement(counts)[0] == pytest.approx(1 - 138 / 600)
    assert per_item.majority_share(counts)[0] == pytest.approx(1 - 10 / 25)


def test_pairwise_annotator_disagreement_matches_counting_pairs() -> None:
    labels = [1, 1, 2, 4, 4, 4, 5]
    pairs = list(itertools.combinations(labels, 2))
    expected = sum(a != b for a, b in pairs) / len(pairs)
    counts = per_item.count_matrix(np.zeros(7, int), np.array(labels), per_item.ABSOLUTE_LABELS, 1)
    assert per_item.pairwise_annotator_disagreement(counts)[0] == pytest.approx(expected)


def test_per_item_alternatives_undefined_items_are_nan() -> None:
    counts = np.array([[0, 0, 0, 0, 0], [0, 1, 0, 0, 0]])
    assert np.isnan(per_item.gini_impurity(counts)[0])
    assert np.isnan(per_item.majority_share(counts)[0])
    assert np.isnan(per_item.pairwise_annotator_disagreement(counts)).all()  # n < 2
    assert per_item.majority_share(counts)[1] == 0.0


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(counts=st.lists(st.lists(st.integers(0, 30), min_size=5, max_size=5), min_size=1))
def test_entropy_bounds(counts: list[list[int]]) -> None:
    counts = np.array(counts)
    entropy = per_item.entropy_bits(counts)
    labelled = counts.sum(axis=1) > 0
    assert np.all(entropy[labelled] >= 0) and np.all(entropy[labelled] <= math.log2(5))
    assert np.isnan(entropy[~labelled]).all()
    grouped = per_item.grouped_entropy_bits(counts, per_item.THREE_GROUPS)[labelled]
    assert np.all(grouped >= 0) and np.all(grouped <= math.log2(3))
    assert np.all(grouped <= entropy[labelled] + 1e-12)  # merging labels cannot add entropy


@PROPERTY_SETTINGS
@given(batch=label_batches(), data=st.data())
def test_invariant_to_label_order_and_item_order(batch: tuple, data: st.DataObject) -> None:
    item_index, value, n_items = batch
    labels = per_item.ABSOLUTE_LABELS
    counts = per_item.count_matrix(item_index, value, labels, n_items)
    summary = per_item.item_summary(counts, labels)
    subsets = {
        **tukey_subsets(summary["mean"]),
        **top_entropy_subsets(summary["entropy_bits"]),
    }

    shuffle = np.array(data.draw(st.permutations(range(item_index.size))), dtype=np.int64)
    shuffled_counts = per_item.count_matrix(item_index[shuffle], value[shuffle], labels, n_items)
    np.testing.assert_array_equal(shuffled_counts, counts)

    item_perm = np.array(data.draw(st.permutations(range(n_items))), dtype=np.int64)
    # item i becomes item item_perm[i]: new_results[item_perm] == results
    moved = per_item.count_matrix(item_perm[item_index], value, labels, n_items)
    moved_summary = per_item.item_summary(moved, labels)
    for key, array in summary.items():
        np.testing.assert_array_equal(moved_summary[key][item_perm], array)
    moved_subsets = {
        **tukey_subsets(moved_summary["mean"]),
        **top_entropy_subsets(moved_summary["entropy_bits"]),
    }
    for name, mask in subsets.items():
        np.testing.assert_array_equal(moved_subsets[name][item_perm], mask)


@PROPERTY_SETTINGS
@given(batch=label_batches(per_item.PAIRWISE_LABELS))
def test_pairwise_disagreement_bounds(batch: tuple) -> None:
    item_index, value, n_items = batch
    counts = per_item.count_matrix(item_index, value, per_item.PAIRWISE_LABELS, n_items)
    result = per_item.pairwise_agreement(counts, per_item.PAIRWISE_LABELS)
    labelled = counts.sum(axis=1) > 0
    p_disagree = result["p_disagree"][labelled]
    assert np.all(p_disagree >= 0) and np.all(p_disagree <= 0.5)
    np.testing.assert_allclose(result["agreement"][labelled] + p_disagree, 1.0, atol=1e-12)
    assert np.isnan(result["p_disagree"][~labelled]).all()
    for name, mask in most_ties_subsets(result["count_tie"]).items():
        p = int(name.split("_")[2].removesuffix("pct"))
        assert mask.sum() == n_items * p // 100
