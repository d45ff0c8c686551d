"""The ``rankings`` section of the analysis report (ANALYSIS.md, "Model rankings").

Pure: turns ``BatchArrays`` into the JSON-ready section with ``analysis.stats.rankings``.
The section exists only when items name their models (``Response.model``); a batch whose
items name none gets no ``rankings`` key at all, so its report is what it was, and costs
nothing more than a look at the names.
"""

from __future__ import annotations

import numpy as np

from analysis.loading import BatchArrays
from analysis.stats import families_for, rankings

# Strong preferences (|label| = 2) count as one win: win / tie / loss (the documented
# alternative, 2, weighs them twice; see ANALYSIS.md).
STRONG_WEIGHT = 1.0


def _number(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def _pair(values) -> list[float] | None:
    low, high = _number(values[0]), _number(values[1])
    return None if low is None or high is None else [low, high]


def has_models(arrays: BatchArrays) -> bool:
    """Whether the items name at least two different models (pairwise: an item whose two
    responses come from two different models); a single model has nothing to rank."""
    if arrays.comparison:
        return any(a and b and a != b for a, b in zip(arrays.models, arrays.models_b, strict=False))
    return len({name for name in arrays.models if name}) >= 2


def rankings_entry(
    arrays: BatchArrays, item_subsets: dict[str, np.ndarray], n_resamples: int, seed: int
) -> dict | None:
    """The report's ``rankings`` (``None`` unless the items name two models); ``item_subsets``:
    the report's subsets (name -> bool mask over the items), of which each family's default
    subset is ranked again."""
    if not has_models(arrays) or arrays.value.size == 0:
        return None
    pairwise = arrays.comparison
    names = sorted({name for name in arrays.models + arrays.models_b if name})
    number = {name: index for index, name in enumerate(names)}
    item_model = np.array([number.get(name, -1) for name in arrays.models], dtype=np.int64)
    subsets = _label_subsets(arrays, item_subsets)
    bootstrap = {"unit": "annotator", "B": n_resamples, "seed": seed}
    # every label once, the same way to either ranking: its value, who gave it, the label
    # subsets; resampled over annotators
    labels = (
        arrays.value,
        arrays.annotator_index,
        len(names),
        arrays.n_annotators,
        {name: mask for name, (_, mask) in subsets.items()},
    )
    resampling = {"n_resamples": n_resamples, "seed": seed}
    if pairwise:
        item_b = np.array([number.get(name, -1) for name in arrays.models_b], dtype=np.int64)
        without = int(((item_model < 0) | (item_b < 0) | (item_model == item_b)).sum())
        result = rankings.pairwise_rankings(
            item_model[arrays.item_index],
            item_b[arrays.item_index],
            *labels,
            **resampling,
            strong_weight=STRONG_WEIGHT,
        )
        return {
            "bradley_terry": _bradley_terry(result, names, subsets, bootstrap, without),
            "absolute": None,
        }
    without = int((item_model < 0).sum())
    result = rankings.mean_rating_rankings(item_model[arrays.item_index], *labels, **resampling)
    return {
        "bradley_terry": None,
        "absolute": _absolute(result, names, subsets, bootstrap, without),
    }


def _label_subsets(
    arrays: BatchArrays, item_subsets: dict[str, np.ndarray]
) -> dict[str, tuple[str, np.ndarray]]:
    """The default subset of each family as (role, bool mask over the counted labels)."""
    return {
        family.default_subset: (family.role, item_subsets[family.default_subset][arrays.item_index])
        for family in families_for(arrays.comparison)
        if family.default_subset in item_subsets
    }


def _model_rows(
    names: list[str], ranking: rankings.ModelRanking, score_key: str, counts: dict[str, np.ndarray]
) -> list[dict]:
    rows = []
    for index, name in enumerate(names):
        if not np.isfinite(ranking.score[index]):
            continue
        row = {
            "model": name,
            score_key: _number(ranking.score[index]),
            "ci": _pair(ranking.ci[index]),
            "rank": int(ranking.rank[index]),
            "rank_ci": None
            if not np.all(np.isfinite(ranking.rank_ci[index]))
            else [int(ranking.rank_ci[index][0]), int(ranking.rank_ci[index][1])],
        }
        row.update({key: int(values[index]) for key, values in counts.items()})
        rows.append(row)
    return sorted(rows, key=lambda row: (row["rank"], row["model"]))


def _tau(comparison: rankings.SubsetComparison) -> dict:
    return {
        "tau": _number(comparison.tau),
        "ci": list(comparison.tau_ci) if comparison.tau_ci is not None else None,
        "n_models": comparison.n_models,
    }


def _bradley_terry(
    result: rankings.PairwiseRankings,
    names: list[str],
    subsets: dict[str, tuple[str, np.ndarray]],
    bootstrap: dict,
    without: int,
) -> dict:
    fit = result.fit
    entry = {
        "models": _model_rows(
            names, result.ranking, "log_strength", {"n_comparisons": result.n_comparisons}
        ),
        "tie_parameter": _number(fit.tie_parameter),
        "identifiability": "sum_to_zero",
        "ties": "win_tie_loss" if STRONG_WEIGHT == 1.0 else f"strong_weight_{STRONG_WEIGHT:g}",
        "bootstrap": {**bootstrap, "n_used": result.ranking.n_resamples_used},
        "n_items_without_models": without,
    }
    if fit.reason is not None:
        entry["reason"] = fit.reason
    if result.win_probability is not None:
        # in rank order, as the models are listed
        fitted = [names.index(row["model"]) for row in entry["models"]]
        matrix = result.win_probability[np.ix_(fitted, fitted)]
        entry["win_probability"] = {
            "models": [names[i] for i in fitted],
            "matrix": [[_number(value) for value in row] for row in matrix],
        }
    by_subset = {}
    for name, (subset_fit, ranking, votes, comparison) in result.by_subset.items():
        subset_entry = {
            "role": subsets[name][0],
            "models": _model_rows(names, ranking, "log_strength", {"n_comparisons": votes}),
            "tie_parameter": _number(subset_fit.tie_parameter),
            "kendall_tau": _tau(comparison),
        }
        if subset_fit.reason is not None:
            subset_entry["reason"] = subset_fit.reason
        by_subset[name] = subset_entry
    entry["by_subset"] = by_subset
    return entry


def _absolute(
    result: rankings.AbsoluteRankings,
    names: list[str],
    subsets: dict[str, tuple[str, np.ndarray]],
    bootstrap: dict,
    without: int,
) -> dict:
    def rows(mean: rankings.ModelRanking, centred: rankings.ModelRanking, counts: dict):
        by_model = {row["model"]: row for row in _model_rows(names, centred, "centred_mean", {})}
        merged = []
        for row in _model_rows(names, mean, "mean", counts):
            other = by_model.get(row["model"], {})
            row["centred_mean"] = other.get("centred_mean")
            row["centred_ci"] = other.get("ci")
            row["centred_rank"] = other.get("rank")
            row["centred_rank_ci"] = other.get("rank_ci")
            merged.append(row)
        return merged

    counts = {"n_labels": result.n_labels, "n_annotators": result.n_annotators}
    by_subset = {}
    for name, (mean, centred, labels, comparison) in result.by_subset.items():
        by_subset[name] = {
            "role": subsets[name][0],
            "models": rows(mean, centred, {"n_labels": labels}),
            "kendall_tau": _tau(comparison),
        }
    return {
        "models": rows(result.mean, result.centred, counts),
        "centring": "annotator_mean",
        "bootstrap": {**bootstrap, "n_used": result.mean.n_resamples_used},
        "n_items_without_models": without,
        "by_subset": by_subset,
    }
