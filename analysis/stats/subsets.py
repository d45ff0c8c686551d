"""Item subsets of a batch (ANALYSIS.md, "Subsets") and the families they come in.

The study reports correlations on the full set and on two families of subsets per kind of
label: one of items of *similar quality* and one of items with *high disagreement*, each at
several thresholds. Ratings of one response (``absolute``) and signed preferences between two
(``pairwise``: +2 … −2) have families of their own; a family says which with ``signed``, so
this module needs no batch kind's name. :data:`SUBSET_FAMILIES` is the one definition of those
families (names, thresholds, ``signed``, role, default subset); the rule functions below name
their subsets from it, and the report page and its charts read it too.

Every rule takes one per-item array (in item order) and returns ``name -> bool mask``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = [
    "LEAST_AGREEMENT",
    "MOST_TIES",
    "PAIRWISE_SUBSET_PERCENTS",
    "ROLE_TITLES",
    "SUBSET_FAMILIES",
    "TOP_ENTROPY",
    "TOP_ENTROPY_PERCENTS",
    "TUKEY_FENCES",
    "TUKEY_KS",
    "SubsetFamily",
    "SubsetRole",
    "batch_subsets",
    "families_for",
    "least_agreement_subsets",
    "most_ties_subsets",
    "top_entropy_subsets",
    "tukey_subsets",
]

SubsetRole = Literal["similar", "disagree"]

TUKEY_KS = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
TOP_ENTROPY_PERCENTS = tuple(range(2, 17, 2))
PAIRWISE_SUBSET_PERCENTS = tuple(range(60, 100, 5))

ROLE_TITLES: dict[SubsetRole, str] = {
    "similar": "Similar quality",
    "disagree": "High disagreement",
}


@dataclass(frozen=True)
class SubsetFamily:
    """One subset rule of ANALYSIS.md and the thresholds it is applied at.

    ``name_template`` is a ``str.format`` template that names the subset of one threshold;
    ``signed`` says whether it is a family of signed preferences between two responses
    (pairwise batches) rather than of ratings of one (absolute batches);
    ``role`` says whether the family selects items of similar quality or with high
    disagreement; ``default`` is the threshold of the subset shown when nobody chose one;
    ``threshold_label`` says in words what the threshold selects.
    """

    name_template: str
    signed: bool
    role: SubsetRole
    thresholds: tuple[float, ...]
    default: float
    threshold_label: str

    @property
    def prefix(self) -> str:
        """The start shared by every subset name of the family, e.g. ``tukey_k``."""
        return self.name_template.partition("{")[0]

    @property
    def title(self) -> str:
        return ROLE_TITLES[self.role]

    def subset_name(self, threshold: float) -> str:
        return self.name_template.format(threshold)

    @property
    def subset_names(self) -> tuple[str, ...]:
        return tuple(self.subset_name(threshold) for threshold in self.thresholds)

    @property
    def default_subset(self) -> str:
        return self.subset_name(self.default)


TUKEY_FENCES = SubsetFamily(
    name_template="tukey_k{:.1f}",
    signed=False,
    role="similar",
    thresholds=TUKEY_KS,
    default=1.5,
    threshold_label="Tukey fence k (smaller: more similar items)",
)
TOP_ENTROPY = SubsetFamily(
    name_template="top_entropy_{}pct",
    signed=False,
    role="disagree",
    thresholds=TOP_ENTROPY_PERCENTS,
    default=10,
    threshold_label="items with the highest entropy",
)
MOST_TIES = SubsetFamily(
    name_template="most_ties_{}pct",
    signed=True,
    role="similar",
    thresholds=PAIRWISE_SUBSET_PERCENTS,
    default=80,
    threshold_label="pairs with the most ties",
)
LEAST_AGREEMENT = SubsetFamily(
    name_template="least_agreement_{}pct",
    signed=True,
    role="disagree",
    thresholds=PAIRWISE_SUBSET_PERCENTS,
    default=80,
    threshold_label="pairs with the least agreement",
)

#: Every family, ratings then preferences, in the order the report lists them: similar
#: quality first.
SUBSET_FAMILIES = (TUKEY_FENCES, TOP_ENTROPY, MOST_TIES, LEAST_AGREEMENT)


def families_for(signed: bool) -> tuple[SubsetFamily, ...]:
    """The subset families of signed preferences (``signed``) or of ratings, in report order."""
    return tuple(family for family in SUBSET_FAMILIES if family.signed == signed)


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
        return {TUKEY_FENCES.subset_name(k): np.zeros(means.shape, dtype=bool) for k in ks}
    q1, q3 = np.percentile(means[labelled], [25, 75])
    iqr = q3 - q1
    return {
        TUKEY_FENCES.subset_name(k): labelled & (means >= q1 - k * iqr) & (means <= q3 + k * iqr)
        for k in ks
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
        name = TOP_ENTROPY.subset_name(p)
        if not labelled.any():
            subsets[name] = np.zeros(entropy.shape, dtype=bool)
            continue
        threshold = np.percentile(entropy[labelled], 100 - p)
        subsets[name] = labelled & (entropy >= threshold)
    return subsets


def _first_share(order: np.ndarray, n_total: int, p: int, shape: tuple[int, ...]) -> np.ndarray:
    """Mask of the first ``floor(n_total p / 100)`` items of ``order`` (integer arithmetic)."""
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
        MOST_TIES.subset_name(p): _first_share(order, len(tie_counts), p, tie_counts.shape)
        for p in ps
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
        LEAST_AGREEMENT.subset_name(p): _first_share(order, n_labelled, p, agreement.shape)
        for p in ps
    }


def batch_subsets(
    signed: bool,
    summary: Mapping[str, np.ndarray],
    pairwise: Mapping[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """All subsets of ANALYSIS.md for one batch, as bool masks over all items.

    ``full`` = items with at least one label; the other rules are applied to the labelled items
    only. Ratings (absolute batches) get ``tukey_k*`` and ``top_entropy_*``; signed preferences
    (``signed``, pairwise batches) get ``most_ties_*`` and ``least_agreement_*``. ``summary`` is
    :func:`~analysis.stats.per_item.item_summary`, ``pairwise`` is
    :func:`~analysis.stats.per_item.pairwise_agreement`.
    """
    labelled = np.asarray(summary["n"]) > 0
    subsets: dict[str, np.ndarray] = {"full": labelled.copy()}
    if not signed:
        rules = {
            **tukey_subsets(np.asarray(summary["mean"])[labelled]),
            **top_entropy_subsets(np.asarray(summary["entropy_bits"])[labelled]),
        }
    else:
        if pairwise is None:
            raise ValueError("pairwise batches need the pairwise_agreement() arrays")
        rules = {
            **most_ties_subsets(np.asarray(pairwise["count_tie"])[labelled]),
            **least_agreement_subsets(np.asarray(pairwise["agreement"])[labelled]),
        }
    for name, local_mask in rules.items():
        mask = np.zeros(labelled.shape, dtype=bool)
        mask[labelled] = local_mask
        subsets[name] = mask
    return subsets
