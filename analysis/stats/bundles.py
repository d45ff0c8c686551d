"""Statistics of bundled batches (docs/ANALYSIS.md, "Bundles"): the same participant
rated every alternative of one query, so their labels of a bundle form one row of a
participant × item table.

* ``position_effect`` — the mean label at each position within a bundle, Spearman's ρ of
  label against position over all labels, and a permutation p-value that shuffles the
  positions *within* each participant's bundle (so a person's own level is kept);
* ``kendalls_w`` — Kendall's coefficient of concordance W of the participants' rankings
  of a bundle's items, with the correction for ties (Kendall & Babington Smith 1939;
  Siegel & Castellan 1988, §9.4): W = 12·S / (m²(n³ − n) − m·ΣT), S the sum of squared
  deviations of the items' rank sums from their mean, T = Σ(t³ − t) over each
  participant's groups of t tied ranks;
* ``two_way_decomposition`` — the items × participants table as a two-way ANOVA without
  replication: the mean squares of items (MSR), participants (MSC) and the residual
  (MSE), the share of the total sum of squares explained by the participant, and the
  intraclass correlations of Shrout & Fleiss (1979): ICC(2,1) = (MSR − MSE) / (MSR +
  (k − 1)·MSE + k·(MSC − MSE)/n) (absolute agreement, participants random) and ICC(3,1) =
  (MSR − MSE) / (MSR + (k − 1)·MSE) (consistency, participants fixed), with n items and
  k participants;
* ``idiosyncrasy`` — per participant, Spearman's ρ of their labels with the mean of the
  other participants' labels of the same items (leave one out): low means "this person
  ranks the alternatives their own way"; ``idiosyncrasy_items`` — how many items each ρ
  rests on;
* ``distribution`` — how a per-bundle (or per-participant) figure spreads: its number of
  defined values, mean, median, quartiles and range, for the report's summaries.

Pure: numpy and scipy only. A table holds one row per participant and one column per
item of the bundle, ``NaN`` where a participant has no label; the functions use the
complete rows (participants who rated every item) unless stated otherwise.
"""

from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata, spearmanr


@dataclass(frozen=True)
class PositionEffect:
    positions: list[int]
    mean_label: list[float]
    n_labels: list[int]
    spearman_rho: float | None
    permutation_p: float | None
    permutations: int


def position_effect(
    labels: np.ndarray,
    positions: np.ndarray,
    groups: np.ndarray,
    *,
    permutations: int = 1000,
    seed: int = 0,
) -> PositionEffect:
    """``labels``, ``positions`` and ``groups`` (one id per participant's bundle) are
    parallel arrays over labels. The p-value is two-sided: the share of within-group
    shuffles whose |ρ| reaches the observed one (with the observed counted, so never 0)."""
    labels = np.asarray(labels, dtype=float)
    positions = np.asarray(positions, dtype=float)
    groups = np.asarray(groups)
    places = sorted({int(place) for place in positions})
    means = [float(labels[positions == place].mean()) for place in places]
    counts = [int((positions == place).sum()) for place in places]
    if len(labels) < 3 or len(places) < 2 or np.ptp(labels) == 0:
        return PositionEffect(places, means, counts, None, None, 0)
    observed = _rho(labels, positions)
    rng = np.random.default_rng(seed)
    order = np.argsort(groups, kind="stable")
    boundaries = np.flatnonzero(np.diff(groups[order])) + 1
    blocks = np.split(order, boundaries)
    reached = 1
    shuffled = positions.copy()
    for _ in range(permutations):
        for block in blocks:
            shuffled[block] = rng.permutation(positions[block])
        if abs(_rho(labels, shuffled)) >= abs(observed) - 1e-12:
            reached += 1
    return PositionEffect(
        places, means, counts, observed, reached / (permutations + 1), permutations
    )


def _rho(x: np.ndarray, y: np.ndarray) -> float:
    rx, ry = rankdata(x), rankdata(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    return float((rx * ry).sum() / np.sqrt((rx * rx).sum() * (ry * ry).sum()))


def complete_rows(table: np.ndarray) -> np.ndarray:
    """The participants (rows) who labelled every item of the bundle."""
    table = np.asarray(table, dtype=float)
    return table[~np.isnan(table).any(axis=1)]


def kendalls_w(table: np.ndarray) -> float | None:
    """W over the complete rows (m participants ranking n items), tie-corrected; ``None``
    with fewer than 2 participants or 2 items, or when every label is the same."""
    rows = complete_rows(table)
    m, n = rows.shape if rows.size else (0, 0)
    if m < 2 or n < 2:
        return None
    ranks = np.apply_along_axis(rankdata, 1, rows)
    sums = ranks.sum(axis=0)
    s = float(((sums - sums.mean()) ** 2).sum())
    ties = 0.0
    for row in rows:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts**3 - counts).sum())
    denominator = m * m * (n**3 - n) - m * ties
    if denominator <= 0:
        return None
    return 12.0 * s / denominator


@dataclass(frozen=True)
class TwoWay:
    n_items: int
    n_participants: int
    ms_items: float
    ms_participants: float
    ms_residual: float
    participant_share: float | None  # SS_participants / SS_total
    icc_2_1: float | None
    icc_3_1: float | None


def two_way_decomposition(table: np.ndarray) -> TwoWay | None:
    """Over the complete rows; ``None`` with fewer than 2 participants or 2 items."""
    rows = complete_rows(table)
    if rows.size == 0 or rows.shape[0] < 2 or rows.shape[1] < 2:
        return None
    data = rows.T  # n items (targets) x k participants (judges)
    n, k = data.shape
    grand = data.mean()
    ss_items = k * float(((data.mean(axis=1) - grand) ** 2).sum())
    ss_participants = n * float(((data.mean(axis=0) - grand) ** 2).sum())
    ss_total = float(((data - grand) ** 2).sum())
    ss_residual = ss_total - ss_items - ss_participants
    msr = ss_items / (n - 1)
    msc = ss_participants / (k - 1)
    mse = ss_residual / ((n - 1) * (k - 1))
    icc2_den = msr + (k - 1) * mse + k * (msc - mse) / n
    icc3_den = msr + (k - 1) * mse
    return TwoWay(
        n_items=n,
        n_participants=k,
        ms_items=msr,
        ms_participants=msc,
        ms_residual=mse,
        participant_share=ss_participants / ss_total if ss_total > 0 else None,
        icc_2_1=(msr - mse) / icc2_den if icc2_den > 0 else None,
        icc_3_1=(msr - mse) / icc3_den if icc3_den > 0 else None,
    )


def _shared_with_others(table: np.ndarray):
    """Per row: the row, the mean of the other rows' labels of each item (``NaN`` where no
    other row has one) and the items both have."""
    table = np.asarray(table, dtype=float)
    for index, row in enumerate(table):
        others = np.delete(table, index, axis=0)
        with np.errstate(invalid="ignore"):
            counts = (~np.isnan(others)).sum(axis=0)
            means = np.where(counts > 0, np.nansum(others, axis=0) / np.maximum(counts, 1), np.nan)
        yield row, means, ~np.isnan(row) & ~np.isnan(means)


def idiosyncrasy(table: np.ndarray) -> list[float | None]:
    """Per row of ``table`` (every participant, complete or not): Spearman's ρ over the
    items they labelled between their labels and the mean of the others' labels of the
    same items; ``None`` with fewer than 3 such items, no other participant, or no
    variation on either side."""
    results: list[float | None] = []
    for row, means, usable in _shared_with_others(table):
        if usable.sum() < 3 or np.ptp(row[usable]) == 0 or np.ptp(means[usable]) == 0:
            results.append(None)
            continue
        results.append(float(spearmanr(row[usable], means[usable]).statistic))
    return results


def idiosyncrasy_items(table: np.ndarray) -> list[int]:
    """Per row of ``table``: the number of items its ``idiosyncrasy`` ρ is taken over (those
    the participant labelled and at least one other participant labelled too)."""
    return [int(usable.sum()) for _, _, usable in _shared_with_others(table)]


@dataclass(frozen=True)
class Distribution:
    n: int
    mean: float
    median: float
    q1: float
    q3: float
    low: float
    high: float


def distribution(values) -> Distribution | None:
    """Over the defined values (``None`` and ``NaN`` left out): their number ``n``, mean,
    median, first and third quartiles (``np.percentile``, linear interpolation) and range;
    ``None`` when no value is defined."""
    finite = np.array([np.nan if value is None else value for value in values], dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return None
    q1, median, q3 = np.percentile(finite, [25, 50, 75])
    return Distribution(
        n=int(finite.size),
        mean=float(finite.mean()),
        median=float(median),
        q1=float(q1),
        q3=float(q3),
        low=float(finite.min()),
        high=float(finite.max()),
    )
