"""The report's ``validity`` section (ANALYSIS.md, "Validity of the instrument"): position
bias of pairwise batches, test–retest agreement of repeated items and the questionnaire
groups, from ``analysis.stats.consistency``. Pure, as ``analysis.reports``."""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from analysis import stats
from analysis.loading import BatchArrays


class PositionBiasEntry(TypedDict):
    n_choices: int
    first_share: float | None
    p: float | None
    mean_value_a_first: float | None
    mean_value_b_first: float | None
    n_a_first: int
    n_b_first: int
    annotators: list[dict]
    strongly_biased: list[str]


class RetestFigures(TypedDict):
    n_pairs: int
    exact_share: float | None
    mean_abs_difference: float | None
    sign_agreement: float | None


class RetestEntry(TypedDict):
    batch: RetestFigures
    annotators: list[dict]


class GroupsEntry(TypedDict):
    question: str
    text: str
    min_annotators: int
    mean_entropy_all: float | None
    groups: list[dict]
    questions: list[str]


class Validity(TypedDict):
    position_bias: PositionBiasEntry | None
    test_retest: RetestEntry | None
    groups: GroupsEntry | None


def _number(value) -> float | None:
    """A finite float, or ``None`` for a missing, NaN or infinite value (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


# Annotators with fewer non-tie choices say little about their own position bias.
MIN_CHOICES_FOR_BIAS = 10
# Strong position bias: the first-shown response wins this share of choices or more,
# with the binomial test below this p-value.
STRONG_BIAS_SHARE = 0.75
STRONG_BIAS_P = 0.01
# A group of annotators smaller than this is listed with its size, its figures withheld.
MIN_GROUP_ANNOTATORS = 5


def validity_entry(arrays: BatchArrays, group_by: str | None) -> Validity:
    """Position bias (pairwise), test–retest agreement and the questionnaire breakdown."""
    return {
        "position_bias": _position_bias_entry(arrays) if arrays.comparison else None,
        "test_retest": _retest_entry(arrays),
        "groups": _groups_entry(arrays, group_by),
    }


def _position_bias_entry(arrays: BatchArrays) -> PositionBiasEntry:
    bias = stats.position_bias(
        arrays.shown_order, arrays.value, arrays.annotator_index, arrays.n_annotators
    )
    annotators = [
        {
            "annotator": arrays.annotators[entry.annotator],
            "n_choices": entry.n_choices,
            "first_share": _number(entry.first_share),
            "p": _number(entry.p_value),
            "strong": bool(
                entry.n_choices >= MIN_CHOICES_FOR_BIAS
                and entry.first_share is not None
                and max(entry.first_share, 1 - entry.first_share) >= STRONG_BIAS_SHARE
                and entry.p_value is not None
                and entry.p_value < STRONG_BIAS_P
            ),
        }
        for entry in bias.annotators
        if entry.n_choices
    ]
    return {
        "n_choices": bias.n_choices,
        "first_share": _number(bias.first_share),
        "p": _number(bias.p_value),
        "mean_value_a_first": _number(bias.mean_value_a_first),
        "mean_value_b_first": _number(bias.mean_value_b_first),
        "n_a_first": bias.n_a_first,
        "n_b_first": bias.n_b_first,
        "annotators": annotators,
        "strongly_biased": [entry["annotator"] for entry in annotators if entry["strong"]],
    }


def _retest_figures(result: stats.RetestAgreement) -> RetestFigures:
    return {
        "n_pairs": result.n_pairs,
        "exact_share": _number(result.exact_share),
        "mean_abs_difference": _number(result.mean_abs_difference),
        "sign_agreement": _number(result.sign_agreement),
    }


def _retest_entry(arrays: BatchArrays) -> RetestEntry | None:
    if not len(arrays.repeats):
        return None
    signed = arrays.comparison
    pairs = arrays.repeats
    annotators = []
    for index in np.unique(pairs[:, 0]).tolist():
        mine = pairs[pairs[:, 0] == index]
        entry = _retest_figures(stats.retest_agreement(mine[:, 1], mine[:, 2], signed=signed))
        annotators.append({"annotator": arrays.annotators[index], **entry})
    return {
        "batch": _retest_figures(stats.retest_agreement(pairs[:, 1], pairs[:, 2], signed=signed)),
        "annotators": annotators,
    }


def _groups_entry(arrays: BatchArrays, group_by: str | None) -> GroupsEntry | None:
    if not arrays.questions:
        return None
    question = next((q for q in arrays.questions if q["id"] == group_by), arrays.questions[0])
    figures, overall = stats.group_breakdown(
        arrays.item_index,
        arrays.annotator_index,
        arrays.value,
        arrays.label_set,
        arrays.n_items,
        arrays.answers.get(question["id"], []),
        min_annotators=MIN_GROUP_ANNOTATORS,
    )
    return {
        "question": question["id"],
        "text": question["text"],
        "min_annotators": MIN_GROUP_ANNOTATORS,
        "mean_entropy_all": _number(overall),
        "groups": [
            {
                "group": entry.group,
                "n_annotators": entry.n_annotators,
                "n_labels": entry.n_labels,
                "suppressed": entry.suppressed,
                "mean_value": _number(entry.mean_value),
                "mean_entropy_within": _number(entry.mean_entropy_within),
                "n_items": entry.n_items,
            }
            for entry in figures
        ],
        "questions": [q["id"] for q in arrays.questions],
    }
