"""Seeded bootstrap intervals for the model-human correlations of many sources and subsets.

:func:`correlate_sources_subsets` is what the analysis report runs: for every score source
``x`` and every subset of items, Spearman's rho and Pearson's r against the human means ``y``
(as :func:`~analysis.stats.correlation.spearman` / :func:`~analysis.stats.correlation.pearson`)
with a 95 % percentile bootstrap interval (Efron & Tibshirani 1993, ch. 13) over items
resampled with replacement.

Resampling: resample ``b`` of an item set of ``n`` items draws the items of row ``b`` of
``np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))``, so a seed reproduces the
intervals exactly. Rows are drawn in chunks (numpy's generator yields the same stream however
the rows are split) and each chunk is evaluated for all resamples at once, by
:data:`BOOTSTRAP_THREADS` threads; the results do not depend on the chunking or the threads.

Kernels: sources that see the same items share the resamples, the ranks of y and the Pearson
sums (:func:`shared_bootstrap_chunk`, exact integer rank sums). Item sets larger than
:data:`_SHARED_MAX_ITEMS` (about a million items), where the shared kernel's int64 sums
would overflow, are bootstrapped one source at a time (:func:`bootstrap_chunk`, float rank
sums: exact up to ~10^5 items, rounded beyond). Where both are exact they give the same
Spearman values, and Pearson values equal to rounding (~1e-14). The kernels are
:mod:`analysis.stats.bootstrap_kernels`; this module plans the item sets, draws the
resamples, runs the threads and takes the intervals.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import NamedTuple, TypeVar

import numpy as np

from analysis.stats.bootstrap_kernels import (
    PreparedPair,
    SharedItems,
    bootstrap_chunk,
    prepare_pair,
    shared_bootstrap_chunk,
)
from analysis.stats.correlation import (
    BootstrapCorrelation,
    CorrelationResult,
    group_by_value,
    point_correlations,
    prepare_column,
    undefined_reason,
)

__all__ = [
    "BOOTSTRAP_THREADS",
    "correlate_sources_subsets",
    "percentile_interval",
    "resample_counts",
]

T = TypeVar("T")

# Rows of resamples processed at once by the one-source kernel are chosen so that one chunk
# holds about this many draws: at n = 26,070 that is 11 resamples and ~25 MB of temporaries
# per chunk. Chunks that stay in cache were faster than larger ones (measured 250k-2M draws on
# 2 cores).
_BOOTSTRAP_CHUNK_DRAWS = 300_000


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: Threads evaluating bootstrap chunks (the results do not depend on it); 1 disables
#: threading. Set ``analysis.stats.bootstrap.BOOTSTRAP_THREADS = 1`` in processes that already
#: run one analysis per core.
BOOTSTRAP_THREADS = min(4, _usable_cpus())

# Resample draws per chunk of the shared bootstrap: the drawn items of a chunk (int64) are
# the only b x n array, drawn in this thread while the others evaluate earlier chunks.
_SHARED_CHUNK_DRAWS = 100_000
# The kernel's int64 rank sums reach about 4 n^3 (``2n(n+1)(2n+1)``); larger item sets use
# the per-source bootstrap.
_SHARED_MAX_ITEMS = 2**20 - 1


def correlate_sources_subsets(
    xs: Sequence[np.ndarray],
    y: np.ndarray,
    masks: Mapping[str, np.ndarray],
    n_resamples: int = 1000,
    seed: int | None = 0,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, BootstrapCorrelation]]:
    """Spearman and Pearson of each x against y on each subset, with bootstrap intervals.

    ``masks`` maps a subset name to a bool mask over the items. Returns one dict per x,
    ``subset name -> BootstrapCorrelation``, in the order of ``masks``. On each subset the
    pairs where x or y is not finite are left out; point estimates and p-values are those of
    :func:`~analysis.stats.correlation.spearman` and
    :func:`~analysis.stats.correlation.pearson`, undefined ones ``None`` with a reason and no
    interval. The 95 % interval is the 2.5th / 97.5th percentile (``np.percentile``, linear)
    of the ``n_resamples`` resampled statistics; resamples in which a column is constant are
    dropped, and if fewer than half are usable ``ci95`` is ``None``.

    Per subset, the sources whose items (``mask & finite(x) & finite(y)``) coincide form one
    item set (with full coverage, all sources share it); each distinct set is resampled once
    from its own ``default_rng(seed)``, so a subset's result does not depend on the other
    subsets or sources, and its draws, the ranks of y and the Pearson sums are computed once
    for all its sources (see :func:`shared_bootstrap_chunk`). ``progress(done, total)`` is
    called with ``done = 0`` once the ``total`` distinct item sets are known and after each
    finished set.
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    xs = [np.asarray(x, dtype=np.float64).ravel() for x in xs]
    for x in xs:
        if x.shape != y.shape:
            raise ValueError(f"x and y must have the same length ({x.size} != {y.size})")
    for name, mask in masks.items():
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != y.shape:
            raise ValueError(f"subset {name!r} must be a bool mask over the {y.size} items")
    finite_y = np.isfinite(y)
    finite = [np.isfinite(x) & finite_y for x in xs]
    y_order = np.argsort(y, kind="stable")
    x_orders = [np.argsort(x, kind="stable") for x in xs]

    # Distinct item sets in order of first use, with the sources that see each.
    set_of: list[dict[str, bytes]] = [{} for _ in xs]
    sets: dict[bytes, tuple[np.ndarray, list[int]]] = {}
    for name, mask in masks.items():
        mask = np.asarray(mask)
        for source, source_finite in enumerate(finite):
            keep = mask & source_finite
            key = np.packbits(keep).tobytes()
            entry = sets.setdefault(key, (keep, []))
            if source not in entry[1]:
                entry[1].append(source)
            set_of[source][name] = key
    keys = list(sets)
    if progress is not None:
        progress(0, len(keys))

    plans: list[_ItemsPlan] = []

    def tasks() -> Iterator[tuple[int, SharedItems, np.ndarray]]:
        for key in keys:
            keep, members = sets[key]
            plan = _plan_items(keep, members, xs, y, x_orders, y_order, n_resamples, seed)
            plans.append(plan)
            if plan.shared is not None:
                draws = _resample_index_chunks(
                    plan.shared.n, n_resamples, seed, _SHARED_CHUNK_DRAWS
                )
                for index in draws:
                    yield len(plans) - 1, plan.shared, index

    results: dict[tuple[bytes, int], BootstrapCorrelation] = {}
    chunks: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    finished = 0

    def finish_before(stop: int) -> None:
        nonlocal finished
        while finished < stop:
            finished_results = _finish_plan(plans[finished], chunks.pop(finished, []))
            for member, result in finished_results.items():
                results[keys[finished], member] = result
            finished += 1
            if progress is not None:
                progress(finished, len(keys))

    for set_number, rho, r in _ordered_results(_numbered_shared_chunk, tasks()):
        finish_before(set_number)
        chunks.setdefault(set_number, []).append((rho, r))
    finish_before(len(plans))
    return [
        {name: results[key, source] for name, key in set_of[source].items()}
        for source in range(len(xs))
    ]


def _numbered_shared_chunk(
    set_number: int, items: SharedItems, index: np.ndarray
) -> tuple[int, np.ndarray, np.ndarray]:
    return (set_number, *shared_bootstrap_chunk(items, index))


# --------------------------------------------------------------------------------------------
# Resampling, threads and the interval
# --------------------------------------------------------------------------------------------


def _resample_index_chunks(
    n: int, n_resamples: int, seed: int | None, chunk_draws: int | None = None
) -> Iterator[np.ndarray]:
    """Resample indices in chunks of rows of ``rng.integers(0, n, size=(n_resamples, n))``.

    numpy's generator yields the same stream however the rows are split, so resample ``b`` is
    row ``b`` of ``np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))``.
    A chunk holds about ``chunk_draws`` draws (default :data:`_BOOTSTRAP_CHUNK_DRAWS`).
    """
    rng = np.random.default_rng(seed)
    if chunk_draws is None:
        chunk_draws = _BOOTSTRAP_CHUNK_DRAWS
    rows = max(1, chunk_draws // max(n, 1))
    for start in range(0, n_resamples, rows):
        yield rng.integers(0, n, size=(min(rows, n_resamples - start), n))


def _ordered_results(function: Callable[..., T], tasks: Iterable[tuple]) -> Iterator[T]:
    """``function(*task)`` for each task, in task order, evaluated by ``BOOTSTRAP_THREADS``.

    Tasks are taken from ``tasks`` in this thread (so anything drawn there, like resample
    indices, does not depend on the threading), at most one task per thread waiting, to bound
    memory; numpy releases the GIL in the heavy steps.
    """
    if BOOTSTRAP_THREADS <= 1:
        for task in tasks:
            yield function(*task)
        return
    with ThreadPoolExecutor(max_workers=BOOTSTRAP_THREADS) as pool:
        pending: deque[Future[T]] = deque()
        for task in tasks:
            pending.append(pool.submit(function, *task))
            while len(pending) > BOOTSTRAP_THREADS:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def percentile_interval(resampled: np.ndarray) -> tuple[float, float] | None:
    """95 % percentile interval (Efron & Tibshirani 1993, ch. 13) of the usable resamples.

    The 2.5th / 97.5th percentiles (``np.percentile``, linear) of the finite values of
    ``resampled``; non-finite values are resamples where the statistic was undefined and are
    dropped. ``None`` without resamples or when fewer than half of them are usable. Every
    interval of the analysis report comes from here.
    """
    resampled = np.asarray(resampled, dtype=np.float64)
    usable = resampled[np.isfinite(resampled)]
    if resampled.size == 0 or usable.size * 2 < resampled.size:
        return None
    low, high = np.percentile(usable, [2.5, 97.5])
    return float(low), float(high)


def resample_counts(n_units: int, n_resamples: int, seed: int | None) -> Iterator[np.ndarray]:
    """How often each unit is drawn in each resample, in chunks of ``(b, n_units)`` rows.

    Resample ``b`` draws the units of row ``b`` of
    ``np.random.default_rng(seed).integers(0, n_units, size=(n_resamples, n_units))`` (the
    stream of :func:`_resample_index_chunks`), so items or annotators resampled here follow the
    report's ``seed`` exactly as its correlation intervals do. A unit may be an item or, for a
    cluster bootstrap (Field & Welsh 2007), an annotator: drawing a person draws all of their
    labels, which keeps the dependence between one person's labels in every resample.
    """
    for index in _resample_index_chunks(n_units, n_resamples, seed):
        rows = index.shape[0]
        flat = index + (np.arange(rows, dtype=np.int64) * n_units)[:, None]
        counts = np.bincount(flat.ravel(), minlength=rows * n_units)
        yield counts.reshape(rows, n_units)


def _with_interval(point: CorrelationResult, resampled: np.ndarray) -> CorrelationResult:
    """The point result with the :func:`percentile_interval` of its resamples."""
    used = int(np.isfinite(resampled).sum())
    interval = percentile_interval(resampled)
    if interval is None:
        return point._replace(n_resamples_used=used)
    return point._replace(ci95=interval, n_resamples_used=used)


# --------------------------------------------------------------------------------------------
# Planning: one distinct item set and the sources that see it
# --------------------------------------------------------------------------------------------


class _ItemsPlan(NamedTuple):
    """One distinct item set: the sources that see it, their point results, the shared data."""

    points: dict[int, BootstrapCorrelation]  # per member: point results, or the whole result
    bootstrapped: tuple[int, ...]  # members left to the kernel, in its order
    shared: SharedItems | None  # None when no member is left to the kernel


def _plan_items(
    keep: np.ndarray,
    members: Sequence[int],
    xs: Sequence[np.ndarray],
    y: np.ndarray,
    x_orders: Sequence[np.ndarray],
    y_order: np.ndarray,
    n_resamples: int,
    seed: int | None,
) -> _ItemsPlan:
    """Point results of each member on the items ``keep`` and the kernel's shared data.

    Members whose correlation is undefined, and all members of a set too large for the
    kernel, get their whole result here.
    """
    local_index = np.cumsum(keep) - 1
    y_local = y[keep]
    y_sorted = local_index[y_order[keep[y_order]]]
    n = y_local.size
    points: dict[int, BootstrapCorrelation] = {}
    defined: list[tuple[int, np.ndarray, np.ndarray]] = []
    for member in members:
        x_local = xs[member][keep]
        reason = undefined_reason(x_local, y_local)
        if reason is not None:
            undefined = CorrelationResult(None, None, None, n, reason)
            points[member] = BootstrapCorrelation(undefined, undefined)
            continue
        x_sorted = local_index[x_orders[member][keep[x_orders[member]]]]
        if n > _SHARED_MAX_ITEMS:
            points[member] = _bootstrap_pair(
                x_local, y_local, x_sorted, y_sorted, n_resamples, seed
            )
        else:
            defined.append((member, x_local, x_sorted))
    if not defined:
        return _ItemsPlan(points, (), None)

    y_group, y_values, y_sizes = group_by_value(y_local, y_sorted)
    y_column = prepare_column(y_local, y_group)
    y_position = np.empty(n, dtype=np.int64)
    y_position[y_sorted] = np.arange(n)
    # Standardised as in prepare_pair.
    y_mean, y_std = y_local.mean(), y_local.std()
    y_z = (y_local - y_mean) / y_std
    n_sources = len(defined)
    x_along_y = np.empty((n_sources, n), dtype=np.int64)
    x_groups = np.empty(n_sources, dtype=np.int64)
    x_ends = np.zeros((n_sources, n), dtype=np.int64)
    x_group_z, x_group_zz, xy_z = np.zeros((3, n_sources, n))
    for k, (member, x_local, x_sorted) in enumerate(defined):
        x_group, x_values, x_sizes = group_by_value(x_local, x_sorted)
        points[member] = point_correlations(prepare_column(x_local, x_group), y_column)
        x_mean, x_std = x_local.mean(), x_local.std()
        x_along_y[k] = y_position[x_sorted]
        x_groups[k] = x_sizes.size
        x_ends[k, : x_sizes.size] = np.cumsum(x_sizes)
        x_group_z[k, : x_sizes.size] = (x_values - x_mean) / x_std
        x_group_zz[k] = x_group_z[k] ** 2
        xy_z[k] = ((x_local - x_mean) / x_std * y_z)[y_sorted]
    if n_resamples <= 0:
        return _ItemsPlan(points, (), None)
    y_group_z = (y_values - y_mean) / y_std
    shared = SharedItems(
        n=n,
        y_position=y_position,
        y_ends=np.cumsum(y_sizes),
        y_group_z=y_group_z,
        y_group_zz=y_group_z**2,
        xy_z=xy_z,
        x_along_y=x_along_y,
        x_groups=x_groups,
        x_ends=x_ends,
        x_group_z=x_group_z,
        x_group_zz=x_group_zz,
    )
    return _ItemsPlan(points, tuple(member for member, _, _ in defined), shared)


def _finish_plan(
    plan: _ItemsPlan, chunks: list[tuple[np.ndarray, np.ndarray]]
) -> dict[int, BootstrapCorrelation]:
    """Each member's result: the point results with the intervals of the kernel's resamples."""
    results = dict(plan.points)
    if not plan.bootstrapped:
        return results
    rho = np.concatenate([chunk[0] for chunk in chunks], axis=1)
    r = np.concatenate([chunk[1] for chunk in chunks], axis=1)
    for k, member in enumerate(plan.bootstrapped):
        point = plan.points[member]
        results[member] = BootstrapCorrelation(
            spearman=_with_interval(point.spearman, rho[k]),
            pearson=_with_interval(point.pearson, r[k]),
        )
    return results


def _bootstrap_prepared(
    prepared: PreparedPair, n: int, n_resamples: int, seed: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Run :func:`bootstrap_chunk` over all resamples (threads: :func:`_ordered_results`)."""
    rhos: list[np.ndarray] = []
    rs: list[np.ndarray] = []
    tasks = ((prepared, index) for index in _resample_index_chunks(n, n_resamples, seed))
    for rho, r in _ordered_results(bootstrap_chunk, tasks):
        rhos.append(rho)
        rs.append(r)
    if not rhos:
        return np.empty(0), np.empty(0)
    return np.concatenate(rhos), np.concatenate(rs)


def _bootstrap_pair(
    x: np.ndarray,
    y: np.ndarray,
    x_order: np.ndarray,
    y_order: np.ndarray,
    n_resamples: int,
    seed: int | None,
) -> BootstrapCorrelation:
    """Point results and intervals of one finite, defined (x, y) by :func:`bootstrap_chunk`.

    ``x_order`` / ``y_order`` are stable ascending argsorts of x and y.
    """
    prepared = prepare_pair(x, y, x_order, y_order)
    point = point_correlations(
        prepare_column(x, prepared.x_group), prepare_column(y, prepared.y_group)
    )
    rho_boot, r_boot = _bootstrap_prepared(prepared, x.size, n_resamples, seed)
    return BootstrapCorrelation(
        spearman=_with_interval(point.spearman, rho_boot),
        pearson=_with_interval(point.pearson, r_boot),
    )
