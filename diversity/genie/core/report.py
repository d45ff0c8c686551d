"""Genie scores as plain JSON-able dicts (plain floats, no NaN: absent scores are absent)."""

from collections.abc import Iterable, Mapping
from typing import Any

from diversity.genie.core.comparison import compare_groups, group_difference, group_mean
from diversity.genie.core.scoring import DocumentFeatureScore, FeatureSummary, QuestionScore

__all__ = [
    "ALL_FEATURES",
    "DIMENSIONS",
    "NO_METHOD",
    "chosen_comparison",
    "comparison_groups",
    "comparisons",
    "genie_report",
]

ALL_FEATURES = "(all features)"
NO_METHOD = "(none)"  # the method group of documents with no method: the baseline
# document -> {"prompt", "model", "method", "source_document_id"}
Documents = Mapping[tuple[str, str], Mapping[str, Any]]


def genie_report(
    scores: Iterable[DocumentFeatureScore],
    summaries: Mapping[str, FeatureSummary],
    documents: Documents | None = None,
    questions: Iterable[QuestionScore] = (),
) -> dict[str, Any]:
    """``{"per_document": [{prompt_id, document_id, prompt, model, method,
    source_document_id, features: {feature: {novelty, n_questions}}}], "per_feature":
    {feature: {mean, ci: [lo, hi], ci_level, n_documents}}, "per_question": [{prompt_id,
    document_id, question_id, question, feature, target_answer, q_genie, n_pairs}]}``.

    A feature a document has no score for is left out of its ``features``;
    ``source_document_id`` is the file's own id (GENIE's ``DocID_1``), else ``document_id``.
    """
    documents = documents or {}
    per_document: dict[tuple[str, str], dict[str, Any]] = {}
    for score in scores:
        key = (score.prompt_id, score.document_id)
        if key not in per_document:
            known = documents.get(key, {})
            per_document[key] = {
                "prompt_id": score.prompt_id,
                "document_id": score.document_id,
                "prompt": known.get("prompt"),
                "model": known.get("model"),
                "method": known.get("method"),
                "source_model": known.get("source_model"),
                "source_document_id": known.get("source_document_id") or score.document_id,
                "features": {},
            }
        per_document[key]["features"][score.feature] = {
            "novelty": float(score.novelty),
            "n_questions": int(score.n_questions),
        }
    return {
        "per_document": list(per_document.values()),
        "per_feature": {
            feature: {
                "mean": float(summary.mean),
                "ci": [float(summary.ci_low), float(summary.ci_high)],
                "ci_level": float(summary.level),
                "n_documents": int(summary.n_documents),
            }
            for feature, summary in summaries.items()
        },
        "per_question": [
            {
                "prompt_id": q.prompt_id,
                "document_id": q.document_id,
                "question_id": q.question_id,
                "question": q.question,
                "feature": q.feature,
                "target_answer": q.target_answer,
                "q_genie": float(q.novelty),
                "n_pairs": int(q.n_pairs),
            }
            for q in questions
        ],
    }


def _document_values(per_document: list[dict], feature: str | None) -> list[tuple[dict, float]]:
    """Each document's score on ``feature``, or overall (the mean of its feature scores)."""
    found = []
    for entry in per_document:
        cells = entry["features"]
        if feature is None:
            found.append((entry, sum(c["novelty"] for c in cells.values()) / len(cells)))
        elif feature in cells:
            found.append((entry, cells[feature]["novelty"]))
    return found


DIMENSIONS = ("model", "method")


def _group_of(entry: dict, dimension: str) -> str | None:
    """A document's group on ``dimension``: its model (None without one), or its method
    (``NO_METHOD`` without one)."""
    value = entry.get(dimension)
    return value if value is not None else (NO_METHOD if dimension == "method" else None)


def comparison_groups(per_document: list[dict], dimension: str) -> list[str]:
    """The groups of ``dimension`` (``model`` or ``method``) in first-seen order."""
    return list(
        dict.fromkeys(g for e in per_document if (g := _group_of(e, dimension)) is not None)
    )


def _values_by_group(
    per_document: list[dict], dimension: str, feature: str | None, groups: list[str]
) -> dict[str, dict[str, list[float]]]:
    """group -> prompt -> its documents' scores on ``feature`` (None: overall), for the
    groups that have any."""
    values: dict[str, dict[str, list[float]]] = {group: {} for group in groups}
    for entry, value in _document_values(per_document, feature):
        group = _group_of(entry, dimension)
        if group in values:
            values[group].setdefault(entry["prompt_id"], []).append(value)
    return {group: by_prompt for group, by_prompt in values.items() if by_prompt}


def _mean_entry(m) -> dict:
    return {
        "group": m.group,
        "mean": m.mean,
        "ci": [m.ci_low, m.ci_high],
        "n_prompts": m.n_prompts,
        "n_documents": m.n_documents,
    }


def _difference_entry(d) -> dict:
    return {
        "first": d.first,
        "second": d.second,
        "difference": d.difference,
        "ci": [d.ci_low, d.ci_high],
        "p": d.p_value,
        "exact": d.exact,
        "n_prompts": d.n_prompts,
    }


def comparisons(
    per_document: list[dict],
    features: list[str],
    *,
    draws: int,
    seed: int,
    permutations: int,
) -> dict[str, Any]:
    """``{"model": DIMENSION, "method": DIMENSION}``, DIMENSION = ``{"groups": [...],
    "per_feature": {feature or ALL_FEATURES: {"means": [...], "differences": [...]}}}``, or
    ``None`` for a dimension with fewer than two groups (``comparison`` has the
    definitions). Documents without a model are left out of the model comparison; those
    without a method form the ``NO_METHOD`` group."""
    found: dict[str, Any] = {}
    for dimension in DIMENSIONS:
        groups = comparison_groups(per_document, dimension)
        if len(groups) < 2:
            found[dimension] = None
            continue
        per_feature = {}
        for feature in [*features, None]:
            values = _values_by_group(per_document, dimension, feature, groups)
            if not values:
                continue
            means, differences = compare_groups(values, draws, seed, permutations)
            per_feature[feature if feature is not None else ALL_FEATURES] = {
                "means": [_mean_entry(m) for m in means],
                "differences": [_difference_entry(d) for d in differences],
            }
        found[dimension] = {"groups": groups, "per_feature": per_feature}
    return found


def chosen_comparison(
    per_document: list[dict],
    features: list[str],
    dimension: str,
    first: str,
    second: str,
    *,
    draws: int,
    seed: int,
    permutations: int,
) -> dict[str, Any]:
    """The difference ``first`` − ``second`` of two groups of one dimension (two models, or
    two methods, e.g. ``baseline`` and ``persona``), per feature and over all features, with
    each group's mean: ``{"by", "first", "second", "per_feature": [{"feature", "first":
    MEAN|null, "second": MEAN|null, "difference": DIFFERENCE|null}]}`` — the same figures,
    from the same draws, as the report's ``comparisons`` gives for that pair (``null`` where a
    group has no document, or the two share no prompt). The groups must be
    ``comparison_groups`` of the dimension (``ValueError`` otherwise)."""
    groups = comparison_groups(per_document, dimension)
    for name in (first, second):
        if name not in groups:
            raise ValueError(f"{name!r} is not a {dimension} of these documents")
    if first == second:
        raise ValueError("choose two different groups")
    rows = []
    for feature in [*features, None]:
        values = _values_by_group(per_document, dimension, feature, [first, second])
        means = {
            name: _mean_entry(group_mean(name, values[name], draws, seed))
            for name in (first, second)
            if name in values
        }
        difference = None
        if len(means) == 2:
            found = group_difference(
                first, second, values[first], values[second], draws, seed, permutations
            )
            difference = _difference_entry(found) if found is not None else None
        rows.append(
            {
                "feature": feature if feature is not None else ALL_FEATURES,
                "first": means.get(first),
                "second": means.get(second),
                "difference": difference,
            }
        )
    return {"by": dimension, "first": first, "second": second, "per_feature": rows}
