"""Per-answerer census metrics (docs/CENSUS.md, "Per-model metrics" and "Bootstrap interval"):
how far an answerer's choices stray from everyone else's.

For answerer *m* and category *c*: *mine* = m's valid answers in c (run order); *others* = the
other answerers' answers in c, concatenated in sorted answerer order, each in run order. A
category is kept for *m* only when both are non-empty. ``score_category`` reduces one kept
category to a ``CategoryScore``; the statistics below combine an answerer's ``CategoryScore``
list, and ``answerer_metrics`` runs the whole field. Pure Python and numpy.
"""

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from analysis.stats.resampling import percentile_bounds, resample_indices
from diversity.census.core.categories import modal_answer
from diversity.census.core.field import AnswerField

__all__ = [
    "BOOTSTRAP_DRAWS",
    "BOOTSTRAP_SEED",
    "CI_PERCENTILES",
    "AnswererMetrics",
    "CategoryScore",
    "answer_surprisal",
    "answerer_metrics",
    "answerer_type",
    "kept_categories",
    "mean_surprisal",
    "modal_avoid_rate",
    "novel_rate",
    "score_category",
    "self_distinctness",
    "surprisal_ci",
]

BOOTSTRAP_DRAWS = 2000
BOOTSTRAP_SEED = 7
CI_PERCENTILES = (5.0, 95.0)  # a 90 % interval


@dataclass(frozen=True)
class CategoryScore:
    """One answerer's answers in one kept category, scored against the others' pool."""

    category: str
    surprisals: tuple[float, ...]  # one per answer in *mine*, in run order
    n_modal_avoided: int  # answers different from the pool's mode
    n_novel: int  # answers the pool never gave
    n_distinct: int  # distinct answers in *mine*

    @property
    def n_answers(self) -> int:
        return len(self.surprisals)


@dataclass(frozen=True)
class AnswererMetrics:
    """An answerer's census figures; ``surprisal_ci90`` is (5th, 95th) bootstrap percentile."""

    answerer: str
    surprisal: float
    modal_avoid: float
    novel_rate: float
    self_distinct: float
    n_answers: int
    type: str
    surprisal_ci90: tuple[float, float]


def answer_surprisal(answer: str, pool: Counter, total: int, vocabulary: int) -> float:
    """Add-one smoothed surprisal in bits: ``-log2((pool[a] + 1) / (total + V))``.

    ``pool`` counts the others' answers, ``total`` is their number and ``vocabulary`` (V) the
    number of distinct answers among the others' and the answerer's own.
    """
    return -math.log2((pool[answer] + 1) / (total + vocabulary))


def score_category(category: str, mine: Sequence[str], others: Sequence[str]) -> CategoryScore:
    """Score *mine* against *others* in one category (both non-empty).

    surprisal per answer as in ``answer_surprisal`` with pool = counts of *others*,
    total = len(*others*), V = |set(*others*) ∪ set(*mine*)|; an answer avoids the mode when it
    differs from ``modal_answer(others)``; it is novel when its pool count is 0.
    """
    pool = Counter(others)
    total = len(others)
    vocabulary = len(set(others) | set(mine))
    mode = modal_answer(others)
    return CategoryScore(
        category=category,
        surprisals=tuple(answer_surprisal(answer, pool, total, vocabulary) for answer in mine),
        n_modal_avoided=sum(answer != mode for answer in mine),
        n_novel=sum(pool[answer] == 0 for answer in mine),
        n_distinct=len(set(mine)),
    )


def kept_categories(answer_field: AnswerField, answerer: str) -> list[CategoryScore]:
    """The answerer's scored categories, in the field's category order.

    A category is skipped when the answerer or every other answerer gave no valid answer in it.
    """
    scores = []
    for category in answer_field.categories:
        mine = answer_field.answers[category].get(answerer, ())
        others = answer_field.pooled(category, without=answerer)
        if mine and others:
            scores.append(score_category(category, mine, others))
    return scores


def _n_answers(scores: Sequence[CategoryScore]) -> int:
    return sum(score.n_answers for score in scores)


def mean_surprisal(scores: Sequence[CategoryScore]) -> float:
    """Answer-weighted mean surprisal: Σ over all scored answers of surprisal / n_answers."""
    return sum(sum(score.surprisals) for score in scores) / _n_answers(scores)


def modal_avoid_rate(scores: Sequence[CategoryScore]) -> float:
    """Share of the answerer's answers that differ from their category's mode of the others."""
    return sum(score.n_modal_avoided for score in scores) / _n_answers(scores)


def novel_rate(scores: Sequence[CategoryScore]) -> float:
    """Share of the answerer's answers that no other answerer gave in that category."""
    return sum(score.n_novel for score in scores) / _n_answers(scores)


def self_distinctness(scores: Sequence[CategoryScore]) -> float:
    """Mean over kept categories of (distinct answers in *mine*) / len(*mine*).

    Category-weighted (not answer-weighted), and over valid answers, not over runs.
    """
    return sum(score.n_distinct / score.n_answers for score in scores) / len(scores)


def surprisal_ci(
    scores: Sequence[CategoryScore],
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
    percentiles: tuple[float, float] = CI_PERCENTILES,
) -> tuple[float, float]:
    """Percentile bootstrap of ``mean_surprisal`` over categories.

    Each draw resamples the K kept categories with replacement (``numpy.random.default_rng
    (seed).integers(0, K, size=(draws, K))``, the same stream as ``draws`` successive
    ``choice(K, K)`` calls) and pools their answers: value = Σ surprisal sums / Σ answer
    counts of the drawn categories. Returns numpy's (linear) percentiles of the draw values.
    """
    sums = np.array([sum(score.surprisals) for score in scores])
    counts = np.array([score.n_answers for score in scores])
    drawn = resample_indices(len(scores), draws, seed)
    values = sums[drawn].sum(axis=1) / counts[drawn].sum(axis=1)
    low, high = percentile_bounds(values, percentiles)
    return float(low), float(high)


def answerer_type(
    surprisal: float, self_distinct: float, surprisal_median: float, self_distinct_median: float
) -> str:
    """``explorer`` / ``true-contrarian`` / ``consensus-sampler`` / ``consensus-fixed``.

    High means strictly above the median over all answerers: explorer = high surprisal and high
    self-distinctness; true-contrarian = high surprisal only; consensus-sampler = high
    self-distinctness only; consensus-fixed = neither.
    """
    high_surprisal = surprisal > surprisal_median
    high_self_distinct = self_distinct > self_distinct_median
    if high_surprisal:
        return "explorer" if high_self_distinct else "true-contrarian"
    return "consensus-sampler" if high_self_distinct else "consensus-fixed"


def answerer_metrics(
    answer_field: AnswerField, draws: int = BOOTSTRAP_DRAWS, seed: int = BOOTSTRAP_SEED
) -> dict[str, AnswererMetrics]:
    """Every answerer's metrics, in sorted answerer order.

    An answerer with no kept category (nothing to score) is left out, and the medians that
    decide ``type`` are taken over the answerers that remain. Each answerer's bootstrap starts
    from its own ``default_rng(seed)``, so its interval does not depend on who else is scored.
    """
    scored = {}
    for answerer in answer_field.answerers:
        scores = kept_categories(answer_field, answerer)
        if scores:
            scored[answerer] = scores
    surprisals = {answerer: mean_surprisal(scores) for answerer, scores in scored.items()}
    distinctness = {answerer: self_distinctness(scores) for answerer, scores in scored.items()}
    if not scored:
        return {}
    surprisal_median = float(np.median(list(surprisals.values())))
    distinct_median = float(np.median(list(distinctness.values())))
    return {
        answerer: AnswererMetrics(
            answerer=answerer,
            surprisal=surprisals[answerer],
            modal_avoid=modal_avoid_rate(scores),
            novel_rate=novel_rate(scores),
            self_distinct=distinctness[answerer],
            n_answers=_n_answers(scores),
            type=answerer_type(
                surprisals[answerer], distinctness[answerer], surprisal_median, distinct_median
            ),
            surprisal_ci90=surprisal_ci(scores, draws=draws, seed=seed),
        )
        for answerer, scores in scored.items()
    }
