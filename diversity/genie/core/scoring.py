"""Genie novelty scores: how unlike a population a document is, feature by feature.

With sim in [1, 4] the similarity of the document's answer to one population answer:

* norm = (sim - 1) / 3, in [0, 1];
* Q(doc, q) = 1 - mean over the population's usable pairs of norm (question novelty); an
  LLM judge's repeated judgments of one pair each count, as in GENIE's mean over rows;
* Genie(doc, f) = mean of Q(doc, q) over the questions q of feature f (feature novelty).

A pair with a missing answer on either side is dropped; a question with no usable pair is
skipped; a feature with no scored question has no score (``None``, never NaN). Across
documents, a feature is summarised by the mean of its document scores and a percentile
bootstrap interval that resamples documents. Pure Python and numpy.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from analysis.stats.resampling import percentile_bounds, resample_indices
from diversity.genie.core.judgments import Judgment
from diversity.genie.core.pairs import pair_judgments

__all__ = [
    "BOOTSTRAP_DRAWS",
    "BOOTSTRAP_SEED",
    "CI_LEVEL",
    "DocumentFeatureScore",
    "FeatureSummary",
    "QuestionScore",
    "document_scores",
    "feature_novelty",
    "feature_summary",
    "normalised_similarity",
    "percentile_interval",
    "question_novelty",
    "question_scores",
    "scores_of_documents",
]

BOOTSTRAP_DRAWS = 1000
BOOTSTRAP_SEED = 7
CI_LEVEL = 0.95


@dataclass(frozen=True)
class DocumentFeatureScore:
    """Genie(doc, feature), from ``n_questions`` scored questions of that feature."""

    prompt_id: str
    document_id: str
    feature: str
    novelty: float
    n_questions: int


@dataclass(frozen=True)
class FeatureSummary:
    """A feature across documents: mean novelty and its bootstrap interval."""

    feature: str
    mean: float
    ci_low: float
    ci_high: float
    level: float  # the interval's coverage, e.g. 0.95
    n_documents: int


def normalised_similarity(similarity: float | np.ndarray) -> float | np.ndarray:
    """norm = (sim - 1) / 3: a 1-4 similarity mapped onto [0, 1]."""
    return (similarity - 1.0) / 3.0


def question_novelty(
    similarities: Sequence[float | None] | np.ndarray, weights: Sequence[int] | None = None
) -> float | None:
    """Q = 1 - mean((sim - 1) / 3) over one document's pairs for one question (GENIE's
    Q_GENIE; Namuduri et al., ``compute_genie``).

    ``weights``: how many judgments each pair's similarity (their mean) stands for, each
    one a term of the mean (default: one each). ``None`` (or NaN) entries are dropped pairs;
    ``None`` when no pair is left.
    """
    values = np.array([np.nan if value is None else value for value in similarities], float)
    counts = np.ones(values.size) if weights is None else np.asarray(weights, dtype=float)
    kept = ~np.isnan(values)
    if not kept.any():
        return None
    return float(1.0 - np.average(normalised_similarity(values[kept]), weights=counts[kept]))


def feature_novelty(question_scores: Iterable[float | None]) -> float | None:
    """Genie(doc, f) = mean of Q over the feature's questions; ``None`` entries are skipped
    (questions with no usable pair) and ``None`` is returned when none is left."""
    scored = [score for score in question_scores if score is not None]
    if not scored:
        return None
    return sum(scored) / len(scored)


@dataclass(frozen=True)
class QuestionScore:
    """Q(doc, q) (GENIE's ``Q_GENIE``), from ``n_pairs`` judged pairs."""

    prompt_id: str
    document_id: str
    question_id: str
    feature: str
    novelty: float
    n_pairs: int
    target_answer: str | None = None
    question: str | None = None


# The sources whose repeated judgments of one pair each count as a term of Q's mean. GENIE's
# compute_genie averages the rows of its similarity file, so a pair its judge scored twice
# weighs twice there; people's N labels of one pair are first averaged into one value.
REPEATS_WEIGH = frozenset({"llm"})


def question_scores(judgments: Iterable[Judgment], source: str) -> list[QuestionScore]:
    """Q(doc, q) of every (prompt, document, question) with a usable pair judged by
    ``source``, in first-seen order of document, then question.

    A pair's similarity is the mean of its judgments from ``source``; in Q's mean a pair
    weighs as many judgments as it has for a source of ``REPEATS_WEIGH`` (GENIE's mean over
    the rows of its file), else one. ``n_pairs`` counts distinct pairs."""
    judgments = list(judgments)
    first: dict[tuple[str, str, str], Judgment] = {}
    for j in judgments:
        first.setdefault((j.prompt_id, j.document_id, j.question_id), j)
    grouped: dict[tuple[str, str, str], list[tuple[float, int]]] = {}
    for pair, found in pair_judgments(judgments, source).items():
        key = (pair.prompt_id, pair.document_id, pair.question_id)
        weight = found.count if source in REPEATS_WEIGH else 1
        grouped.setdefault(key, []).append((found.similarity, weight))
    scores = []
    for key, pairs in grouped.items():
        row = first[key]
        scores.append(
            QuestionScore(
                *key,
                feature=row.feature,
                novelty=question_novelty(
                    [similarity for similarity, _ in pairs], [weight for _, weight in pairs]
                ),
                n_pairs=len(pairs),
                target_answer=row.target_answer,
                question=row.question,
            )
        )
    return scores


def document_scores(judgments: Iterable[Judgment], source: str) -> list[DocumentFeatureScore]:
    """Genie(doc, feature) of every (prompt, document, feature) with a scored question.

    Uses the judgments of one ``source`` (``llm`` or ``human``; a pair's similarity is the mean
    of its labels). Documents are identified by (prompt_id, document_id); results come in
    first-seen order of document, then feature.
    """
    return scores_of_documents(question_scores(judgments, source))


def scores_of_documents(scores: Iterable[QuestionScore]) -> list[DocumentFeatureScore]:
    """Genie(doc, f) = the mean of the document's Q over the questions of f."""
    grouped: dict[tuple[str, str], dict[str, list[float]]] = {}
    for score in scores:
        grouped.setdefault((score.prompt_id, score.document_id), {}).setdefault(
            score.feature, []
        ).append(score.novelty)
    return [
        DocumentFeatureScore(prompt_id, document_id, feature, feature_novelty(q), len(q))
        for (prompt_id, document_id), by_feature in grouped.items()
        for feature, q in by_feature.items()
    ]


def percentile_interval(draws: np.ndarray, level: float = CI_LEVEL) -> tuple[float, float]:
    """The percentile bootstrap interval of ``level`` coverage: the ((1 - level) / 2,
    (1 + level) / 2) percentiles of the draws (numpy's linear interpolation)."""
    tail = (1.0 - level) / 2.0 * 100.0
    # 100 - tail, not level_percentiles' 100 * (1 - tail): the two differ in the last bit
    # for some levels, and the Genie intervals are pinned with this one.
    low, high = percentile_bounds(draws, (tail, 100.0 - tail))
    return float(low), float(high)


def feature_summary(
    scores: Iterable[DocumentFeatureScore],
    draws: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
    level: float = CI_LEVEL,
) -> dict[str, FeatureSummary]:
    """Per feature: mean of Genie(doc, f) over documents, with a percentile bootstrap CI.

    Each draw resamples the feature's n documents with replacement (``numpy.random.
    default_rng(seed).integers(0, n, size=(draws, n))``, a fresh generator per feature so that
    a feature's interval does not depend on the others) and takes the mean; the interval is
    the ((1 - level) / 2, (1 + level) / 2) percentiles of the draw means. Features in
    first-seen order.
    """
    by_feature: dict[str, list[float]] = {}
    for score in scores:
        by_feature.setdefault(score.feature, []).append(score.novelty)
    summaries = {}
    for feature, novelties in by_feature.items():
        values = np.array(novelties, dtype=float)
        drawn = resample_indices(values.size, draws, seed)
        low, high = percentile_interval(values[drawn].mean(axis=1), level)
        summaries[feature] = FeatureSummary(
            feature=feature,
            mean=float(values.mean()),
            ci_low=float(low),
            ci_high=float(high),
            level=level,
            n_documents=int(values.size),
        )
    return summaries
