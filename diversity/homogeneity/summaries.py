"""What the homogeneity analyses report over a set of queries (the corpus or one
category): the summaries ``pipeline.summarise_group`` builds from the per-query measures."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from diversity.homogeneity.stats import CurveInterval, ModelPair


@dataclass(frozen=True)
class RepetitionSummary:
    """Distribution of intra-model similarity values (one per model and query).

    ``values``: how many; ``mean``; ``histogram``: shares in 10 bins on [0, 1];
    ``share_above``: threshold -> share of values strictly above it."""

    values: int
    mean: float
    histogram: np.ndarray
    share_above: dict[float, float]


@dataclass(frozen=True)
class IntraModelSummary:
    """Intra-model repetition per model (corpus positions) and pooled over all
    (model, query) values."""

    by_model: dict[int, RepetitionSummary]
    pooled: RepetitionSummary


@dataclass(frozen=True)
class InterModelSummary:
    """Model x model mean similarity, rows and columns in clustering order.

    ``models``: corpus positions in that order; ``matrix[a, b]`` (a != b):
    ``(1 / |Q_ab|) sum_{q in Q_ab} mean_{i in a, j in b} x_i . x_j`` over the queries Q_ab
    both models answered (the cross-pair mean per query first, then the mean over
    queries, so a query with more samples weighs no more); ``matrix[a, a]``: the model's
    intra-model mean over distinct samples (NaN if it never had two responses to a query).
    The study's released code put self-pairs (similarity 1) on the diagonal; they are left
    out here because they inflate it (with 4 samples, 4 of the 16 ordered pairs of a model
    and a query would be self-pairs). ``queries``: the query counts behind each entry (on
    the diagonal, the (model, query) values behind the intra-model mean). Order: see
    :func:`~diversity.homogeneity.stats.clustering_order`. Pairs list corpus positions."""

    models: np.ndarray
    matrix: np.ndarray
    queries: np.ndarray
    most_similar: list[ModelPair]
    least_similar: list[ModelPair]


@dataclass(frozen=True)
class TopNSummary:
    """Unique-models curve pooled over queries: ``n`` = 1..max_n and its interval."""

    n: np.ndarray
    curve: CurveInterval


@dataclass(frozen=True)
class LexicalSummary:
    """Means over queries of the per-query lexical figures (``by_query``) and, per model,
    of the figures of its own responses to each query (``by_model``). Keys:
    ``distinct_1``.. ``distinct_3``, ``duplicate_share``."""

    queries: int
    by_query: dict[str, float]
    by_model: dict[int, dict[str, float]]


@dataclass(frozen=True)
class GroupSummary:
    """All analyses over one set of queries (the corpus or one category)."""

    queries: int
    responses: int
    small: bool
    models: np.ndarray
    intra: IntraModelSummary
    inter: InterModelSummary
    top_n: TopNSummary
    lexical: LexicalSummary | None
