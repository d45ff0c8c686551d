"""Genie scores as plain JSON-able dicts (plain floats, no NaN: absent scores are absent)."""

from collections.abc import Iterable, Mapping
from typing import Any

from diversity.genie.scoring import DocumentFeatureScore, FeatureSummary

__all__ = ["genie_report"]


def genie_report(
    scores: Iterable[DocumentFeatureScore], summaries: Mapping[str, FeatureSummary]
) -> dict[str, Any]:
    """``{"per_document": [{prompt_id, document_id, features: {feature: {novelty,
    n_questions}}}], "per_feature": {feature: {mean, ci: [lo, hi], ci_level, n_documents}}}``.

    A feature a document has no score for is left out of its ``features``.
    """
    per_document: dict[tuple[str, str], dict[str, Any]] = {}
    for score in scores:
        entry = per_document.setdefault(
            (score.prompt_id, score.document_id),
            {"prompt_id": score.prompt_id, "document_id": score.document_id, "features": {}},
        )
        entry["features"][score.feature] = {
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
    }
