"""The ``calibration`` section of the analysis report (ANALYSIS.md, "Calibration to the
distribution").

Pure: for every source that gave label distributions, ``analysis.stats.calibration``'s
measures against each item's human label distribution on the full set and on each subset
family's default subset; for every source with scores only, how far its scores' spread
tracks the human spread. A report without score sources has no ``calibration`` key.
"""

from __future__ import annotations

import numpy as np

from analysis.report_inputs import ItemSet
from analysis.stats import calibration, families_for

SCALAR_NOTE = (
    "A scalar score can only be compared with the human mean; a distribution over the labels "
    "(score_distribution) would show whether the source expects the disagreement."
)
MEASURES = ("jsd", "emd", "manhattan", "cross_entropy", "ece")


def _number(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def _interval(ci) -> list[float] | None:
    return None if ci is None else [float(ci[0]), float(ci[1])]


def calibration_entry(items: ItemSet, n_resamples: int, seed: int) -> dict | None:
    """The report's ``calibration`` over ``items`` (``None`` without score sources)."""
    arrays, sources, counts, summary, item_subsets = items
    if not sources:
        return None
    labelled = item_subsets["full"]
    subsets = {"full": labelled}
    for family in families_for(arrays.comparison):
        if family.default_subset in item_subsets:
            subsets[family.default_subset] = item_subsets[family.default_subset]
    with np.errstate(invalid="ignore", divide="ignore"):
        human = counts / counts.sum(axis=1, keepdims=True)
    distributional, scalar = [], []
    for source in sources:
        if source.distributions is None:
            spread = calibration.spread_tracking(
                np.where(labelled, source.scores, np.nan), summary["std"]
            )
            entry = {
                "source": source.name,
                "kind": source.kind,
                "n": spread.n,
                "spread_spearman": None
                if spread.r is None
                else {"r": _number(spread.r), "p": _number(spread.p)},
            }
            if spread.r is None:
                entry["reason"] = spread.reason
            scalar.append(entry)
            continue
        given = np.all(np.isfinite(source.distributions), axis=1)
        by_subset = {}
        for name, mask in subsets.items():
            keep = mask & given
            figures = calibration.calibration_figures(
                human[keep],
                source.distributions[keep],
                summary["entropy_bits"][keep],
                n_resamples=n_resamples,
                seed=seed,
            )
            by_subset[name] = _figures_entry(figures)
        distributional.append({"source": source.name, "kind": source.kind, "subsets": by_subset})
    return {
        "labels": [str(int(label)) for label in arrays.label_set],
        "bootstrap": {"unit": "item", "B": n_resamples, "seed": seed},
        "ece_bins": calibration.ECE_BINS,
        "cross_entropy_log": "natural",
        "sources": distributional,
        "scalar_sources": scalar,
        "scalar_note": SCALAR_NOTE,
    }


def _figures_entry(figures: calibration.CalibrationFigures) -> dict:
    entry: dict = {"n": figures.n}
    for name in MEASURES:
        measure = getattr(figures, name)
        entry[name] = {"mean": _number(measure.mean), "ci": _interval(measure.ci95)}
    rho = figures.entropy_spearman
    entry["entropy_spearman"] = (
        None if rho.r is None else {"r": _number(rho.r), "p": _number(rho.p), "n": rho.n}
    )
    entry["entropy_bins"] = [
        {"low": low, "high": high, "n": n, "mean_jsd": _number(mean)}
        for low, high, n, mean in figures.entropy_bins
    ]
    return entry
