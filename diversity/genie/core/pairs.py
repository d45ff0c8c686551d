"""One similarity per (target, population) answer pair, per judgment source.

A pair is identified by (prompt_id, question_id, document_id, population_id). Only usable
judgments count (both answers present, a similarity given); a pair's similarity for a source is
the mean of its usable judgments from that source: the ``llm`` judgment (the mean of its rows
when GENIE's file judges the pair more than once), or the mean of the N human labels.
"""

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from diversity.genie.core.judgments import Judgment

__all__ = ["PairJudgments", "PairKey", "pair_judgments", "pair_similarities", "paired_judgments"]


class PairKey(NamedTuple):
    """Which target answer is compared with which population answer."""

    prompt_id: str
    question_id: str
    document_id: str
    population_id: str


class PairJudgments(NamedTuple):
    """A pair's usable judgments from one source: their mean similarity and their number."""

    similarity: float
    count: int


def pair_judgments(judgments: Iterable[Judgment], source: str) -> dict[PairKey, PairJudgments]:
    """Mean similarity and number of judgments of each usable pair judged by ``source``, in
    first-seen pair order."""
    totals: dict[PairKey, list[float]] = {}
    for judgment in judgments:
        if judgment.source != source or not judgment.usable:
            continue
        key = PairKey(
            judgment.prompt_id, judgment.question_id, judgment.document_id, judgment.population_id
        )
        running = totals.setdefault(key, [0.0, 0.0])
        running[0] += judgment.similarity
        running[1] += 1
    return {key: PairJudgments(total / count, int(count)) for key, (total, count) in totals.items()}


def pair_similarities(judgments: Iterable[Judgment], source: str) -> dict[PairKey, float]:
    """Mean similarity of each usable pair judged by ``source``, in first-seen pair order."""
    return {key: found.similarity for key, found in pair_judgments(judgments, source).items()}


def paired_judgments(judgments: Iterable[Judgment]) -> tuple[np.ndarray, np.ndarray]:
    """The ``llm`` and ``human`` similarities of the pairs both sources judged, aligned.

    Element i of both arrays is the same pair; pairs are in sorted ``PairKey`` order, so the
    result does not depend on row order. Human similarity = mean of the pair's human labels.
    Feeds agreement statistics (Spearman's rho, Krippendorff's alpha).
    """
    judgments = list(judgments)
    llm = pair_similarities(judgments, "llm")
    human = pair_similarities(judgments, "human")
    shared = sorted(llm.keys() & human.keys())
    return (
        np.array([llm[key] for key in shared], dtype=float),
        np.array([human[key] for key in shared], dtype=float),
    )
