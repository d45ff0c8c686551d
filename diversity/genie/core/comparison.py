"""Which model, which method writes more novel documents: group means and paired differences.

The unit is a document's Genie score (per feature: Genie(doc, f); overall: the mean of the
document's feature scores). Documents are nested in prompts, so every figure weighs prompts
equally:

* a group's **mean** = the mean over the prompts where the group has documents of the mean of
  its documents' scores in that prompt (with the same number of documents per prompt: the
  plain mean of its documents);
* its **interval**: a two-stage percentile bootstrap — each of B draws resamples the prompts
  with replacement, then, within each drawn prompt, the group's documents with replacement,
  and takes the mean as above. Draw ``b`` uses ``picks = rng.integers(0, P, size=(B, P))``
  and ``u = rng.random((B, P, M))`` (``rng = numpy.random.default_rng(seed)``, a fresh one
  per figure; M = the most documents in a prompt): slot ``j`` of draw ``b`` is prompt
  ``p = picks[b, j]`` and its k-th drawn document (k < n_p) is ``floor(u[b, j, k] * n_p)``.
  The interval is ``scoring.percentile_interval`` of the B draws;
* the **difference** of groups A and B, over the prompts where both have documents:
  mean over prompts of d_p = mean_A(p) − mean_B(p); its interval is the same bootstrap
  with one ``picks`` for both and ``u`` drawn for A, then for B; its **paired permutation
  p-value** over prompts swaps A and B within prompts, i.e. flips the sign of d_p: with
  P ≤ ``EXACT_PROMPTS`` all 2^P sign patterns are enumerated (p = the share with
  |mean| ≥ the observed, the observed pattern included), else R patterns are drawn
  (``rng.choice([-1, 1], size=(R, P))``, a fresh ``default_rng(seed)``) and
  p = (1 + #{|mean| ≥ observed}) / (1 + R).

Pure numpy, no Django.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from diversity.genie.core.scoring import CI_LEVEL, percentile_interval

__all__ = [
    "EXACT_PROMPTS",
    "MAX_GROUPS",
    "GroupDifference",
    "GroupMean",
    "compare_groups",
    "group_difference",
    "group_mean",
]

EXACT_PROMPTS = 12
MAX_GROUPS = 12
# |mean| at least the observed one, allowing for rounding in the sums
_TOLERANCE = 1e-12

ByPrompt = Mapping[str, Sequence[float]]


@dataclass(frozen=True)
class GroupMean:
    group: str
    mean: float
    ci_low: float
    ci_high: float
    level: float
    n_prompts: int
    n_documents: int


@dataclass(frozen=True)
class GroupDifference:
    first: str
    second: str
    difference: float  # first − second
    ci_low: float
    ci_high: float
    level: float
    p_value: float
    exact: bool  # all sign patterns enumerated
    n_prompts: int


def _padded(groups: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.array([len(values) for values in groups], dtype=int)
    table = np.zeros((len(groups), int(sizes.max())), dtype=float)
    for row, values in enumerate(groups):
        table[row, : len(values)] = values
    return table, sizes


def _resampled_means(
    table: np.ndarray, sizes: np.ndarray, picks: np.ndarray, u: np.ndarray
) -> np.ndarray:
    """(B, P) means of the drawn prompts' resampled documents."""
    drawn_sizes = sizes[picks]  # (B, P)
    index = np.minimum((u * drawn_sizes[..., None]).astype(int), drawn_sizes[..., None] - 1)
    values = table[picks[..., None], index]  # (B, P, M)
    used = np.arange(table.shape[1]) < drawn_sizes[..., None]
    return (values * used).sum(axis=-1) / drawn_sizes


def group_mean(
    group: str, by_prompt: ByPrompt, draws: int, seed: int, level: float = CI_LEVEL
) -> GroupMean:
    """The group's prompt-weighted mean with its two-stage bootstrap interval."""
    groups = [list(values) for values in by_prompt.values() if len(values)]
    table, sizes = _padded(groups)
    mean = float(np.mean([np.mean(values) for values in groups]))
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(groups), size=(draws, len(groups)))
    u = rng.random((draws, len(groups), table.shape[1]))
    low, high = percentile_interval(_resampled_means(table, sizes, picks, u).mean(axis=1), level)
    return GroupMean(group, mean, low, high, level, len(groups), int(sizes.sum()))


def _sign_patterns(n: int, permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    if n <= EXACT_PROMPTS:
        codes = np.arange(2**n)[:, None] >> np.arange(n)[None, :] & 1
        return 1 - 2 * codes, True
    return np.random.default_rng(seed).choice([-1, 1], size=(permutations, n)), False


def group_difference(
    first: str,
    second: str,
    a: ByPrompt,
    b: ByPrompt,
    draws: int,
    seed: int,
    permutations: int,
    level: float = CI_LEVEL,
) -> GroupDifference | None:
    """first − second over the prompts both have, with its interval and paired p-value;
    ``None`` when they share no prompt."""
    shared = [p for p in a if len(a[p]) and p in b and len(b[p])]
    if not shared:
        return None
    a_groups, b_groups = [list(a[p]) for p in shared], [list(b[p]) for p in shared]
    per_prompt = np.array(
        [np.mean(x) - np.mean(y) for x, y in zip(a_groups, b_groups, strict=True)]
    )
    observed = float(per_prompt.mean())
    a_table, a_sizes = _padded(a_groups)
    b_table, b_sizes = _padded(b_groups)
    n = len(shared)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(draws, n))
    u_a = rng.random((draws, n, a_table.shape[1]))
    u_b = rng.random((draws, n, b_table.shape[1]))
    resampled = _resampled_means(a_table, a_sizes, picks, u_a) - _resampled_means(
        b_table, b_sizes, picks, u_b
    )
    low, high = percentile_interval(resampled.mean(axis=1), level)
    signs, exact = _sign_patterns(n, permutations, seed)
    flipped = np.abs((signs * per_prompt).mean(axis=1))
    reached = int((flipped >= abs(observed) - _TOLERANCE).sum())
    p_value = reached / len(signs) if exact else (1 + reached) / (1 + len(signs))
    return GroupDifference(first, second, observed, low, high, level, float(p_value), exact, n)


def compare_groups(
    values: Mapping[str, ByPrompt],
    draws: int,
    seed: int,
    permutations: int,
    level: float = CI_LEVEL,
) -> tuple[list[GroupMean], list[GroupDifference]]:
    """Every group's mean (in the given order) and the difference of every pair of groups
    (the first ``MAX_GROUPS`` groups; pairs in order)."""
    means = [group_mean(g, by_prompt, draws, seed, level) for g, by_prompt in values.items()]
    names = list(values)[:MAX_GROUPS]
    differences = [
        found
        for first, second in combinations(names, 2)
        if (
            found := group_difference(
                first, second, values[first], values[second], draws, seed, permutations, level
            )
        )
        is not None
    ]
    return means, differences
