"""The analysis as a JSON-ready dict: plain numbers, lists and strings only.

Every float goes through :func:`json_number`, so NaN and infinities (undefined
statistics) become ``null`` and ``json.dumps(report, allow_nan=False)`` always succeeds.
Models are named, not numbered.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from diversity.homogeneity import summaries
from diversity.homogeneity.pipeline import CorpusAnalysis
from diversity.homogeneity.stats import ModelPair

__all__ = ["REPORT_VERSION", "POOLED", "analysis_report", "group_report", "json_number"]

REPORT_VERSION = 1
POOLED = "pooled"


def json_number(value) -> float | int | None:
    """A plain Python number for JSON: NaN and +-inf become None, numpy scalars become
    float/int, None stays None."""
    if value is None:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else None


def _numbers(values) -> list:
    return [json_number(v) for v in np.asarray(values).tolist()]


def _threshold_key(threshold: float) -> str:
    return f"share_above_{threshold:g}"


def _repetition(summary: summaries.RepetitionSummary) -> dict:
    out = {
        "values": summary.values,
        "mean": json_number(summary.mean),
        "histogram": _numbers(summary.histogram),
    }
    out.update({_threshold_key(t): json_number(s) for t, s in summary.share_above.items()})
    return out


def _intra(summary: summaries.IntraModelSummary, names: Sequence[str]) -> dict:
    out = {names[model]: _repetition(figures) for model, figures in summary.by_model.items()}
    if POOLED in out:
        raise ValueError(f"a model may not be named {POOLED!r}: the key holds the pooled figures")
    out[POOLED] = _repetition(summary.pooled)
    return out


def _pair(pair: ModelPair, names: Sequence[str]) -> dict:
    return {
        "models": [names[pair.first], names[pair.second]],
        "similarity": json_number(pair.similarity),
        "queries": pair.queries,
    }


def _inter(summary: summaries.InterModelSummary, names: Sequence[str]) -> dict:
    return {
        "models": [names[m] for m in summary.models],
        "matrix": [_numbers(row) for row in summary.matrix],
        "queries": [_numbers(row) for row in summary.queries],
        "diagonal": "intra_model_mean",
        "most_similar": [_pair(p, names) for p in summary.most_similar],
        "least_similar": [_pair(p, names) for p in summary.least_similar],
    }


def _top_n(summary: summaries.TopNSummary) -> dict:
    curve = summary.curve
    return {
        "n": _numbers(summary.n),
        "mean_unique_models": _numbers(curve.mean),
        f"ci{100 * curve.level:g}": [
            [json_number(lo), json_number(hi)] for lo, hi in zip(curve.low, curve.high, strict=True)
        ],
        "queries": _numbers(curve.queries),
        "bootstrap": {"draws": curve.draws, "level": curve.level, "seed": curve.seed},
    }


def _lexical(summary: summaries.LexicalSummary | None, names: Sequence[str]) -> dict | None:
    if summary is None:
        return None
    return {
        "queries": summary.queries,
        "by_query": {k: json_number(v) for k, v in summary.by_query.items()},
        "by_model": {
            names[model]: {k: json_number(v) for k, v in figures.items()}
            for model, figures in summary.by_model.items()
        },
    }


def group_report(group: summaries.GroupSummary, names: Sequence[str]) -> dict:
    """One group's analyses: counts, ``intra_model``, ``inter_model``, ``top_n``,
    ``lexical`` (None without texts)."""
    return {
        "queries": group.queries,
        "responses": group.responses,
        "small": group.small,
        "intra_model": _intra(group.intra, names),
        "inter_model": _inter(group.inter, names),
        "top_n": _top_n(group.top_n),
        "lexical": _lexical(group.lexical, names),
    }


def analysis_report(analysis: CorpusAnalysis) -> dict:
    """The whole analysis: the corpus-wide group at the top level, settings, and
    ``by_category`` (each category's group with ``queries``, ``responses`` and ``small``)."""
    names = analysis.model_names
    settings = analysis.settings
    report = {
        "version": REPORT_VERSION,
        "models": list(names),
        "settings": {
            "max_n": settings.max_n,
            "bootstrap_draws": settings.bootstrap_draws,
            "ci_level": settings.ci_level,
            "seed": settings.seed,
            "min_group_queries": settings.min_group_queries,
            "thresholds": list(settings.thresholds),
        },
    }
    report.update(group_report(analysis.pooled, names))
    report["by_category"] = {
        category: group_report(group, names) for category, group in analysis.by_category.items()
    }
    return report
