"""Calibration of a source's label distributions to each item's human label distribution.

The perspectivist view (Cabitza, Campagner & Basile 2023, "Toward a perspectivist turn in
ground truthing"; the Perspectivist Data Manifesto): a model that outputs probabilities over
the labels is compared with the whole histogram of human labels, not only its mean. Per item,
with ``h`` the human distribution (counts / n) and ``q`` the source's, over ``K`` ordered labels:

* **Jensen–Shannon divergence** in bits (Lin 1991): ``JSD = ½ KL(h ‖ m) + ½ KL(q ‖ m)``,
  ``m = (h + q) / 2``, ``KL(a ‖ b) = Σ a log₂(a / b)`` with ``0 log 0 = 0``; 0 … 1.
* **Earth mover's distance** on the ordinal scale with unit steps (Rubner et al. 2000; for one
  dimension ``Σ_k |H_k − Q_k|`` over the cumulative distributions, Vallender 1974), in labels.
* **Manhattan distance** ``Σ |h − q|`` and **cross-entropy** ``−Σ h ln q`` between soft
  labels, the soft evaluation of LeWiDi (Uma et al. 2021, SemEval task 12; Leonardelli et al.
  2023); ``q`` is clipped below at :data:`CROSS_ENTROPY_FLOOR` so a zero the humans did not
  avoid costs a large finite amount, not infinity. Natural logarithm (nats).
* **Expected calibration error** of the modal choice (Naeini et al. 2015; Guo et al. 2017):
  the source's choice is ``argmax q`` with confidence ``max q``; it is correct when it is one of
  the item's most common human labels. Over :data:`ECE_BINS` equal-width confidence bins,
  ``ECE = Σ_b (n_b / N) |accuracy_b − confidence_b|``.

Means over items come with a percentile interval from resampling items
(:func:`analysis.stats.bootstrap.resample_counts`, the report's seed and resamples); the
relation to disagreement is the Spearman ρ between an item's JSD and its human entropy, with
mean JSD per entropy bin. For scalar scores, :func:`spread_tracking` asks only whether the
score's distance from the source's mean grows with the human spread.

Pure numpy / scipy; no Django.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from analysis.stats.bootstrap import percentile_interval, resample_counts
from analysis.stats.correlation import CorrelationResult, spearman

__all__ = [
    "CROSS_ENTROPY_FLOOR",
    "ECE_BINS",
    "ENTROPY_BINS",
    "CalibrationFigures",
    "MeanWithInterval",
    "calibration_figures",
    "cross_entropy",
    "earth_movers_distance",
    "expected_calibration_error",
    "jensen_shannon_bits",
    "manhattan",
    "spread_tracking",
]

CROSS_ENTROPY_FLOOR = 1e-12
ECE_BINS = 10
ENTROPY_BINS = 5


def _rows(values: np.ndarray) -> np.ndarray:
    return np.atleast_2d(np.asarray(values, dtype=np.float64))


def jensen_shannon_bits(h: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per row, the Jensen–Shannon divergence in bits (module docstring)."""
    h, q = _rows(h), _rows(q)
    m = (h + q) / 2

    def kl(a: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(a > 0, a * np.log2(a / m), 0.0)
        return terms.sum(axis=1)

    return np.clip(0.5 * kl(h) + 0.5 * kl(q), 0.0, 1.0)


def earth_movers_distance(h: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per row, the EMD between two distributions over ordered labels one step apart."""
    h, q = _rows(h), _rows(q)
    return np.abs(np.cumsum(h - q, axis=1))[:, :-1].sum(axis=1)


def manhattan(h: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per row, ``Σ |h − q|`` (LeWiDi's Manhattan distance between soft labels)."""
    return np.abs(_rows(h) - _rows(q)).sum(axis=1)


def cross_entropy(h: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per row, ``−Σ h ln max(q, floor)``: the source's soft label scored against the humans'."""
    h, q = _rows(h), _rows(q)
    return -(h * np.log(np.maximum(q, CROSS_ENTROPY_FLOOR))).sum(axis=1)


def _choice_outcomes(h: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item the source's confidence (``max q``) and whether ``argmax q`` (the lowest label
    on ties) is one of the human modal labels (1.0 / 0.0)."""
    h, q = _rows(h), _rows(q)
    choice = np.argmax(q, axis=1)
    rows = np.arange(h.shape[0])
    correct = h[rows, choice] >= h.max(axis=1) - 1e-12
    return q[rows, choice], correct.astype(np.float64)


def _bin_of(confidence: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bins over [0, 1]; a confidence of exactly 1 is in the last bin."""
    return np.minimum((confidence * n_bins).astype(np.int64), n_bins - 1)


def expected_calibration_error(
    h: np.ndarray, q: np.ndarray, n_bins: int = ECE_BINS, weights: np.ndarray | None = None
) -> np.ndarray:
    """ECE of the modal choice (module docstring); ``weights`` ``(B, n)`` gives one ECE per
    row of item weights (a bootstrap resample's draw counts), else one for the items."""
    confidence, correct = _choice_outcomes(h, q)
    bins = _bin_of(confidence, n_bins)
    weights = np.ones((1, confidence.size)) if weights is None else np.atleast_2d(weights)
    indicator = np.zeros((confidence.size, n_bins))
    indicator[np.arange(confidence.size), bins] = 1.0
    gap = weights @ (indicator * (correct - confidence)[:, None])  # (B, bins) Σ w (acc − conf)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.abs(gap).sum(axis=1) / weights.sum(axis=1)


class MeanWithInterval(NamedTuple):
    mean: float | None
    ci95: tuple[float, float] | None


class CalibrationFigures(NamedTuple):
    """One source on one set of items."""

    n: int
    jsd: MeanWithInterval
    emd: MeanWithInterval
    manhattan: MeanWithInterval
    cross_entropy: MeanWithInterval
    ece: MeanWithInterval
    entropy_spearman: CorrelationResult
    # per human-entropy bin: (low, high, items, mean JSD)
    entropy_bins: list[tuple[float, float, int, float | None]]


def calibration_figures(
    human: np.ndarray,
    source: np.ndarray,
    human_entropy: np.ndarray,
    *,
    n_resamples: int = 1000,
    seed: int | None = 0,
    max_entropy: float | None = None,
) -> CalibrationFigures:
    """Every measure of the module docstring over the items (rows) of ``human`` (label
    distributions, rows summing to 1) and ``source`` (the same shape), each mean with its
    item-bootstrap interval, and JSD against ``human_entropy`` (bits): Spearman ρ and the mean
    JSD in :data:`ENTROPY_BINS` equal-width bins over ``[0, max_entropy]`` (default log₂ K)."""
    human, source = _rows(human), _rows(source)
    n = human.shape[0]
    per_item = {
        "jsd": jensen_shannon_bits(human, source),
        "emd": earth_movers_distance(human, source),
        "manhattan": manhattan(human, source),
        "cross_entropy": cross_entropy(human, source),
    }
    if n == 0:
        empty = MeanWithInterval(None, None)
        undefined = CorrelationResult(None, None, None, 0, "no items")
        return CalibrationFigures(0, empty, empty, empty, empty, empty, undefined, [])
    stacked = np.stack(list(per_item.values()), axis=1)  # (n, 4)
    resampled_means, resampled_ece = [], []
    if n_resamples > 0:
        for counts in resample_counts(n, n_resamples, seed):
            resampled_means.append(counts @ stacked / n)
            resampled_ece.append(expected_calibration_error(human, source, weights=counts))
    means = np.concatenate(resampled_means) if resampled_means else np.empty((0, 4))
    eces = np.concatenate(resampled_ece) if resampled_ece else np.empty(0)

    def summary(values: np.ndarray, resampled: np.ndarray) -> MeanWithInterval:
        return MeanWithInterval(float(values.mean()), percentile_interval(resampled))

    figures = {
        name: summary(values, means[:, column])
        for column, (name, values) in enumerate(per_item.items())
    }
    ece = MeanWithInterval(float(expected_calibration_error(human, source)[0]), None)
    ece = ece._replace(ci95=percentile_interval(eces))
    top = np.log2(human.shape[1]) if max_entropy is None else max_entropy
    edges = np.linspace(0.0, top, ENTROPY_BINS + 1)
    which = np.clip(np.searchsorted(edges, human_entropy, side="right") - 1, 0, ENTROPY_BINS - 1)
    bins = []
    for number in range(ENTROPY_BINS):
        inside = which == number
        mean = float(per_item["jsd"][inside].mean()) if inside.any() else None
        bins.append((float(edges[number]), float(edges[number + 1]), int(inside.sum()), mean))
    return CalibrationFigures(
        n,
        figures["jsd"],
        figures["emd"],
        figures["manhattan"],
        figures["cross_entropy"],
        ece,
        spearman(per_item["jsd"], human_entropy),
        bins,
    )


def spread_tracking(scores: np.ndarray, human_std: np.ndarray) -> CorrelationResult:
    """Spearman ρ between ``|score − mean score|`` and the items' human standard deviation,
    over the items where both are finite: does a scalar source's extremeness follow how much
    people agree (a distribution would say far more)?"""
    scores = np.asarray(scores, dtype=np.float64)
    human_std = np.asarray(human_std, dtype=np.float64)
    known = np.isfinite(scores) & np.isfinite(human_std)
    distance = np.abs(scores[known] - scores[known].mean()) if known.any() else scores[known]
    return spearman(distance, human_std[known])
