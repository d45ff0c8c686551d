"""What every section of the report page shares: the column lists, the names of the
sources' kinds and how a number is written."""

from analysis.stats.correlation import MIN_P_VALUE_PAIRS

KIND_NAMES = {
    "lm": "Language models",
    "reward_model": "Reward models",
    "judge": "LLM judges",
    "other": "Other sources",
}
AGREEMENT_FIGURES = [
    ("krippendorff_alpha_ordinal", "Krippendorff α (ordinal)", "1 = perfect agreement"),
    ("krippendorff_alpha_interval", "Krippendorff α (interval)", "1 = perfect agreement"),
    ("mean_entropy_bits", "Mean entropy (bits)", "over the 5 labels; 0 … log₂5 ≈ 2.32"),
    ("mean_grouped_entropy_bits", "Mean entropy, 3 groups (bits)", "low / mid / high"),
    ("mean_gini_impurity", "Mean Gini impurity", "1 − Σ p²"),
    (
        "mean_pairwise_annotator_disagreement",
        "Annotator pairs that differ",
        "share of pairs on an item",
    ),
    ("mean_majority_share", "Outside the top label", "1 − share of the most common label"),
    ("mean_p_disagree", "Mean p_disagree", "pairwise: share against the majority side"),
]
CORRELATION_COLUMNS = [
    "source",
    "kind",
    "subset",
    "n",
    "spearman_r",
    "spearman_p",
    "spearman_p_method",
    "spearman_ci_low",
    "spearman_ci_high",
    "pearson_r",
    "pearson_p",
    "pearson_p_method",
    "pearson_ci_low",
    "pearson_ci_high",
    "reason",
]
ANNOTATOR_COLUMNS = [
    "annotator",
    "n_labels",
    "n_compared",
    "crowd_spearman",
    "crowd_spearman_p",
    "crowd_spearman_p_method",
    "median_duration_ms",
    "attention_checks_passed",
    "attention_checks_failed",
    "reason",
]


# --------------------------------------------------------------------------- numbers


def fmt(value, digits: int = 3) -> str:
    """A number for display: fixed decimals, a real minus sign, ``—`` when missing."""
    if value is None:
        return "—"
    return f"{value:.{digits}f}".replace("-", "−")


def _fmt_p(p, n: int | None = None, minimum: int = MIN_P_VALUE_PAIRS) -> str:
    """A p-value for display. A figure resting on fewer than ``minimum`` points gets none,
    with the count said (a dash would read as "not computed"), even from a report stored
    before the minimum existed, whose p came from an approximation."""
    if n is not None and n < minimum:
        return f"too few (n = {n})"
    if p is None:
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _p_phrase(p, n: int | None = None, minimum: int = MIN_P_VALUE_PAIRS) -> str:
    """ "p = 0.042", "p < 0.001" or "no p: too few (n = 4)", for running text."""
    text = _fmt_p(p, n, minimum)
    if text.startswith("too few"):
        return f"no p: {text}"
    if p is None:
        return "no p"
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def min_p_value_n(report: dict) -> int:
    """The report's minimum number of pairs for a p-value (reports made before it existed
    printed every p, so the current minimum is the one to say they lack)."""
    return (report.get("settings") or {}).get("min_p_value_n", MIN_P_VALUE_PAIRS)


def _ci_text(ci) -> str:
    return f"[{fmt(ci[0])}, {fmt(ci[1])}]" if ci else ""


def subset_sizes(report: dict) -> dict[str, int]:
    """Number of items in each of the report's subsets."""
    return {name: len(ids) for name, ids in report.get("subsets", {}).items()}
