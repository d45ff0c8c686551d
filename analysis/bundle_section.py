"""The ``bundles`` section of a bundled batch's report (docs/ANALYSIS.md, "Bundles"):
its counted labels read once with their bundle, position and annotator, handed to the
pure statistics of ``analysis.stats.bundles``. ``None`` for a batch without bundles."""

from collections import defaultdict

import numpy as np

from analysis.stats.bundles import (
    distribution,
    idiosyncrasy,
    idiosyncrasy_items,
    kendalls_w,
    position_effect,
    two_way_decomposition,
)
from analysis.stats.correlation import spearman
from analysis.stats.per_item import entropy_bits
from annotation.models import Batch, Label, LabelStatus


def bundle_section(batch: Batch, *, n_resamples: int = 1000, seed: int = 0) -> dict | None:
    if (batch.bundle_by or "none") == "none" or "ratings" not in batch.task_kind.analyses:
        return None
    rows = list(
        Label.objects.filter(batch=batch, status=LabelStatus.COUNTED)
        .exclude(item__bundle="")
        .values_list(
            "item__bundle", "item_id", "item__item_id", "annotator__pseudonym", "value",
            "position_in_bundle",
        )
        .order_by("item__bundle", "item__position", "pk")
    )  # fmt: skip
    if not rows:
        return {"bundle_by": batch.bundle_by, "bundles": [], "note": "no counted labels yet"}
    labels = np.array([row[4] for row in rows], dtype=float)
    has_place = np.array([row[5] is not None for row in rows])
    places = np.array([row[5] if row[5] is not None else -1 for row in rows], dtype=float)
    # one group per participant's bundle, numbered in a stable order (for the shuffles)
    numbering: dict[tuple, int] = {}
    groups = np.array([numbering.setdefault((row[0], row[3]), len(numbering)) for row in rows])
    effect = position_effect(
        labels[has_place], places[has_place], groups[has_place], permutations=n_resamples, seed=seed
    )
    label_set = sorted(batch.label_set)
    by_bundle: dict[str, list] = defaultdict(list)
    for row in rows:
        by_bundle[row[0]].append(row)
    bundles, per_person = [], defaultdict(list)
    for key, members in by_bundle.items():
        items = list(dict.fromkeys(row[2] for row in members))
        people = list(dict.fromkeys(row[3] for row in members))
        table = np.full((len(people), len(items)), np.nan)
        for _, _, item, person, value, _ in members:
            table[people.index(person), items.index(item)] = value
        decomposition = two_way_decomposition(table)
        for person, rho, shared in zip(
            people, idiosyncrasy(table), idiosyncrasy_items(table), strict=True
        ):
            per_person[person].append(
                {"bundle": key, "spearman_with_others": rho, "n_items": shared}
            )
        counts = np.array(
            [
                [np.sum(table[:, column] == value) for value in label_set]
                for column in range(len(items))
            ]
        )
        entropies = entropy_bits(counts) if counts.size else np.array([])
        bundles.append(
            {
                "bundle": key,
                "n_items": len(items),
                "n_participants": len(people),
                "n_complete": int((~np.isnan(table).any(axis=1)).sum()),
                "kendalls_w": kendalls_w(table),
                "mean_item_entropy": float(np.nanmean(entropies)) if entropies.size else None,
                "two_way": None if decomposition is None else vars(decomposition),
            }
        )
    concordance = [
        b for b in bundles if b["kendalls_w"] is not None and b["mean_item_entropy"] is not None
    ]
    relation = spearman(
        np.array([b["kendalls_w"] for b in concordance], dtype=float),
        np.array([b["mean_item_entropy"] for b in concordance], dtype=float),
    )
    return {
        "bundle_by": batch.bundle_by,
        "bundle_order": batch.bundle_order,
        "position_effect": vars(effect),
        "summary": _summary(bundles, per_person),
        "w_versus_entropy": {
            "n_bundles": relation.n,
            "spearman_rho": relation.r,
            "p": relation.p,
            "reason": relation.reason,
        },
        "bundles": bundles,
        "participants": [
            {"annotator": person, "bundles": entries} for person, entries in per_person.items()
        ],
    }


def _summary(bundles: list[dict], per_person: dict[str, list]) -> dict:
    """How each per-bundle figure spreads over the bundles, and the idiosyncrasy over every
    (participant, bundle); ``None`` where no value is defined."""

    def spread(values) -> dict | None:
        found = distribution(values)
        return None if found is None else vars(found)

    decompositions = [entry["two_way"] or {} for entry in bundles]
    return {
        "kendalls_w": spread(entry["kendalls_w"] for entry in bundles),
        **{
            key: spread(figures.get(key) for figures in decompositions)
            for key in ("participant_share", "icc_2_1", "icc_3_1")
        },
        "spearman_with_others": spread(
            entry["spearman_with_others"] for entries in per_person.values() for entry in entries
        ),
    }
