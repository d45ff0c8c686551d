"""Model rankings from counted labels, with intervals from a cluster bootstrap over annotators.

Pairwise batches: the **Bradley–Terry model with Davidson's ties** (Bradley & Terry 1952;
Davidson 1970), fitted by maximum likelihood in :mod:`analysis.stats.bradley_terry`
(``log_strength``: natural logs summing to zero); each resample is refitted from the full
fit, all resamples of a chunk at once.

Absolute batches: the mean rating of each model's responses, and the same after removing each
annotator's mean rating from their labels (a mixed-effects-free check of harshness).

Intervals: a **cluster bootstrap over annotators** (Field & Welsh 2007, "Bootstrapping
clustered data", JRSS-B 69): each resample draws annotators with replacement, and all labels
of a drawn annotator, through :func:`analysis.stats.bootstrap.resample_counts` (the report's
``seed`` and number of resamples), with the percentile intervals of
:func:`analysis.stats.bootstrap.percentile_interval`. Votes of one person are not independent;
resampling votes (as Chatbot Arena does) understates the uncertainty when a few people cast
many of them. The same resamples give every subset's fit, so Kendall's tau between the full
and a subset's ranking has an interval too.

Pure numpy / scipy; no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
from scipy import sparse
from scipy.stats import rankdata

from analysis.stats.bootstrap import percentile_interval, resample_counts
from analysis.stats.bradley_terry import (
    DavidsonFit,
    davidson_fit,
    davidson_fit_many,
    win_probabilities,
)

__all__ = [
    "AbsoluteRankings",
    "DavidsonFit",
    "ModelRanking",
    "PairwiseRankings",
    "SubsetComparison",
    "davidson_fit",
    "kendall_tau_b",
    "mean_rating_rankings",
    "pairwise_rankings",
    "pairwise_tallies",
    "win_probabilities",
]

# Outcome columns of a pair's tally: the lower-numbered model wins, the other wins, a tie.
LOW_WINS, HIGH_WINS, TIE = 0, 1, 2


class ModelRanking(NamedTuple):
    """Scores of the models (higher is better) with their bootstrap intervals and ranks.

    ``rank`` 1 is the best (equal scores share the better rank); ``rank_ci`` is the percentile
    interval of the resampled ranks, widened to whole ranks (floor, ceil). NaN where undefined.
    """

    score: np.ndarray  # (M,)
    ci: np.ndarray  # (M, 2)
    rank: np.ndarray  # (M,) float, NaN for a model without a score
    rank_ci: np.ndarray  # (M, 2)
    n_resamples_used: int


class SubsetComparison(NamedTuple):
    """A subset's ranking against the full one: Kendall's tau-b over the models ranked in
    both, with its bootstrap interval (same resamples for both fits)."""

    tau: float | None
    tau_ci: tuple[float, float] | None
    n_models: int


class PairwiseRankings(NamedTuple):
    fit: DavidsonFit
    ranking: ModelRanking
    n_comparisons: np.ndarray  # (M,) votes involving each model
    win_probability: np.ndarray | None  # (M, M) P(row beats column)
    by_subset: dict[str, tuple[DavidsonFit, ModelRanking, np.ndarray, SubsetComparison]]


class AbsoluteRankings(NamedTuple):
    mean: ModelRanking
    centred: ModelRanking
    n_labels: np.ndarray  # (M,)
    n_annotators: np.ndarray  # (M,)
    by_subset: dict[str, tuple[ModelRanking, ModelRanking, np.ndarray, SubsetComparison]]


# ------------------------------------------------------------------------------ tallies


def pairwise_tallies(
    model_a: np.ndarray,
    model_b: np.ndarray,
    value: np.ndarray,
    n_models: int,
    strong_weight: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each vote's cell in the ``(M, M, 3)`` tally and its weight, and whether it enters.

    A label ``value > 0`` prefers A, ``< 0`` B, ``0`` is a tie; the pair is stored with the
    lower model number first (``cell = (low * M + high) * 3 + outcome``). Strong preferences
    (``|value| == 2``) weigh ``strong_weight`` (1: win/tie/loss; the documented option 2
    counts a strong preference as two wins). Votes whose pair lacks a model (index < 0) or
    compares a model with itself do not enter.
    """
    model_a = np.asarray(model_a, dtype=np.int64)
    model_b = np.asarray(model_b, dtype=np.int64)
    value = np.asarray(value)
    enters = (model_a >= 0) & (model_b >= 0) & (model_a != model_b)
    low = np.minimum(model_a, model_b)
    high = np.maximum(model_a, model_b)
    a_is_low = model_a < model_b
    low_wins = np.where(a_is_low, value > 0, value < 0)
    outcome = np.where(value == 0, TIE, np.where(low_wins, LOW_WINS, HIGH_WINS))
    cell = (np.where(enters, low, 0) * n_models + np.where(enters, high, 0)) * 3 + outcome
    weight = np.where(np.abs(value) == 2, strong_weight, 1.0)
    return cell, weight, enters


def _wins_and_ties(tally: np.ndarray, n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """``wins[i, j]`` (i beat j) and the symmetric ``ties`` from a flat ``(M, M, 3)`` tally."""
    cube = tally.reshape(n_models, n_models, 3)
    wins = cube[:, :, LOW_WINS] + cube[:, :, HIGH_WINS].T
    ties = cube[:, :, TIE] + cube[:, :, TIE].T
    return wins, ties


# ------------------------------------------------------------------------------ ranks, tau


# Scores that agree to this many decimals are tied when ranked or compared. Models with the
# same record get the same strength in exact arithmetic, but floating point leaves them a
# last bit or two apart, and which way depends on the CPU's vectorised path: without this,
# a tie would count as an order (and a tau would move) on one machine and not on another.
TIE_DECIMALS = 9


def _tied(scores: np.ndarray) -> np.ndarray:
    """``scores`` with differences below ``TIE_DECIMALS`` decimals made exact ties."""
    return np.round(np.asarray(scores, dtype=float), TIE_DECIMALS)


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Rank 1 = highest score, equal scores (``_tied``) the better rank; NaN stays NaN
    (row-wise)."""
    snapped = _tied(np.nan_to_num(scores, nan=-np.inf))
    ranked = rankdata(-snapped, method="min", axis=-1).astype(float)
    return np.where(np.isfinite(scores), ranked, np.nan)


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row of ``x`` with the same row of ``y`` (Kendall 1945):
    ``sum sign(dx) sign(dy) / sqrt(#pairs untied in x * #pairs untied in y)`` over the pairs
    of columns; NaN where a row is constant. Columns with a non-finite value in a row are
    left out of that row; values equal to ``TIE_DECIMALS`` decimals are ties."""
    x, y = _tied(np.atleast_2d(x)), _tied(np.atleast_2d(y))
    both = np.isfinite(x) & np.isfinite(y)
    upper = np.triu(np.ones((x.shape[1], x.shape[1]), dtype=bool), 1)
    pair_ok = both[:, :, None] & both[:, None, :] & upper
    with np.errstate(invalid="ignore"):
        dx = np.where(pair_ok, np.sign(x[:, :, None] - x[:, None, :]), 0.0)
        dy = np.where(pair_ok, np.sign(y[:, :, None] - y[:, None, :]), 0.0)
    numerator = (dx * dy).sum(axis=(1, 2))
    denominator = np.sqrt((dx != 0).sum(axis=(1, 2)) * (dy != 0).sum(axis=(1, 2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


def _model_ranking(point: np.ndarray, resampled: np.ndarray) -> ModelRanking:
    """Intervals of each model's score and rank; a resample enters the ranks only when it
    scores every model the point estimate scores."""
    n_models = point.size
    ci = np.full((n_models, 2), np.nan)
    rank_ci = np.full((n_models, 2), np.nan)
    scored = np.isfinite(point)
    complete = resampled[np.all(np.isfinite(resampled[:, scored]), axis=1)] if scored.any() else []
    if len(complete):
        resampled_ranks = _ranks(np.where(scored, complete, np.nan))
    for model in np.flatnonzero(scored).tolist():
        interval = percentile_interval(resampled[:, model])
        if interval is not None:
            ci[model] = interval
        if len(complete) * 2 >= len(resampled) and len(complete):
            interval = percentile_interval(resampled_ranks[:, model])
            rank_ci[model] = (np.floor(interval[0]), np.ceil(interval[1]))
    return ModelRanking(point, ci, _ranks(point), rank_ci, len(complete))


def _comparison(
    full_point: np.ndarray, subset_point: np.ndarray, full_boot: np.ndarray, subset_boot: np.ndarray
) -> SubsetComparison:
    n_models = int((np.isfinite(full_point) & np.isfinite(subset_point)).sum())
    tau = float(kendall_tau_b(full_point, subset_point)[0])
    interval = (
        percentile_interval(kendall_tau_b(full_boot, subset_boot)) if len(full_boot) else None
    )
    return SubsetComparison(tau if np.isfinite(tau) else None, interval, n_models)


# Per-annotator tallies are kept dense (one BLAS product per chunk of resamples) up to this
# many cells, sparse beyond (many models: the cells grow with their square).
DENSE_TALLY_CELLS = 4_000_000


def _per_cluster(
    cluster: np.ndarray, cell: np.ndarray, weight: np.ndarray, n_clusters: int, n_cells: int
) -> np.ndarray | sparse.csr_matrix:
    """``(n_clusters, n_cells)`` sums of ``weight``: one row per annotator."""
    if n_clusters * n_cells <= DENSE_TALLY_CELLS:
        flat = np.bincount(cluster * n_cells + cell, weight, minlength=n_clusters * n_cells)
        return flat.reshape(n_clusters, n_cells)
    return sparse.csr_matrix(
        (weight, (cluster, cell)), shape=(n_clusters, n_cells), dtype=np.float64
    )


def _resampled_totals(matrix, counts: np.ndarray) -> np.ndarray:
    """``(b, n_cells)``: each resample's tallies, annotators weighted by their draws."""
    if isinstance(matrix, np.ndarray):
        return counts @ matrix
    return np.asarray(matrix.T.dot(counts.T).T)


# ------------------------------------------------------------------------------ pairwise


def pairwise_rankings(
    model_a: np.ndarray,
    model_b: np.ndarray,
    value: np.ndarray,
    cluster: np.ndarray,
    n_models: int,
    n_clusters: int,
    subsets: Mapping[str, np.ndarray] | None = None,
    *,
    n_resamples: int = 1000,
    seed: int | None = 0,
    strong_weight: float = 1.0,
) -> PairwiseRankings:
    """Bradley–Terry–Davidson strengths of the models, per label arrays.

    ``model_a`` / ``model_b``: each vote's models (index, -1 unknown); ``value``: the label
    (−2..2, > 0 prefers A); ``cluster``: the unit resampled together (the annotator; pass
    ``np.arange(n_labels)`` for a bootstrap of votes). ``subsets``: name → bool mask over the
    votes; each is fitted on the same resamples and compared with the full ranking.
    """
    n_cells = n_models * n_models * 3
    cell, weight, enters = pairwise_tallies(model_a, model_b, value, n_models, strong_weight)
    masks = {"": enters, **{name: enters & mask for name, mask in (subsets or {}).items()}}
    matrices = {
        name: _per_cluster(cluster[mask], cell[mask], weight[mask], n_clusters, n_cells)
        for name, mask in masks.items()
    }
    fits: dict[str, DavidsonFit] = {}
    for name, matrix in matrices.items():
        wins, ties = _wins_and_ties(np.asarray(matrix.sum(axis=0)).ravel(), n_models)
        fits[name] = davidson_fit(wins, ties)
    boots = {name: [] for name in masks}
    if n_resamples > 0 and n_clusters > 0:
        for counts in resample_counts(n_clusters, n_resamples, seed):
            for name, matrix in matrices.items():
                tallies = _resampled_totals(matrix, counts)
                boots[name].append(_refit_rows(tallies, n_models, fits[name]))
    resampled = {
        name: np.concatenate(rows) if rows else np.empty((0, n_models))
        for name, rows in boots.items()
    }

    def described(name: str) -> tuple[DavidsonFit, ModelRanking, np.ndarray]:
        fit = fits[name]
        point = fit.log_strength if fit.log_strength is not None else np.full(n_models, np.nan)
        mask = masks[name]
        votes = np.bincount(model_a[mask], minlength=n_models)
        votes += np.bincount(model_b[mask], minlength=n_models)
        return fit, _model_ranking(point, resampled[name]), votes

    full_fit, full_ranking, n_comparisons = described("")
    by_subset = {}
    for name in subsets or {}:
        fit, ranking, votes = described(name)
        comparison = _comparison(full_ranking.score, ranking.score, resampled[""], resampled[name])
        by_subset[name] = (fit, ranking, votes, comparison)
    probability = (
        win_probabilities(full_fit.log_strength, full_fit.tie_parameter)
        if full_fit.log_strength is not None
        else None
    )
    return PairwiseRankings(full_fit, full_ranking, n_comparisons, probability, by_subset)


def _refit_rows(tallies: np.ndarray, n_models: int, full: DavidsonFit) -> np.ndarray:
    """Log-strengths of each resampled tally (rows), NaN where a resample has no maximum:
    all rows at once (:func:`davidson_fit_many`), the rows it leaves one by one."""
    out = np.full((tallies.shape[0], n_models), np.nan)
    if full.log_strength is None or tallies.shape[0] == 0:
        return out
    cube = tallies.reshape(-1, n_models, n_models, 3)
    wins = cube[..., LOW_WINS] + cube[..., HIGH_WINS].transpose(0, 2, 1)
    ties = cube[..., TIE] + cube[..., TIE].transpose(0, 2, 1)
    out, fitted = davidson_fit_many(wins, ties, full.log_strength)
    for row in np.flatnonzero(~fitted).tolist():
        fit = davidson_fit(wins[row], ties[row], start=full.log_strength)
        if fit.log_strength is not None:
            out[row] = fit.log_strength
    return out


# ------------------------------------------------------------------------------ absolute


def mean_rating_rankings(
    model: np.ndarray,
    value: np.ndarray,
    cluster: np.ndarray,
    n_models: int,
    n_clusters: int,
    subsets: Mapping[str, np.ndarray] | None = None,
    *,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> AbsoluteRankings:
    """Mean rating per model, and mean annotator-centred rating, with cluster intervals.

    ``model``: each label's model (index, -1 unknown: left out); ``cluster``: its annotator.
    Centred: each label minus its annotator's mean over all of their labels given here
    (``value - mean_a``), so a harsh annotator's labels weigh as a lenient one's; the annotator
    means are those of the whole batch in every subset and resample (a person's harshness
    does not change with the items chosen). A model's mean in a resample is the ratio of the
    resampled sums (drawn annotators' labels, each as often as its annotator was drawn).
    """
    model = np.asarray(model, dtype=np.int64)
    value = np.asarray(value, dtype=np.float64)
    cluster = np.asarray(cluster, dtype=np.int64)
    per_annotator = np.bincount(cluster, minlength=n_clusters)
    annotator_mean = np.bincount(cluster, value, minlength=n_clusters) / np.maximum(
        per_annotator, 1
    )
    centred = value - annotator_mean[cluster]
    known = model >= 0
    masks = {"": known, **{name: known & mask for name, mask in (subsets or {}).items()}}
    results = {}
    boot_store = {}
    for name, mask in masks.items():
        mask_cluster, mask_model = cluster[mask], model[mask]
        matrix = _rating_tallies(
            mask_cluster, mask_model, value[mask], centred[mask], n_clusters, n_models
        )
        totals = np.asarray(matrix.sum(axis=0)).ravel()
        point_mean, point_centred = _ratios(totals[None, :], n_models)
        mean_rows, centred_rows = [], []
        if n_resamples > 0 and n_clusters > 0:
            for counts in resample_counts(n_clusters, n_resamples, seed):
                resampled_mean, resampled_centred = _ratios(
                    _resampled_totals(matrix, counts), n_models
                )
                mean_rows.append(resampled_mean)
                centred_rows.append(resampled_centred)
        boot_mean = np.concatenate(mean_rows) if mean_rows else np.empty((0, n_models))
        boot_centred = np.concatenate(centred_rows) if centred_rows else np.empty((0, n_models))
        boot_store[name] = boot_mean
        n_labels = totals[:n_models].astype(np.int64)
        given = np.bincount(mask_cluster * n_models + mask_model, minlength=n_clusters * n_models)
        n_annotators = (given.reshape(n_clusters, n_models) > 0).sum(axis=0)
        results[name] = (
            _model_ranking(point_mean[0], boot_mean),
            _model_ranking(point_centred[0], boot_centred),
            n_labels,
            n_annotators,
        )
    full_mean, full_centred, n_labels, n_annotators = results[""]
    by_subset = {}
    for name in subsets or {}:
        mean, centred_ranking, labels, _ = results[name]
        comparison = _comparison(full_mean.score, mean.score, boot_store[""], boot_store[name])
        by_subset[name] = (mean, centred_ranking, labels, comparison)
    return AbsoluteRankings(full_mean, full_centred, n_labels, n_annotators, by_subset)


def _rating_tallies(
    cluster: np.ndarray,
    model: np.ndarray,
    value: np.ndarray,
    centred: np.ndarray,
    n_clusters: int,
    n_models: int,
) -> np.ndarray | sparse.csr_matrix:
    """``(n_clusters, 3 n_models)``: per annotator, each model's label count, label sum and
    centred label sum (column blocks in that order), as :func:`_per_cluster` tallies them."""
    n_cells = 3 * n_models
    if n_clusters * n_cells > DENSE_TALLY_CELLS:
        cells = np.concatenate([model, model + n_models, model + 2 * n_models])
        weights = np.concatenate([np.ones(model.size), value, centred])
        return _per_cluster(np.tile(cluster, 3), cells, weights, n_clusters, n_cells)
    # Dense: one bincount per block instead of one over the three blocks concatenated (three
    # arrays of three times the labels' size). Each cell gets the same labels in the same
    # order, so the sums are the same.
    slot = cluster * n_models + model
    blocks = [
        np.bincount(slot, weights, minlength=n_clusters * n_models).reshape(n_clusters, n_models)
        for weights in (None, value, centred)
    ]
    return np.concatenate(blocks, axis=1, dtype=np.float64)


def _ratios(totals: np.ndarray, n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and centred mean per model from rows of (counts, sums, centred sums)."""
    counts = totals[:, :n_models]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(counts > 0, totals[:, n_models : 2 * n_models] / counts, np.nan)
        centred = np.where(counts > 0, totals[:, 2 * n_models :] / counts, np.nan)
    return mean, centred
