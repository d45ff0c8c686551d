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
sums (:func:`_shared_bootstrap_chunk`, exact integer rank sums). Item sets larger than
:data:`_SHARED_MAX_ITEMS` (about a million items), where the shared kernel's packed int64 sums
would overflow, are bootstrapped one source at a time (:func:`_bootstrap_chunk`, float rank
sums: exact up to ~10^5 items, rounded beyond). Where both are exact they give the same
Spearman values, and Pearson values equal to rounding (~1e-14).
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import NamedTuple, TypeVar

import numpy as np

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

# Resample draws per chunk of the shared bootstrap. Its kernel keeps six (b x n) int64 /
# float64 buffers per thread; measured on 2 cores over the bench-large subsets (25k-400k
# draws), 100k-200k was fastest, 400k ~20 % slower (cache).
_SHARED_CHUNK_DRAWS = 100_000
# The kernel packs ``M << bits(n) | W`` into int64 (``M <= n (2n + 1)``, sums up to
# ``n (n + 1)``); larger item sets use the per-source bootstrap.
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
    for all its sources (see :func:`_shared_bootstrap_chunk`). ``progress(done, total)`` is
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
    scratch = threading.local()  # buffers of each evaluating thread, freed with this call

    def tasks() -> Iterator[tuple[int, _SharedItems, np.ndarray, threading.local]]:
        for key in keys:
            keep, members = sets[key]
            plan = _plan_items(keep, members, xs, y, x_orders, y_order, n_resamples, seed)
            plans.append(plan)
            if plan.shared is not None:
                draws = _resample_index_chunks(
                    plan.shared.n, n_resamples, seed, _SHARED_CHUNK_DRAWS
                )
                for index in draws:
                    yield len(plans) - 1, plan.shared, index, scratch

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
    set_number: int, items: _SharedItems, index: np.ndarray, scratch: threading.local
) -> tuple[int, np.ndarray, np.ndarray]:
    return (set_number, *_shared_bootstrap_chunk(items, index, scratch))


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


class _SharedSource(NamedTuple):
    """One x of a :class:`_SharedItems`: where its items sit along ascending y."""

    x_along_y: np.ndarray  # (n,) position along ascending y of each item, items in ascending x
    z_row: int  # first of its rows in ``_SharedItems.z``
    # Groups of equal x (None when all x differ, every item its own group):
    x_ends: np.ndarray | None  # (Gx,) end of each group along ``x_along_y``
    x_group_z: np.ndarray | None  # (Gx,) standardised x of each group
    x_group_zz: np.ndarray | None  # (Gx,) its square


class _SharedItems(NamedTuple):
    """Everything the shared bootstrap kernel needs of one item set and its sources.

    The kernel keeps a resample's draw counts ``W`` (``b x n``) along ascending y (stable), so
    groups of equal y are contiguous.
    """

    n: int
    y_order: np.ndarray  # (n,) the items in ascending y: column j of W counts item y_order[j]
    y_ends: np.ndarray | None  # (Gy,) end of each group of equal y; None when all y differ
    y_group: np.ndarray | None  # (n,) group of each position along y (None when all differ)
    y_group_z: np.ndarray  # (Gy,) standardised y of each group
    y_group_zz: np.ndarray  # (Gy,) its square
    z: np.ndarray  # (K, n) along y, per source: x_z, x_z**2, x_z * y_z (only the last for tied x)
    sources: tuple[_SharedSource, ...]


class _ItemsPlan(NamedTuple):
    """One distinct item set: the sources that see it, their point results, the shared data."""

    points: dict[int, BootstrapCorrelation]  # per member: point results, or the whole result
    bootstrapped: tuple[int, ...]  # members left to the kernel, in its order
    shared: _SharedItems | None  # None when no member is left to the kernel


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
    y_position = np.empty(n, dtype=np.intp)
    y_position[y_sorted] = np.arange(n)
    # Standardised as in _prepare_pair.
    y_mean, y_std = y_local.mean(), y_local.std()
    y_z = (y_local - y_mean) / y_std
    sources: list[_SharedSource] = []
    z_rows: list[np.ndarray] = []
    for member, x_local, x_sorted in defined:
        x_group, x_values, x_sizes = group_by_value(x_local, x_sorted)
        points[member] = point_correlations(prepare_column(x_local, x_group), y_column)
        x_mean, x_std = x_local.mean(), x_local.std()
        x_z = (x_local - x_mean) / x_std
        source = _SharedSource(y_position[x_sorted], len(z_rows), None, None, None)
        if x_sizes.size == n:
            z_rows += [x_z, x_z**2, x_z * y_z]
        else:
            x_group_z = (x_values - x_mean) / x_std
            z_rows.append(x_z * y_z)
            source = source._replace(
                x_ends=np.cumsum(x_sizes), x_group_z=x_group_z, x_group_zz=x_group_z**2
            )
        sources.append(source)
    if n_resamples <= 0:
        return _ItemsPlan(points, (), None)
    y_group_z = (y_values - y_mean) / y_std
    distinct_y = y_sizes.size == n
    shared = _SharedItems(
        n=n,
        y_order=y_sorted,
        y_ends=None if distinct_y else np.cumsum(y_sizes),
        y_group=None if distinct_y else y_group[y_sorted],
        y_group_z=y_group_z,
        y_group_zz=y_group_z**2,
        z=np.stack(z_rows)[:, y_sorted],
        sources=tuple(sources),
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


# --------------------------------------------------------------------------------------------
# The shared kernel: every source of one item set at once
# --------------------------------------------------------------------------------------------


def _rank_sum_of_squares(n: int, cubes: np.ndarray) -> np.ndarray:
    """``sum_g w_g R_g^2 - n (n + 1)^2`` of doubled mid-ranks ``R`` from ``sum_g w_g^3``.

    Ranks 1..n sum to ``n (n + 1)(2n + 1) / 6`` in squares; ties of ``w`` items at their mid-rank
    lose ``(w^3 - w) / 12`` of it, so ``sum_g w_g R_g^2 = (2n(n+1)(2n+1) - sum w^3 + n) / 3``.
    Integer arithmetic: equal to the float sums of :func:`_bootstrap_chunk` while they are exact.
    """
    total = (2 * n * (n + 1) * (2 * n + 1) + n - cubes) // 3
    return (total - n * (n + 1) ** 2).astype(np.float64)


def _doubled_from_cumulative(cumulative: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``2 C - w + 1``: the doubled mid-rank of each group (see :func:`_doubled_midranks`)."""
    rank = cumulative * 2
    rank -= weight
    rank += 1
    return rank


def _cube_sums(weight: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij,ij->i", weight, weight, weight)


class _Buffers:
    """Flat arrays reused as ``b x n`` temporaries by one thread, grown when needed.

    Fresh arrays of that size cost a page fault per 4 KiB on every use, several times the
    arithmetic done on them.
    """

    def __init__(self) -> None:
        self._flat: dict[str, np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, int], dtype: type) -> np.ndarray:
        size = shape[0] * shape[1]
        flat = self._flat.get(name)
        if flat is None or flat.size < size:
            flat = self._flat[name] = np.empty(size, dtype=dtype)
        return flat[:size].reshape(shape)


def _thread_buffers(scratch: threading.local) -> _Buffers:
    buffers = getattr(scratch, "buffers", None)
    if buffers is None:
        buffers = scratch.buffers = _Buffers()
    return buffers


def _shared_bootstrap_chunk(
    items: _SharedItems, index: np.ndarray, scratch: threading.local
) -> tuple[np.ndarray, np.ndarray]:
    """Spearman and Pearson of ``b`` resamples for every source of ``items``: ``(S, b)`` each.

    The statistics of :func:`_bootstrap_chunk`, with the work on the draws and on y done once
    for all sources. One ``np.bincount`` gives each resample's draw count ``W_j`` of every item
    (kept along ascending y); one cumulative sum gives the doubled mid-ranks of y (``R^y``, per
    group of equal y) and ``M_j = W_j R^y_j``. Per source one gather reads the packed
    ``Q = M << s | W`` in x order (``W <= n < 2**s``, so the low bits of ``Q`` and of its
    cumulative sums hold ``W`` and ``C = cumsum(W)``, the high bits ``M`` and ``cumsum(M)``).
    When all x differ ``R^x_j = 2 C_j - W_j + 1``, so the cross sum
    ``sum_j W_j R^x_j R^y_j = 2 sum_j C_j M_j - sum_j W_j M_j + n (n + 1)`` (the last two
    shared, ``sum C M`` read off ``sum C Q``); for tied x, ``cumsum(Q)`` at the group ends gives
    each group's weight and sum of ``M``. The sums of squares follow from ``sum w^3``
    (:func:`_rank_sum_of_squares`). All rank sums are int64, so Spearman equals
    :func:`_bootstrap_chunk` exactly. Pearson uses the same raw-moment formula; its sums over
    ``W`` come from one ``einsum`` over all sources (group weights for tied x) and agree with
    :func:`_bootstrap_chunk` to rounding (~1e-14). The ``b x n`` temporaries live in per-thread
    buffers (``scratch``).
    """
    b, n = index.shape
    buffers = _thread_buffers(scratch)
    slot = np.add(index, (np.arange(b) * n)[:, None], out=buffers.get("slot", (b, n), np.intp))
    weight = buffers.get("weight", (b, n), np.int64)
    counts = np.bincount(slot.ravel(), minlength=b * n).reshape(b, n)
    np.take(counts, items.y_order, axis=1, out=weight, mode="clip")
    del counts
    packed = np.cumsum(weight, axis=1, out=buffers.get("packed", (b, n), np.int64))
    if items.y_ends is None:
        y_weight = weight
        packed *= 2  # 2 C - W + 1: the doubled mid-rank of each item
        packed -= weight
        packed += 1
    else:
        y_cumulative = np.take(packed, items.y_ends - 1, axis=1)
        y_weight = np.diff(y_cumulative, axis=1, prepend=0)
        y_rank = _doubled_from_cumulative(y_cumulative, y_weight)
        np.take(y_rank, items.y_group, axis=1, out=packed, mode="clip")
    packed *= weight  # M
    # sum w^3 <= (sum w)^3 = n^3, with equality exactly when one group holds every draw: the
    # resample is usable when neither column is constant.
    item_cubes = _cube_sums(weight)
    y_cubes = item_cubes if items.y_ends is None else _cube_sums(y_weight)
    y_ss = _rank_sum_of_squares(n, y_cubes)
    y_usable = y_cubes < n**3
    centre = n * (n + 1) ** 2
    if any(source.x_ends is None for source in items.sources):
        item_ss = _rank_sum_of_squares(n, item_cubes)
        item_usable = item_cubes < n**3
        # sum_j W_j R^y_j = n (n + 1) (ranks of all draws), so the cross sum with
        # R^x = 2 C - W + 1 is 2 sum C M - sum W M + n (n + 1).
        shared_cross = n * (n + 1) - np.einsum("ij,ij->i", weight, packed)
    shift = n.bit_length()
    low = (1 << shift) - 1
    packed <<= shift
    packed |= weight
    # sum_j C_j Q_j = 2**s sum_j C_j M_j + sum_j C_j W_j, and when all x differ
    # sum_j C_j W_j = ((sum W)^2 + sum W^2) / 2 whatever the order: sum C M without unpacking
    # M, while sum C Q <= n sum Q fits int64.
    unpack = n * ((n * (n + 1) << shift) + n) >= 2**63
    if not unpack:
        self_pairs = (n * n + np.einsum("ij,ij->i", weight, weight)) // 2

    float_weight = buffers.get("float_weight", (b, n), np.float64)
    float_weight[...] = weight
    # Each (moment, resample) is a dot product over the items in a fixed order, so a resample's
    # value does not depend on the chunk it is in (BLAS would be faster, but its order depends
    # on the shapes and its threads spin on a busy machine).
    moments = np.einsum("ij,kj->ki", float_weight, items.z)

    n_sources = len(items.sources)
    rho = np.empty((n_sources, b))
    usable = np.empty((n_sources, b), dtype=bool)
    sum_x, sum_xx, sum_xy = np.empty((3, n_sources, b))
    x_packed = buffers.get("x_packed", (b, n), np.int64)
    x_cumulative = buffers.get("x_cumulative", (b, n), np.int64)
    for k, source in enumerate(items.sources):
        np.take(packed, source.x_along_y, axis=1, out=x_packed, mode="clip")
        if source.x_ends is None:
            np.bitwise_and(x_packed, low, out=x_cumulative)
            np.cumsum(x_cumulative, axis=1, out=x_cumulative)
            if unpack:
                x_packed >>= shift
                cm = np.einsum("ij,ij->i", x_cumulative, x_packed)
            else:
                cm = (np.einsum("ij,ij->i", x_cumulative, x_packed) - self_pairs) >> shift
            cross = 2 * cm + shared_cross
            x_ss = item_ss
            usable[k] = item_usable & y_usable
            sum_x[k], sum_xx[k], sum_xy[k] = moments[source.z_row : source.z_row + 3]
        else:
            np.cumsum(x_packed, axis=1, out=x_packed)
            at_ends = np.take(x_packed, source.x_ends - 1, axis=1)
            group_weight = np.diff(at_ends & low, axis=1, prepend=0)
            group_ranked = np.diff(at_ends >> shift, axis=1, prepend=0)
            group_rank = _doubled_from_cumulative(at_ends & low, group_weight)
            cross = np.einsum("ij,ij->i", group_rank, group_ranked)
            group_cubes = _cube_sums(group_weight)
            x_ss = _rank_sum_of_squares(n, group_cubes)
            usable[k] = (group_cubes < n**3) & y_usable
            float_group_weight = group_weight.astype(np.float64)
            sum_x[k] = np.einsum("ij,j->i", float_group_weight, source.x_group_z)
            sum_xx[k] = np.einsum("ij,j->i", float_group_weight, source.x_group_zz)
            sum_xy[k] = moments[source.z_row]
        xy_sp = (cross - centre).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            rho[k] = xy_sp / np.sqrt(x_ss * y_ss)

    float_y_weight = float_weight if items.y_ends is None else y_weight.astype(np.float64)
    sum_y = np.einsum("ij,j->i", float_y_weight, items.y_group_z)
    sum_yy = np.einsum("ij,j->i", float_y_weight, items.y_group_zz)
    return _resampled_results(rho, sum_x, sum_xx, sum_y, sum_yy, sum_xy, n, usable)


def _resampled_results(
    rho: np.ndarray,
    sum_x: np.ndarray,
    sum_xx: np.ndarray,
    sum_y: np.ndarray,
    sum_yy: np.ndarray,
    sum_xy: np.ndarray,
    n: int,
    usable: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Pearson r from the resamples' raw moment sums; both statistics clipped to [-1, 1],
    NaN for resamples in which a column came out constant.

    ``r = (S_xy/n - S_x S_y/n^2) / sqrt((S_xx/n - (S_x/n)^2) (S_yy/n - (S_y/n)^2))``.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sum_xy / n - (sum_x / n) * (sum_y / n)
        x_var = sum_xx / n - (sum_x / n) ** 2
        y_var = sum_yy / n - (sum_y / n) ** 2
        r = cov / np.sqrt(x_var * y_var)
    rho = np.where(usable, np.clip(rho, -1.0, 1.0), np.nan)
    r = np.where(usable, np.clip(r, -1.0, 1.0), np.nan)
    return rho, r


# --------------------------------------------------------------------------------------------
# One source at a time: item sets too large for the shared kernel
# --------------------------------------------------------------------------------------------


class _PreparedPair(NamedTuple):
    """What the vectorised bootstrap needs of one (x, y), computed once."""

    x_group: np.ndarray  # (n,) group id of each item by equal x, ascending
    y_group: np.ndarray
    x_group_z: np.ndarray  # (Gx,) standardised x of each group
    y_group_z: np.ndarray
    xy_z: np.ndarray  # (n,) product of the standardised values


def _prepare_pair(
    x: np.ndarray,
    y: np.ndarray,
    x_order: np.ndarray | None = None,
    y_order: np.ndarray | None = None,
) -> _PreparedPair:
    x_group, x_values, _ = group_by_value(x, x_order)
    y_group, y_values, _ = group_by_value(y, y_order)
    # Standardising keeps the raw-moment sums below well conditioned.
    x_mean, x_std = x.mean(), x.std()
    y_mean, y_std = y.mean(), y.std()
    x_z = (x - x_mean) / x_std
    y_z = (y - y_mean) / y_std
    return _PreparedPair(
        x_group=x_group,
        y_group=y_group,
        x_group_z=(x_values - x_mean) / x_std,
        y_group_z=(y_values - y_mean) / y_std,
        xy_z=x_z * y_z,
    )


def _doubled_midranks(group_weights: np.ndarray) -> np.ndarray:
    """Twice the mid-rank of each value group, ``2 C_g - w_g + 1`` (odd integers)."""
    doubled = np.cumsum(group_weights, axis=-1)
    doubled *= 2
    doubled -= group_weights
    doubled += 1
    return doubled


def _bootstrap_chunk(prepared: _PreparedPair, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman and Pearson of ``b`` resamples at once; ``NaN`` where a column is constant.

    Each row of ``index`` (``b x n``) lists the items drawn. For each resample and each group
    of equal x values the draw count ``w_g`` comes from one ``np.bincount``; the mid-rank of
    group ``g`` is then ``C_g - (w_g - 1)/2`` (``C`` = cumulative weight), so x and y are sorted
    once, not once per resample. Ranks are kept doubled (``2 C_g - w_g + 1``, odd integers with
    mean ``n + 1``): every rank sum below is then a sum of integers under 2**53, exact in
    float64 for n up to ~10^5, and Spearman is the weighted Pearson correlation of the ranks.
    Pearson uses raw moments of the standardised values: group sums per resample, the cross
    term by one gather. Per-row sums do not depend on how many rows a chunk has, so results
    are identical however the resamples are split into chunks or threads.
    """
    b, n = index.shape
    n_x_groups = prepared.x_group_z.size
    n_y_groups = prepared.y_group_z.size
    x_flat = np.take(prepared.x_group, index)
    x_flat += (np.arange(b, dtype=np.int64) * n_x_groups)[:, None]
    y_flat = np.take(prepared.y_group, index)
    y_flat += (np.arange(b, dtype=np.int64) * n_y_groups)[:, None]
    x_count = np.bincount(x_flat.ravel(), minlength=b * n_x_groups).reshape(b, n_x_groups)
    y_count = np.bincount(y_flat.ravel(), minlength=b * n_y_groups).reshape(b, n_y_groups)
    usable = (x_count.max(axis=1) < n) & (y_count.max(axis=1) < n)
    x_weight = x_count.astype(np.float64)
    y_weight = y_count.astype(np.float64)

    x_rank = _doubled_midranks(x_weight)
    y_rank = _doubled_midranks(y_weight)
    # sum_i w_i R_i = n (n + 1), hence sum w (R - (n + 1))^2 = sum w R^2 - n (n + 1)^2.
    centre = float(n * (n + 1) ** 2)
    x_ss = np.einsum("ij,ij,ij->i", x_weight, x_rank, x_rank) - centre
    y_ss = np.einsum("ij,ij,ij->i", y_weight, y_rank, y_rank) - centre
    cross = np.take(x_rank, x_flat)
    cross *= np.take(y_rank, y_flat)
    xy_sp = cross.sum(axis=1) - centre
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = xy_sp / np.sqrt(x_ss * y_ss)

    sum_x = np.einsum("ij,j->i", x_weight, prepared.x_group_z)
    sum_xx = np.einsum("ij,j->i", x_weight, prepared.x_group_z**2)
    sum_y = np.einsum("ij,j->i", y_weight, prepared.y_group_z)
    sum_yy = np.einsum("ij,j->i", y_weight, prepared.y_group_z**2)
    sum_xy = np.take(prepared.xy_z, index).sum(axis=1)
    return _resampled_results(rho, sum_x, sum_xx, sum_y, sum_yy, sum_xy, n, usable)


def _bootstrap_prepared(
    prepared: _PreparedPair, n: int, n_resamples: int, seed: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Run :func:`_bootstrap_chunk` over all resamples (threads: :func:`_ordered_results`)."""
    rhos: list[np.ndarray] = []
    rs: list[np.ndarray] = []
    tasks = ((prepared, index) for index in _resample_index_chunks(n, n_resamples, seed))
    for rho, r in _ordered_results(_bootstrap_chunk, tasks):
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
    """Point results and intervals of one finite, defined (x, y) by :func:`_bootstrap_chunk`.

    ``x_order`` / ``y_order`` are stable ascending argsorts of x and y.
    """
    prepared = _prepare_pair(x, y, x_order, y_order)
    point = point_correlations(
        prepare_column(x, prepared.x_group), prepare_column(y, prepared.y_group)
    )
    rho_boot, r_boot = _bootstrap_prepared(prepared, x.size, n_resamples, seed)
    return BootstrapCorrelation(
        spearman=_with_interval(point.spearman, rho_boot),
        pearson=_with_interval(point.pearson, r_boot),
    )
