"""The census as plain JSON-able dicts (what pages, the API and stored reports serialise).

Every number is a plain ``int``/``float`` (never a numpy scalar, never NaN); a figure that
does not exist (the runner-up share of a category with one answer only, a mean over no
category) is ``None``.
"""

import math
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from diversity.census.core.categories import CategoryFigures
from diversity.census.core.comparison import NormsComparison
from diversity.census.core.metrics import AnswererMetrics

__all__ = ["census_report", "comparison_report"]


def _number(value: float | None) -> float | None:
    """A plain float, or ``None`` for a missing or non-finite value (JSON has no NaN)."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def census_report(
    per_model: Mapping[str, AnswererMetrics], per_category: Mapping[str, CategoryFigures]
) -> dict[str, Any]:
    """``{"per_model": {model: {surprisal, modal_avoid, novel_rate, self_distinct, n_answers,
    type, surprisal_ci90: [lo, hi]}}, "per_category": {category: {modal, modal_share,
    n_distinct, n_answers, second_share}}}``, in the input mappings' order."""
    return {
        "per_model": {
            model: {
                "surprisal": _number(metrics.surprisal),
                "modal_avoid": _number(metrics.modal_avoid),
                "novel_rate": _number(metrics.novel_rate),
                "self_distinct": _number(metrics.self_distinct),
                "n_answers": int(metrics.n_answers),
                "type": metrics.type,
                "surprisal_ci90": [_number(bound) for bound in metrics.surprisal_ci90],
            }
            for model, metrics in per_model.items()
        },
        "per_category": {
            category: {
                "modal": figures.modal,
                "modal_share": _number(figures.modal_share),
                "n_distinct": int(figures.n_distinct),
                "n_answers": int(figures.n_answers),
                "second_share": _number(figures.second_share),
            }
            for category, figures in per_category.items()
        },
    }


def comparison_report(comparison: NormsComparison) -> dict[str, Any]:
    """``{"model_source", "n_categories", "n_model_more_concentrated", "mean_model_share",
    "mean_human_share", "mean_model_n_ge5", "mean_human_n_ge5", "per_category": [{category,
    human_modal, human_share, human_n_ge5, model_modal, model_share, model_n_ge5,
    model_more_concentrated}]}``."""
    return {
        "model_source": comparison.model_source,
        "n_categories": len(comparison.categories),
        "n_model_more_concentrated": comparison.n_model_more_concentrated,
        "mean_model_share": _number(comparison.mean_model_share),
        "mean_human_share": _number(comparison.mean_human_share),
        "mean_model_n_ge5": _number(comparison.mean_model_n_ge5),
        "mean_human_n_ge5": _number(comparison.mean_human_n_ge5),
        "per_category": [
            {
                **asdict(row),
                "human_share": _number(row.human_share),
                "model_share": _number(row.model_share),
                "model_more_concentrated": row.model_more_concentrated,
            }
            for row in comparison.categories
        ],
    }
