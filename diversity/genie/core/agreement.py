"""How far human and LLM similarity judgments of the same answer pairs agree.

The pairs both sources judged are taken in sorted ``PairKey`` order; the LLM similarity of a
pair is its one judgment, the human similarity the mean of its human labels
(``pairs.pair_similarities``). Two figures, overall and per feature:

* Spearman's rho between the two similarity columns (``analysis.stats.correlation.spearman``:
  mid-ranks for ties, two-sided p from the t approximation);
* Krippendorff's alpha, interval and ordinal, treating the LLM and the human mean as two
  raters of each pair (``analysis.stats.agreement.krippendorff_alpha``; the ordinal metric
  ranks the values that occur, means included).

A figure that is undefined (fewer than 3 pairs or a constant column for rho; no variation for
alpha) is ``None``. Pure Python and numpy.
"""

from collections.abc import Iterable
from typing import Any

import numpy as np

from analysis.stats.agreement import krippendorff_alpha
from analysis.stats.correlation import spearman
from diversity.genie.core.judgments import Judgment
from diversity.genie.core.pairs import PairKey, pair_similarities

__all__ = ["agreement_of_pairs", "judge_agreement"]


def agreement_of_pairs(llm: np.ndarray, human: np.ndarray) -> dict[str, Any]:
    """``{n_pairs, spearman: {rho, p} | None, spearman_reason, alpha_interval,
    alpha_ordinal}`` for two aligned similarity columns."""
    llm, human = np.asarray(llm, dtype=float), np.asarray(human, dtype=float)
    n = int(llm.size)
    rho = spearman(llm, human)
    if n:
        units = np.concatenate([np.arange(n), np.arange(n)])
        raters = np.concatenate([np.zeros(n, dtype=int), np.ones(n, dtype=int)])
        values = np.concatenate([llm, human])
        interval = krippendorff_alpha(units, raters, values, level="interval")
        ordinal = krippendorff_alpha(units, raters, values, level="ordinal")
    else:
        interval = ordinal = None
    return {
        "n_pairs": n,
        "spearman": None if rho.r is None else {"rho": float(rho.r), "p": float(rho.p)},
        "spearman_reason": rho.reason,
        "alpha_interval": interval,
        "alpha_ordinal": ordinal,
    }


def judge_agreement(judgments: Iterable[Judgment]) -> dict[str, Any] | None:
    """Agreement of the ``llm`` and ``human`` judgments, overall and per feature (in the
    features' first-seen order); ``None`` when no pair was judged by both."""
    judgments = list(judgments)
    feature_of = {(j.prompt_id, j.question_id): j.feature for j in judgments}
    llm = pair_similarities(judgments, "llm")
    human = pair_similarities(judgments, "human")
    shared: list[PairKey] = sorted(llm.keys() & human.keys())
    if not shared:
        return None
    by_feature: dict[str, list[PairKey]] = {}
    for feature in dict.fromkeys(feature_of.values()):
        keys = [key for key in shared if feature_of[(key.prompt_id, key.question_id)] == feature]
        if keys:
            by_feature[feature] = keys

    def columns(keys: list[PairKey]) -> tuple[np.ndarray, np.ndarray]:
        return np.array([llm[k] for k in keys]), np.array([human[k] for k in keys])

    return {
        "overall": agreement_of_pairs(*columns(shared)),
        "per_feature": {
            feature: agreement_of_pairs(*columns(keys)) for feature, keys in by_feature.items()
        },
    }
