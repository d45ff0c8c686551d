"""Tests of analysis.stats.subsets: the subset families and their rules, hand computed.

Plain pytest, no database.
"""

from __future__ import annotations

import numpy as np
import pytest

from analysis.stats import per_item, subsets


def test_subset_names() -> None:
    means = np.linspace(1, 5, 20)
    assert list(subsets.tukey_subsets(means)) == [
        "tukey_k0.5",
        "tukey_k1.0",
        "tukey_k1.5",
        "tukey_k2.0",
        "tukey_k2.5",
        "tukey_k3.0",
    ]
    assert list(subsets.top_entropy_subsets(means)) == [
        f"top_entropy_{p}pct" for p in (2, 4, 6, 8, 10, 12, 14, 16)
    ]
    assert list(subsets.most_ties_subsets(np.arange(20))) == [
        f"most_ties_{p}pct" for p in (60, 65, 70, 75, 80, 85, 90, 95)
    ]
    assert list(subsets.least_agreement_subsets(means)) == [
        f"least_agreement_{p}pct" for p in (60, 65, 70, 75, 80, 85, 90, 95)
    ]


@pytest.mark.parametrize("signed", [False, True])
def test_families_name_exactly_the_subsets_of_a_batch(signed: bool) -> None:
    counts = np.array([[1, 2, 2, 0, 0], [0, 0, 5, 0, 0], [3, 0, 0, 0, 2], [0, 1, 1, 1, 1]])
    summary = per_item.item_summary(counts, per_item.ABSOLUTE_LABELS)
    agreement = per_item.pairwise_agreement(counts, per_item.PAIRWISE_LABELS)
    families = subsets.families_for(signed)
    assert [family.role for family in families] == ["similar", "disagree"]
    assert all(family.signed == signed for family in families)
    names = [name for family in families for name in family.subset_names]
    assert list(subsets.batch_subsets(signed, summary, agreement)) == ["full", *names]
    for family in families:
        assert family.default_subset in family.subset_names
        assert all(name.startswith(family.prefix) for name in family.subset_names)


def test_family_defaults_and_titles() -> None:
    defaults = {
        (family.signed, family.role): family.default_subset for family in subsets.SUBSET_FAMILIES
    }
    assert defaults == {
        (False, "similar"): "tukey_k1.5",
        (False, "disagree"): "top_entropy_10pct",
        (True, "similar"): "most_ties_80pct",
        (True, "disagree"): "least_agreement_80pct",
    }
    assert subsets.TUKEY_FENCES.title == "Similar quality"
    assert subsets.LEAST_AGREEMENT.title == "High disagreement"


def test_tukey_fences_hand_computed() -> None:
    # Q1 = 2.25, Q3 = 4.75 (linear), IQR = 2.5; k = 0.5 -> [1.0, 6.0]; k = 1 -> [-0.25, 7.25].
    means = np.array([3.0, 7.0, 1.0, 5.0, 2.0, 4.0])
    masks = subsets.tukey_subsets(means, ks=(0.5, 1.0))
    assert masks["tukey_k0.5"].tolist() == [True, False, True, True, True, True]
    assert masks["tukey_k1.0"].all()


def test_tukey_keeps_everything_when_all_means_equal() -> None:
    masks = subsets.tukey_subsets(np.full(9, 3.4))
    assert all(mask.all() for mask in masks.values())


def test_tukey_ignores_unlabelled_items() -> None:
    masks = subsets.tukey_subsets(np.array([1.0, np.nan, 1.0, 1.0]))
    assert masks["tukey_k1.5"].tolist() == [True, False, True, True]


def test_top_entropy_keeps_ties_at_threshold() -> None:
    entropy = np.array([1.0, 0.0, 2.0, 1.0, 0.0, 1.0])
    masks = subsets.top_entropy_subsets(entropy, ps=(16, 50))
    # 84th percentile of [0, 0, 1, 1, 1, 2] = 1.2 -> only the 2; median = 1 -> all three 1s.
    assert masks["top_entropy_16pct"].tolist() == [False, False, True, False, False, False]
    assert masks["top_entropy_50pct"].tolist() == [True, False, True, True, False, True]


def test_top_entropy_ties_survive_floating_point() -> None:
    # Same multiset of counts in different columns must give bit-identical entropy.
    counts = np.array(
        [[7, 11, 3, 0, 4], [0, 4, 3, 11, 7], [3, 4, 7, 11, 0], [25, 0, 0, 0, 0], [20, 5, 0, 0, 0]]
    )
    entropy = per_item.entropy_bits(counts)
    assert entropy[0] == entropy[1] == entropy[2]
    masks = subsets.top_entropy_subsets(entropy, ps=(50,))
    assert masks["top_entropy_50pct"].tolist() == [True, True, True, False, False]


def test_most_ties_stable_descending_with_floor() -> None:
    tie_counts = np.array([1, 3, 3, 0, 2, 3, 1])  # N = 7
    masks = subsets.most_ties_subsets(tie_counts, ps=(60, 65, 95))
    # floor(7 * 60 / 100) = 4: the three 3s (items 1, 2, 5), then the 2 (item 4).
    assert np.flatnonzero(masks["most_ties_60pct"]).tolist() == [1, 2, 4, 5]
    assert masks["most_ties_65pct"].sum() == 4  # floor(4.55)
    # floor(6.65) = 6: both 1s (items 0, 6) are in, only the 0 (item 3) is left out.
    assert np.flatnonzero(masks["most_ties_95pct"]).tolist() == [0, 1, 2, 4, 5, 6]
    # floor(7 * 70 / 100) = 4 as well; at 5 items the first of the two 1s (item 0) wins.
    five = subsets.most_ties_subsets(tie_counts, ps=(75,))["most_ties_75pct"]
    assert np.flatnonzero(five).tolist() == [0, 1, 2, 4, 5]


def test_least_agreement_stable_ascending_with_floor() -> None:
    agreement = np.array([0.5, 0.6, 0.5, 0.9, 0.7, 0.6, 0.55])
    masks = subsets.least_agreement_subsets(agreement, ps=(60, 95))
    # order: 0, 2 (0.5), 6 (0.55), 1, 5 (0.6), 4, 3 -> first 4, then first 6.
    assert np.flatnonzero(masks["least_agreement_60pct"]).tolist() == [0, 1, 2, 6]
    assert np.flatnonzero(masks["least_agreement_95pct"]).tolist() == [0, 1, 2, 4, 5, 6]


def test_batch_subsets_leave_out_unlabelled_items() -> None:
    counts = np.array([[0, 0, 0, 0, 0], [1, 2, 2, 0, 0], [0, 0, 5, 0, 0], [3, 0, 0, 0, 2]])
    absolute = subsets.batch_subsets(False, per_item.item_summary(counts, per_item.ABSOLUTE_LABELS))
    assert absolute["full"].tolist() == [False, True, True, True]
    assert not any(mask[0] for mask in absolute.values())
    assert len(absolute) == 1 + 6 + 8

    summary = per_item.item_summary(counts, per_item.PAIRWISE_LABELS)
    pairwise = per_item.pairwise_agreement(counts, per_item.PAIRWISE_LABELS)
    masks = subsets.batch_subsets(True, summary, pairwise)
    assert len(masks) == 1 + 8 + 8
    assert not any(mask[0] for mask in masks.values())
    # N = 3 labelled items, floor(3 * 60 / 100) = 1: item 2 has the most ties (5).
    assert np.flatnonzero(masks["most_ties_60pct"]).tolist() == [2]
