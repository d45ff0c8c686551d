"""Drawing bootstrap resamples and taking their percentile interval, for every percentile
bootstrap outside the analysis report (the census, homogeneity and Genie figures).

The report's own bootstrap (``analysis.stats.bootstrap``) streams its resamples in chunks;
these figures are small enough to draw all resamples at once. Both use the same stream:
resample ``b`` draws the units of row ``b`` of
``np.random.default_rng(seed).integers(0, n_units, size=(draws, n_units))``, so a figure
computed here and one computed there from the same seed resample the same units. The
published reference values of the census and homogeneity figures depend on that stream, so
it must not change.

Pure numpy: no Django, and of the project nothing but ``analysis.stats``.
"""

import numpy as np

__all__ = ["level_percentiles", "percentile_bounds", "resample_counts", "resample_indices"]


def resample_indices(n_units: int, draws: int, seed: int | None) -> np.ndarray:
    """``(draws, n_units)`` unit positions: row ``b`` is the units resample ``b`` draws
    with replacement (``default_rng(seed).integers(0, n_units, size=(draws, n_units))``,
    the same stream as ``draws`` successive ``choice(n_units, n_units)`` calls)."""
    return np.random.default_rng(seed).integers(0, n_units, size=(draws, n_units))


def resample_counts(n_units: int, draws: int, seed: int | None) -> np.ndarray:
    """``(draws, n_units)`` counts: how often resample ``b`` draws unit ``u`` (the draws of
    :func:`resample_indices`), for statistics that are weighted sums over the units."""
    picks = resample_indices(n_units, draws, seed)
    offsets = (np.arange(draws, dtype=np.int64) * n_units)[:, None]
    counts = np.bincount((picks + offsets).ravel(), minlength=draws * n_units)
    return counts.reshape(draws, n_units)


def level_percentiles(level: float) -> tuple[float, float]:
    """The percentiles (0–100) that bound a two-sided interval of ``level`` coverage."""
    tail = (1.0 - level) / 2.0
    return 100 * tail, 100 * (1 - tail)


def percentile_bounds(
    values: np.ndarray, percentiles: tuple[float, float], *, skip_nan: bool = False
) -> np.ndarray:
    """The two ``percentiles`` of ``values`` along the first axis (numpy's linear
    interpolation), as an array of shape ``(2, ...)``; with ``skip_nan`` a NaN resample
    (the statistic undefined there) is left out of each column."""
    take = np.nanpercentile if skip_nan else np.percentile
    return take(values, list(percentiles), axis=0)
