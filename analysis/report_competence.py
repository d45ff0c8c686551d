"""The ``competence`` section of the analysis report (ANALYSIS.md, "Annotator competence").

Pure: Dawid–Skene and MACE (``analysis.stats.competence``) over the batch's counted labels,
each label as its class in the kind's label set (pairwise: its five choices), and per
annotator the competence of each, MACE's share of labels explained by guessing and the share
of labels equal to the item's majority label.
"""

from __future__ import annotations

import numpy as np

from analysis.loading import BatchArrays
from analysis.stats import competence

ASSUMPTION = (
    "Dawid–Skene and MACE assume one true label per item; on open-ended items, where people "
    "may disagree, they measure consistency with the majority, not correctness."
)
# The review list (the batch's ``review_lowest_competence`` setting): the annotators of lowest
# MACE competence among those with enough labels for it to mean something. It is a list to
# look at, never an exclusion.
REVIEW_MIN_LABELS = 10


def _number(value) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None


def competence_entry(arrays: BatchArrays) -> dict | None:
    """The report's ``competence``; ``None`` for a batch without counted labels."""
    if arrays.value.size == 0:
        return None
    classes = arrays.label_set
    label = np.searchsorted(classes, arrays.value)
    n_classes = classes.size
    args = (arrays.item_index, arrays.annotator_index, label, arrays.n_items, arrays.n_annotators)
    dawid_skene = competence.dawid_skene(*args, n_classes)
    mace = competence.mace(*args, n_classes)
    counts = np.bincount(
        arrays.item_index * n_classes + label, minlength=arrays.n_items * n_classes
    )
    counts = counts.reshape(arrays.n_items, n_classes).astype(np.float64)
    agreement = competence.majority_agreement(
        arrays.item_index, arrays.annotator_index, label, counts, arrays.n_annotators
    )
    n_labels = np.bincount(arrays.annotator_index, minlength=arrays.n_annotators)
    annotators = []
    for index, pseudonym in enumerate(arrays.annotators):
        if not n_labels[index]:
            continue
        annotators.append(
            {
                "annotator": pseudonym,
                "n_labels": int(n_labels[index]),
                "dawid_skene_competence": _number(dawid_skene.competence[index]),
                "mace_competence": _number(mace.competence[index]),
                "mace_spam_share": _number(mace.spam_share[index]),
                "mace_strategy_label": str(int(classes[np.argmax(mace.strategy[index])])),
                "majority_agreement": _number(agreement[index]),
            }
        )
    return {
        "assumption": ASSUMPTION,
        "classes": [str(int(value)) for value in classes],
        "dawid_skene": {"iterations": dawid_skene.iterations, "converged": dawid_skene.converged},
        "mace": {"iterations": mace.iterations, "converged": mace.converged},
        "review": review_entry(annotators, None),
        "annotators": annotators,
    }


def review_entry(annotators: list[dict], size: int | None) -> dict:
    """The competence section's ``review``: the ``size`` annotators of lowest MACE
    competence among those with at least ``REVIEW_MIN_LABELS`` counted labels, lowest first
    (ties by pseudonym); none when ``size`` is ``None`` (the batch asks for no list).

    A list for someone to read those annotators' labels, never an exclusion."""
    eligible = [
        entry
        for entry in annotators
        if entry["n_labels"] >= REVIEW_MIN_LABELS and entry["mace_competence"] is not None
    ]
    eligible.sort(key=lambda entry: (entry["mace_competence"], entry["annotator"]))
    return {
        "size": size,
        "min_labels": REVIEW_MIN_LABELS,
        "lowest": [entry["annotator"] for entry in eligible[: size or 0]],
    }
