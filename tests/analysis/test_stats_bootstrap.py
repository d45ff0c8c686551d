"""Tests of analysis.stats.bootstrap against the plain reference bootstrap of ``oracles``.

Plain pytest, no database. ``correlate_sources_subsets`` must give, for every source and
subset, what the one-source reference gives on that subset: Spearman (point and interval)
identical, Pearson's point result identical and its interval to 1e-12 (the kernels sum
Pearson's moments in another order). Both of its kernels are held to it: the shared one and,
with ``_SHARED_MAX_ITEMS`` lowered, the one-source kernel of very large item sets.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.reports import correlation_figures
from analysis.stats import BootstrapCorrelation, bootstrap, correlate_sources_subsets
from tests.analysis import oracles

SCIPY_TOL = 1e-9
PROPERTY_SETTINGS = settings(max_examples=60, deadline=None)


def correlate(
    x: np.ndarray, y: np.ndarray, n_resamples: int, seed: int | None
) -> BootstrapCorrelation:
    """The production bootstrap of one source on all items."""
    y = np.asarray(y, dtype=float)
    [results] = correlate_sources_subsets(
        [np.asarray(x, dtype=float)], y, {"all": np.ones(y.size, dtype=bool)}, n_resamples, seed
    )
    return results["all"]


def assert_same_correlation(ours: BootstrapCorrelation, reference: BootstrapCorrelation) -> None:
    """Spearman identical; Pearson's point result identical and its interval to 1e-12."""
    assert ours.spearman == reference.spearman
    mine, theirs = ours.pearson, reference.pearson
    assert (mine.r, mine.p, mine.n, mine.reason) == (theirs.r, theirs.p, theirs.n, theirs.reason)
    assert mine.n_resamples_used == theirs.n_resamples_used
    if theirs.ci95 is None:
        assert mine.ci95 is None
    else:
        assert mine.ci95 == pytest.approx(theirs.ci95, abs=1e-12, rel=0)


def assert_same_as_reference(
    xs: list[np.ndarray],
    y: np.ndarray,
    masks: dict[str, np.ndarray],
    n_resamples: int,
    seed: int,
    shared: list[dict[str, BootstrapCorrelation]] | None = None,
) -> list[dict[str, BootstrapCorrelation]]:
    if shared is None:
        shared = correlate_sources_subsets(xs, y, masks, n_resamples, seed)
    assert len(shared) == len(xs)
    for x, results in zip(xs, shared, strict=True):
        reference = oracles.correlate_subsets(x, y, masks, n_resamples, seed)
        assert list(results) == list(reference)
        for name in reference:
            assert_same_correlation(results[name], reference[name])
    return shared


def sources_and_masks(y_kind: str) -> tuple[list[np.ndarray], np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(31)
    n = 700
    quality = rng.uniform(1, 5, n)
    if y_kind == "absolute":  # item means of 25 labels 1..5: at most 101 distinct values
        labels = np.clip(np.rint(quality[:, None] + rng.normal(0, 1, (n, 25))), 1, 5)
        y = labels.mean(axis=1)
    else:
        y = quality + rng.normal(0, 0.5, n)
    gaps = quality + rng.normal(0, 1.0, n)
    gaps[rng.random(n) < 0.1] = np.nan  # items without a score: its own item sets
    xs = [
        quality + rng.normal(0, 0.3, n),  # continuous, every item scored
        gaps,
        np.rint(quality + rng.normal(0, 1.0, n)),  # ties: a 1..5-like judge score
        -quality + rng.normal(0, 2.0, n),  # negative correlation
        np.full(n, 4.0),  # constant: undefined, no bootstrap
        np.where(quality > 2, quality, np.nan),  # a different coverage again
    ]
    top = y >= np.quantile(y, 0.9)
    masks = {
        "full": np.ones(n, dtype=bool),
        "full_again": np.ones(n, dtype=bool),
        "half": rng.random(n) < 0.5,
        "top_decile": top,
        "tiny": np.arange(n) < 3,
        "constant_y": y == np.median(y),
        "empty": np.zeros(n, dtype=bool),
    }
    return xs, y, masks


# --------------------------------------------------------------------------------------------
# The reference itself
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ties", [True, False])
def test_reference_bootstrap_equals_scipy_on_explicit_resamples(ties: bool) -> None:
    rng = np.random.default_rng(8)
    n, n_resamples, seed = 60, 40, 21
    if ties:
        x = rng.integers(1, 6, n).astype(float)
        y = np.round(x + rng.normal(size=n))
    else:
        x = rng.normal(size=n)
        y = x + rng.normal(size=n)
    rho, r = oracles.resampled_correlations(x, y, n_resamples=n_resamples, seed=seed)
    index = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    for b in range(n_resamples):
        xb, yb = x[index[b]], y[index[b]]
        assert rho[b] == pytest.approx(scipy.stats.spearmanr(xb, yb).statistic, abs=SCIPY_TOL)
        assert r[b] == pytest.approx(scipy.stats.pearsonr(xb, yb).statistic, abs=SCIPY_TOL)


# --------------------------------------------------------------------------------------------
# One source
# --------------------------------------------------------------------------------------------


def test_bootstrap_reproducible_and_covers_r() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=300)
    y = x + 0.3 * rng.normal(size=300)
    first = correlate(x, y, n_resamples=400, seed=11)
    again = correlate(x, y, n_resamples=400, seed=11)
    other = correlate(x, y, n_resamples=400, seed=12)
    assert first == again
    assert first.spearman.ci95 != other.spearman.ci95
    assert_same_correlation(first, oracles.correlate_with_bootstrap(x, y, 400, 11))
    for result in first:
        low, high = result.ci95
        assert low < result.r < high
        assert result.n_resamples_used == 400
        assert correlation_figures(result) == {
            "r": result.r,
            "p": result.p,
            "p_method": result.p_method,
            "ci95": [low, high],
        }


def test_constant_resamples_are_dropped_and_ci_needs_half() -> None:
    # x = [0, 0, 1], y = [0, 1, 1]: a resample is usable only if it holds items 0 and 2,
    # which happens with probability 12/27 < 1/2, so the interval is null.
    x, y = np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0])
    result = correlate(x, y, n_resamples=1000, seed=0)
    assert result.spearman.r == pytest.approx(0.5)
    assert result.spearman.ci95 is None and result.pearson.ci95 is None
    assert 380 < result.spearman.n_resamples_used < 500
    rho, _ = oracles.resampled_correlations(x, y, n_resamples=1000, seed=0)
    assert np.isnan(rho).sum() == 1000 - result.spearman.n_resamples_used


def test_subsets_equal_a_bootstrap_of_their_items() -> None:
    rng = np.random.default_rng(4)
    n = 400
    x = rng.normal(size=n)
    x[::17] = np.nan  # items without a model score
    y = np.round(x * 2 + rng.normal(size=n)) / 2
    masks = {
        "full": np.ones(n, dtype=bool),
        "full_again": np.ones(n, dtype=bool),  # computed once, reported under both names
        "half": rng.random(n) < 0.5,
        "tiny": np.arange(n) < 3,  # item 0 has no score: n = 2
        "constant_y": np.isclose(y, 0.5),
    }
    [results] = correlate_sources_subsets([x], y, masks, n_resamples=200, seed=9)
    assert list(results) == list(masks)
    for name, mask in masks.items():
        reference = oracles.correlate_with_bootstrap(x[mask], y[mask], n_resamples=200, seed=9)
        assert_same_correlation(results[name], reference)
    assert results["tiny"].spearman.reason == "fewer than 3 items (n=2)"
    assert results["constant_y"].pearson.reason.startswith("y is constant")


def test_bootstrap_of_a_study_sized_batch() -> None:
    """26,070 items x 1,000 resamples (the bench in bench/analysis_core.py times it)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=26_070)
    y = np.round(x + rng.normal(size=26_070), 1)
    result = correlate(x, y, n_resamples=1000, seed=0)
    for statistic in result:
        low, high = statistic.ci95
        assert low < statistic.r < high
        assert statistic.n_resamples_used == 1000


# --------------------------------------------------------------------------------------------
# Several sources at once: the shared resamples
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("y_kind", ["absolute", "continuous"])
def test_correlate_sources_subsets_equals_reference(y_kind: str) -> None:
    xs, y, masks = sources_and_masks(y_kind)
    shared = assert_same_as_reference(xs, y, masks, n_resamples=300, seed=17)
    assert shared[4]["full"].spearman.reason.startswith("x is constant")
    assert shared[0]["tiny"].spearman.reason == "fewer than 3 items (n=3)" or (
        shared[0]["tiny"].spearman.r is not None
    )
    assert shared[1]["full"].spearman.n < shared[0]["full"].spearman.n  # the NaN gaps
    for results in shared[:4]:
        assert results["full"].spearman.ci95 is not None
        assert results["full"].pearson.n_resamples_used == 300


def test_correlate_sources_subsets_no_resamples_and_no_sources() -> None:
    xs, y, masks = sources_and_masks("absolute")
    shared = assert_same_as_reference(xs, y, masks, n_resamples=0, seed=0)
    assert shared[0]["full"].spearman.ci95 is None
    assert correlate_sources_subsets([], y, masks) == []


def test_correlate_sources_subsets_constant_resamples_dropped() -> None:
    # x = [0, 0, 1], y = [0, 1, 1]: most resamples have a constant column (see above).
    x, y = np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0])
    masks = {"all": np.ones(3, dtype=bool)}
    [shared] = assert_same_as_reference([x], y, masks, n_resamples=1000, seed=0)
    assert shared["all"].spearman.ci95 is None
    assert 380 < shared["all"].spearman.n_resamples_used < 500


def test_correlate_sources_subsets_does_not_depend_on_chunks_or_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    xs, y, masks = sources_and_masks("absolute")
    monkeypatch.setattr(bootstrap, "_SHARED_CHUNK_DRAWS", 1_000)  # many chunks, 1 row at n=700
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_THREADS", 1)
    single = correlate_sources_subsets(xs, y, masks, n_resamples=150, seed=5)
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_THREADS", 3)
    threaded = correlate_sources_subsets(xs, y, masks, n_resamples=150, seed=5)
    monkeypatch.setattr(bootstrap, "_SHARED_CHUNK_DRAWS", 10**8)  # one chunk per item set
    one_chunk = correlate_sources_subsets(xs, y, masks, n_resamples=150, seed=5)
    assert single == threaded == one_chunk
    assert_same_as_reference(xs, y, masks, 150, 5, shared=one_chunk)


def test_correlate_sources_subsets_large_sets_fall_back(monkeypatch: pytest.MonkeyPatch) -> None:
    xs, y, masks = sources_and_masks("continuous")
    monkeypatch.setattr(bootstrap, "_SHARED_MAX_ITEMS", 100)  # only the small subsets share
    assert_same_as_reference(xs, y, masks, n_resamples=120, seed=2)


def test_one_source_kernel_does_not_depend_on_chunks_or_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(0, 4, 500).astype(float)
    y = x + rng.normal(size=500)
    monkeypatch.setattr(bootstrap, "_SHARED_MAX_ITEMS", 0)  # every item set: one source kernel
    monkeypatch.setattr(bootstrap, "_BOOTSTRAP_CHUNK_DRAWS", 5_000)  # many chunks
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_THREADS", 1)
    single = correlate(x, y, n_resamples=120, seed=3)
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_THREADS", 2)
    threaded = correlate(x, y, n_resamples=120, seed=3)
    monkeypatch.setattr(bootstrap, "_BOOTSTRAP_CHUNK_DRAWS", 10**7)  # one chunk
    one_chunk = correlate(x, y, n_resamples=120, seed=3)
    assert single == threaded == one_chunk
    assert_same_correlation(single, oracles.correlate_with_bootstrap(x, y, 120, 3))


def test_correlate_sources_subsets_many_items() -> None:
    """Tens of thousands of items: rank sums of the order of n^3 stay exact in int64."""
    rng = np.random.default_rng(6)
    n = 60_000
    quality = rng.normal(size=n)
    y = np.round(quality + rng.normal(size=n), 1)
    xs = [quality + rng.normal(size=n), np.round(quality * 3)]  # all differ / tied
    masks = {"full": np.ones(n, dtype=bool), "half": np.arange(n) % 2 == 0}
    assert_same_as_reference(xs, y, masks, n_resamples=8, seed=1)


def test_correlate_sources_subsets_progress_and_validation() -> None:
    xs, y, masks = sources_and_masks("absolute")
    calls: list[tuple[int, int]] = []
    correlate_sources_subsets(
        xs, y, masks, n_resamples=20, progress=lambda done, total: calls.append((done, total))
    )
    total = calls[0][1]
    # full/full_again and the empty/constant subsets coincide per coverage; 3 coverages.
    assert 3 <= total < len(masks) * len(xs)
    assert calls == [(done, total) for done in range(total + 1)]
    with pytest.raises(ValueError, match="bool mask"):
        correlate_sources_subsets(xs, y, {"indices": np.arange(10)})
    with pytest.raises(ValueError, match="same length"):
        correlate_sources_subsets([xs[0][:-1]], y, masks)


# Values on a grid, like label means and scores: with y values 1e-246 apart a resample's
# Pearson variance is rounding noise and two summation orders disagree on it.
GRID_VALUES = st.integers(-24, 24).map(lambda v: v / 8)


@PROPERTY_SETTINGS
@given(
    data=st.lists(
        st.tuples(
            GRID_VALUES | st.just(math.nan),
            GRID_VALUES,
            st.integers(1, 3),
            st.booleans(),
        ),
        max_size=25,
    )
)
def test_correlate_sources_subsets_matches_reference_property(data: list[tuple]) -> None:
    values = np.array([row[0] for row in data], dtype=float)
    y = np.array([row[1] for row in data], dtype=float)
    ties = np.array([row[2] for row in data], dtype=float)
    xs = [values, ties, -values + ties]
    masks = {
        "all": np.ones(len(data), dtype=bool),
        "some": np.array([row[3] for row in data], dtype=bool),
    }
    assert_same_as_reference(xs, y, masks, n_resamples=25, seed=3)
