"""Artefacts of the instrument and the consistency of the people: position bias in
pairwise judgments, test–retest agreement from repeated items, and agreement within and
across groups of annotators (from the background questionnaire). ANALYSIS.md, "Validity".

Pure functions over arrays; results are small dataclasses whose undefined figures are
``None`` (never NaN).
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from analysis.stats.per_item import count_matrix, entropy_bits

__all__ = [
    "AnnotatorBias",
    "GroupFigures",
    "PositionBias",
    "RetestAgreement",
    "group_breakdown",
    "position_bias",
    "retest_agreement",
]

# order codes of a pairwise label: which imported response was shown first
A_FIRST, B_FIRST = 1, 2


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if values.size else None


def _binomial_p(k: int, n: int) -> float | None:
    """Two-sided exact binomial test of k successes in n against p = 1/2."""
    return float(scipy_stats.binomtest(k, n, 0.5).pvalue) if n else None


@dataclass(frozen=True)
class AnnotatorBias:
    annotator: int
    n_choices: int  # non-tie labels
    first_share: float | None
    p_value: float | None


@dataclass(frozen=True)
class PositionBias:
    n_choices: int
    first_share: float | None
    p_value: float | None
    mean_value_a_first: float | None
    mean_value_b_first: float | None
    n_a_first: int
    n_b_first: int
    annotators: list[AnnotatorBias]


def position_bias(
    order: np.ndarray, value: np.ndarray, annotator_index: np.ndarray, n_annotators: int
) -> PositionBias:
    """How often a pairwise choice favours the response shown first.

    ``order`` is ``A_FIRST`` or ``B_FIRST`` per label, ``value`` the canonical label
    (+2 … −2, positive = A better). A non-tie label favours the first-shown response when
    A was first and value > 0, or B was first and value < 0. The share of non-tie labels
    that do, with a two-sided exact binomial test against 1/2, for the batch and per
    annotator; and the mean canonical value of the labels given with A first and with B
    first (a position effect pulls them apart).
    """
    order = np.asarray(order)
    value = np.asarray(value)
    annotator_index = np.asarray(annotator_index)
    shown = order > 0
    order, value, annotator_index = order[shown], value[shown], annotator_index[shown]
    choice = value != 0
    favours_first = ((order == A_FIRST) & (value > 0)) | ((order == B_FIRST) & (value < 0))
    n_choices = int(choice.sum())
    k = int((favours_first & choice).sum())
    per_annotator = []
    if annotator_index.size:
        counts = np.bincount(annotator_index[choice], minlength=n_annotators)
        firsts = np.bincount(annotator_index[choice & favours_first], minlength=n_annotators)
        for annotator in range(n_annotators):
            n = int(counts[annotator])
            per_annotator.append(
                AnnotatorBias(
                    annotator,
                    n,
                    int(firsts[annotator]) / n if n else None,
                    _binomial_p(int(firsts[annotator]), n),
                )
            )
    return PositionBias(
        n_choices=n_choices,
        first_share=k / n_choices if n_choices else None,
        p_value=_binomial_p(k, n_choices),
        mean_value_a_first=_mean(value[order == A_FIRST].astype(float)),
        mean_value_b_first=_mean(value[order == B_FIRST].astype(float)),
        n_a_first=int((order == A_FIRST).sum()),
        n_b_first=int((order == B_FIRST).sum()),
        annotators=per_annotator,
    )


@dataclass(frozen=True)
class RetestAgreement:
    n_pairs: int
    exact_share: float | None
    mean_abs_difference: float | None
    sign_agreement: float | None  # pairwise only: same side (A, tie, B)


def retest_agreement(first: np.ndarray, second: np.ndarray, *, signed: bool) -> RetestAgreement:
    """Agreement of an annotator's label with their own label of the same item shown
    again: the share of exact matches, the mean absolute difference, and — for signed
    (pairwise) labels — the share on the same side (sign(first) == sign(second))."""
    first = np.asarray(first, dtype=float)
    second = np.asarray(second, dtype=float)
    n = int(first.size)
    if not n:
        return RetestAgreement(0, None, None, None)
    return RetestAgreement(
        n_pairs=n,
        exact_share=float(np.mean(first == second)),
        mean_abs_difference=float(np.mean(np.abs(first - second))),
        sign_agreement=float(np.mean(np.sign(first) == np.sign(second))) if signed else None,
    )


@dataclass(frozen=True)
class GroupFigures:
    group: str
    n_annotators: int
    n_labels: int
    suppressed: bool  # fewer annotators than the minimum: figures withheld
    mean_value: float | None
    mean_entropy_within: float | None
    n_items: int  # items with at least two labels from the group


def group_breakdown(
    item_index: np.ndarray,
    annotator_index: np.ndarray,
    value: np.ndarray,
    label_set: np.ndarray,
    n_items: int,
    annotator_group: list[str | None],
    *,
    min_annotators: int,
) -> tuple[list[GroupFigures], float | None]:
    """Mean label and disagreement by group of annotators (e.g. their answer to a
    background question), against the disagreement of everyone.

    For each group: its annotators' mean label, and the mean over items of the entropy of
    the group's own labels of the item (items with at least two of them) — agreement
    *within* the group. Returned with it: the same mean entropy over all labels (items
    with at least two), agreement *across* groups. A group with fewer than
    ``min_annotators`` annotators is listed with its size but its figures withheld.
    Annotators without an answer (``None``) are in no group.
    """
    item_index = np.asarray(item_index)
    annotator_index = np.asarray(annotator_index)
    value = np.asarray(value)
    codes = sorted({group for group in annotator_group if group is not None})
    figures = []
    for group in codes:
        members = np.array(
            [index for index, name in enumerate(annotator_group) if name == group], dtype=int
        )
        mine = np.isin(annotator_index, members)
        n_labels = int(mine.sum())
        if members.size < min_annotators:
            figures.append(GroupFigures(group, int(members.size), n_labels, True, None, None, 0))
            continue
        within, n_judged = _mean_entropy(item_index[mine], value[mine], label_set, n_items)
        figures.append(
            GroupFigures(
                group,
                int(members.size),
                n_labels,
                False,
                _mean(value[mine].astype(float)),
                within,
                n_judged,
            )
        )
    overall, _ = _mean_entropy(item_index, value, label_set, n_items)
    return figures, overall


def _mean_entropy(
    item_index: np.ndarray, value: np.ndarray, label_set: np.ndarray, n_items: int
) -> tuple[float | None, int]:
    counts = count_matrix(item_index, value, label_set, n_items)
    judged = counts.sum(axis=1) >= 2
    if not judged.any():
        return None, 0
    return float(entropy_bits(counts[judged]).mean()), int(judged.sum())
