"""Run every homogeneity analysis over a corpus, one query's pool at a time.

:func:`measure_query` turns one :class:`QueryPool` into its :class:`QueryMeasures`
(similarities, top-N curve, typicality, lexical figures); :func:`summarise_group`
combines the measures of a set of queries; :func:`analyse_corpus` does both for the whole
corpus and for each category. Memory grows with the number of queries and models, never
with the square of the corpus.

Summaries over queries are order-free: measures are sorted by query id before they are
combined, so the bootstrap draws the same queries whatever order the pools came in.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from core.blas import single_blas_thread
from diversity.homogeneity.lexical import (
    DISTINCT_ORDERS,
    PoolLexicalFigures,
    pool_lexical_figures,
)
from diversity.homogeneity.neighbours import DEFAULT_MAX_N, unique_models_curve
from diversity.homogeneity.similarity import (
    inter_model_means,
    intra_model_means,
    model_blocks,
    typicality_from_blocks,
)
from diversity.homogeneity.stats import (
    ModelPair,
    bootstrap_curve,
    clustering_order,
    mean_or_nan,
    ranked_pairs,
    repetition_histogram,
    share_above,
)
from diversity.homogeneity.summaries import (
    GroupSummary,
    InterModelSummary,
    IntraModelSummary,
    LexicalSummary,
    RepetitionSummary,
    TopNSummary,
)

__all__ = [
    "AnalysisSettings",
    "CorpusAnalysis",
    "GroupSummary",
    "InterModelSummary",
    "IntraModelSummary",
    "LexicalSummary",
    "QueryMeasures",
    "QueryPool",
    "RepetitionSummary",
    "TopNSummary",
    "analyse_corpus",
    "measure_query",
    "pools_from_arrays",
    "single_blas_thread",
    "summarise_corpus",
    "summarise_group",
]


@dataclass(frozen=True)
class AnalysisSettings:
    """Knobs of the analysis. ``min_group_queries``: a category with fewer queries is
    flagged ``small``; ``n_pairs``: how many most/least similar model pairs to list."""

    max_n: int = DEFAULT_MAX_N
    bootstrap_draws: int = 1000
    ci_level: float = 0.95
    seed: int = 0
    min_group_queries: int = 10
    n_pairs: int = 5
    thresholds: tuple[float, ...] = (0.8, 0.9)


@dataclass(frozen=True)
class QueryPool:
    """The responses to one query: ``embeddings`` (n x d dense or sparse, any scale),
    ``model_index`` (n ints, positions in the corpus' model list), optional ``sample``
    (n ints, sample number within the model) and ``texts`` (n strings, for the lexical
    analyses)."""

    query_id: Hashable
    embeddings: object
    model_index: np.ndarray
    sample: np.ndarray | None = None
    category: str | None = None
    texts: Sequence[str] | None = None


@dataclass(frozen=True)
class QueryMeasures:
    """Everything one query contributes. ``models``/``counts``: the models present (corpus
    positions, sorted) and their responses; ``intra_models``/``intra_values``: models with at
    least two responses and their mean within-model similarity; ``pair_means[a, b]``: mean
    cross-pair similarity of models a and b (positions in ``models``; NaN diagonal);
    ``top_n[N - 1]``: the unique-models curve; ``typicality``: per response, input order."""

    query_id: Hashable
    category: str | None
    n_responses: int
    models: np.ndarray
    counts: np.ndarray
    intra_models: np.ndarray
    intra_values: np.ndarray
    pair_means: np.ndarray
    top_n: np.ndarray
    typicality: np.ndarray
    lexical: PoolLexicalFigures | None


def _check_pool(pool: QueryPool, n_models: int | None) -> np.ndarray:
    model_index = np.asarray(pool.model_index)
    n = model_index.shape[0] if model_index.ndim == 1 else -1
    if n < 1:
        raise ValueError(f"query {pool.query_id!r}: model_index must be a non-empty 1-d array")
    if n_models is not None and (model_index.min() < 0 or model_index.max() >= n_models):
        raise ValueError(f"query {pool.query_id!r}: model_index outside 0..{n_models - 1}")
    if pool.embeddings.shape[0] != n:
        raise ValueError(
            f"query {pool.query_id!r}: {pool.embeddings.shape[0]} rows for {n} model indices"
        )
    if pool.texts is not None and len(pool.texts) != n:
        raise ValueError(f"query {pool.query_id!r}: {len(pool.texts)} texts, {n} responses")
    if pool.sample is not None:
        sample = np.asarray(pool.sample, dtype=np.int64)
        if sample.shape != (n,):
            raise ValueError(f"query {pool.query_id!r}: sample must have shape ({n},)")
        # a (model, sample) seen twice is an import error that would double-count pairs
        span = int(sample.max() - sample.min()) + 1
        pairs = model_index.astype(np.int64) * span + (sample - sample.min())
        if np.unique(pairs).size != n:
            raise ValueError(f"query {pool.query_id!r}: a (model, sample) pair occurs twice")
    return model_index


# a dense pool wider than tall and at most this full (a TF-IDF matrix) is handled as CSR
_SPARSE_DENSITY = 0.25


def _compact(embeddings):
    """Dense rows that are mostly zeros and wider than the pool is long, as CSR: the
    products then cost per stored value instead of per column (same results)."""
    if sp.issparse(embeddings):
        return embeddings
    matrix = np.asarray(embeddings)
    if matrix.ndim == 2 and matrix.shape[1] > matrix.shape[0]:
        if np.count_nonzero(matrix) <= _SPARSE_DENSITY * matrix.size:
            return sp.csr_matrix(matrix)
    return matrix


def measure_query(
    pool: QueryPool, max_n: int = DEFAULT_MAX_N, n_models: int | None = None
) -> QueryMeasures:
    """All per-query measures of one pool (see :class:`QueryMeasures`)."""
    model_index = _check_pool(pool, n_models)
    blocks = model_blocks(_compact(pool.embeddings), model_index)
    intra_models, intra_values = intra_model_means(blocks)
    pair_means = inter_model_means(blocks)
    np.fill_diagonal(pair_means, np.nan)  # self-pairs: not a statistic
    curve = unique_models_curve(blocks.unit, blocks.position, max_n=max_n, assume_unit=True)
    lexical = None
    if pool.texts is not None:
        lexical = pool_lexical_figures(pool.texts, blocks.position, blocks.models.size)
    return QueryMeasures(
        query_id=pool.query_id,
        category=pool.category,
        n_responses=int(model_index.size),
        models=blocks.models,
        counts=blocks.counts,
        intra_models=intra_models,
        intra_values=intra_values,
        pair_means=pair_means,
        top_n=curve,
        typicality=typicality_from_blocks(blocks),
        lexical=lexical,
    )


def _repetition(values: np.ndarray, thresholds: Sequence[float]) -> RepetitionSummary:
    return RepetitionSummary(
        values=int(values.size),
        mean=mean_or_nan(values),
        histogram=repetition_histogram(values),
        share_above={t: share_above(values, t) for t in thresholds},
    )


@dataclass(frozen=True)
class CorpusAnalysis:
    """The corpus-wide summary, one per category, and the typicality of every response
    (query id -> array in the pool's row order)."""

    model_names: list[str]
    settings: AnalysisSettings
    pooled: GroupSummary
    by_category: dict[str, GroupSummary]
    typicality: dict[Hashable, np.ndarray] = field(repr=False)


def _intra_summary(measures, models, thresholds) -> IntraModelSummary:
    ids = np.concatenate([m.intra_models for m in measures] or [np.zeros(0, np.int64)])
    values = np.concatenate([m.intra_values for m in measures] or [np.zeros(0)])
    return IntraModelSummary(
        by_model={int(a): _repetition(values[ids == a], thresholds) for a in models},
        pooled=_repetition(values, thresholds),
    )


def _inter_summary(measures, models, intra: IntraModelSummary, n_pairs) -> InterModelSummary:
    k = int(models.max()) + 1 if models.size else 0
    sums = np.zeros((k, k))
    counts = np.zeros((k, k), dtype=np.int64)
    for m in measures:
        where = np.ix_(m.models, m.models)
        defined = ~np.isnan(m.pair_means)
        sums[where] += np.where(defined, m.pair_means, 0.0)
        counts[where] += defined
    sums, counts = sums[np.ix_(models, models)], counts[np.ix_(models, models)]
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = sums / counts
    for position, model in enumerate(models):
        own = intra.by_model[int(model)]
        matrix[position, position] = own.mean
        counts[position, position] = own.values
    order = clustering_order(matrix)
    matrix, counts, ordered = (
        matrix[np.ix_(order, order)],
        counts[np.ix_(order, order)],
        models[order],
    )

    def named(pairs: list[ModelPair]) -> list[ModelPair]:
        return [
            ModelPair(int(ordered[p.first]), int(ordered[p.second]), p.similarity, p.queries)
            for p in pairs
        ]

    return InterModelSummary(
        models=ordered,
        matrix=matrix,
        queries=counts,
        most_similar=named(ranked_pairs(matrix, counts, n_pairs, most_similar=True)),
        least_similar=named(ranked_pairs(matrix, counts, n_pairs, most_similar=False)),
    )


def _lexical_keys() -> list[str]:
    return [f"distinct_{order}" for order in DISTINCT_ORDERS] + ["duplicate_share"]


def _lexical_summary(measures, models) -> LexicalSummary | None:
    with_texts = [m for m in measures if m.lexical is not None]
    if not with_texts:
        return None
    keys = _lexical_keys()
    per_query = np.array(
        [[*m.lexical.distinct, m.lexical.duplicate_share] for m in with_texts]
    ).reshape(len(with_texts), len(keys))
    by_model: dict[int, dict[str, float]] = {}
    rows: dict[int, list[np.ndarray]] = {int(a): [] for a in models}
    for m in with_texts:
        figures = np.column_stack([m.lexical.group_distinct, m.lexical.group_duplicate_share])
        for position, model in enumerate(m.models):
            rows[int(model)].append(figures[position])
    for model, model_rows in rows.items():
        table = np.array(model_rows).reshape(len(model_rows), len(keys))
        by_model[model] = {key: mean_or_nan(table[:, j]) for j, key in enumerate(keys)}
    return LexicalSummary(
        queries=len(with_texts),
        by_query={key: mean_or_nan(per_query[:, j]) for j, key in enumerate(keys)},
        by_model=by_model,
    )


def summarise_group(measures: Sequence[QueryMeasures], settings: AnalysisSettings) -> GroupSummary:
    """Combine the measures of a set of queries into every summary of :class:`GroupSummary`.

    Intra-model: the values of all (model, query) pairs. Inter-model: per pair of models,
    the mean over the queries both answered of the per-query means. Top-N: per N, mean over
    the queries where N is defined, with a bootstrap over queries. Lexical: means over
    queries. Models are those with at least one response in the group.
    """
    measures = sorted(measures, key=lambda m: _query_order(m.query_id))
    models = np.unique(np.concatenate([m.models for m in measures] or [np.zeros(0, np.int64)]))
    intra = _intra_summary(measures, models, settings.thresholds)
    lengths = {m.top_n.size for m in measures} or {settings.max_n}
    if len(lengths) > 1:
        raise ValueError("the queries' top-N curves differ in length (measured with other max_n)")
    max_n = lengths.pop()
    curves = np.array([m.top_n for m in measures]).reshape(len(measures), max_n)
    return GroupSummary(
        queries=len(measures),
        responses=int(sum(m.n_responses for m in measures)),
        small=len(measures) < settings.min_group_queries,
        models=models,
        intra=intra,
        inter=_inter_summary(measures, models, intra, settings.n_pairs),
        top_n=TopNSummary(
            n=np.arange(1, max_n + 1),
            curve=bootstrap_curve(
                curves, settings.bootstrap_draws, settings.ci_level, settings.seed
            ),
        ),
        lexical=_lexical_summary(measures, models),
    )


def _query_order(query_id: Hashable) -> tuple:
    # ints sort numerically, anything else by its text, and the two never compare
    if isinstance(query_id, int | np.integer):
        return (0, int(query_id), "")
    return (1, 0, str(query_id))


def analyse_corpus(
    pools: Iterable[QueryPool],
    model_names: Sequence[str],
    settings: AnalysisSettings | None = None,
    on_query: Callable[[QueryPool, QueryMeasures], None] | None = None,
) -> CorpusAnalysis:
    """Measure every pool and summarise the corpus as a whole and per category.

    Queries without a category count in the corpus summary only. ``on_query(pool,
    measures)``, if given, is called once per pool as soon as it is measured (for per-query
    tables and progress; the pool may be dropped afterwards, so pools can be streamed).
    """
    settings = settings or AnalysisSettings()
    measures: list[QueryMeasures] = []
    seen: set[Hashable] = set()
    with single_blas_thread():
        for pool in pools:
            if pool.query_id in seen:
                raise ValueError(f"query {pool.query_id!r} appears twice")
            seen.add(pool.query_id)
            measured = measure_query(pool, settings.max_n, len(model_names))
            measures.append(measured)
            if on_query is not None:
                on_query(pool, measured)
    return summarise_corpus(measures, model_names, settings)


def summarise_corpus(
    measures: Sequence[QueryMeasures],
    model_names: Sequence[str],
    settings: AnalysisSettings | None = None,
) -> CorpusAnalysis:
    """The corpus-wide and per-category summaries of measured queries (by
    :func:`measure_query`, in any order, in one process or several): what
    :func:`analyse_corpus` gives for the same pools."""
    settings = settings or AnalysisSettings()
    with single_blas_thread():
        by_category: dict[str, list[QueryMeasures]] = {}
        for m in measures:
            if m.category is not None:
                by_category.setdefault(m.category, []).append(m)
        pooled = summarise_group(measures, settings)
        categories = {
            category: summarise_group(group, settings)
            for category, group in sorted(by_category.items())
        }
    return CorpusAnalysis(
        model_names=list(model_names),
        settings=settings,
        pooled=pooled,
        by_category=categories,
        typicality={m.query_id: m.typicality for m in measures},
    )


def pools_from_arrays(
    query_index,
    embeddings,
    model_index,
    sample=None,
    category=None,
    texts: Sequence[str] | None = None,
) -> list[QueryPool]:
    """Split corpus-wide per-response arrays into one :class:`QueryPool` per query.

    ``query_index`` (ints or strings) names each response's query; ``category`` (optional)
    is per response and must be constant within a query. Pools come in order of first
    appearance; rows keep their corpus order within a pool.
    """
    query_index = np.asarray(query_index)
    _, inverse = np.unique(query_index, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.flatnonzero(np.diff(inverse[order])) + 1
    model_index = np.asarray(model_index)
    sample = None if sample is None else np.asarray(sample)
    category = None if category is None else np.asarray(category, dtype=object)
    pools = []
    for rows in sorted(np.split(order, bounds), key=lambda r: r[0]):
        query_category = None
        if category is not None:
            values = set(category[rows].tolist())
            if len(values) != 1:
                raise ValueError(f"query {query_index[rows[0]]!r} has several categories")
            query_category = values.pop()
        query_id = query_index[rows[0]]
        pools.append(
            QueryPool(
                query_id=query_id.item() if hasattr(query_id, "item") else query_id,
                embeddings=embeddings[rows],
                model_index=model_index[rows],
                sample=None if sample is None else sample[rows],
                category=query_category,
                texts=None if texts is None else [texts[i] for i in rows],
            )
        )
    return pools
