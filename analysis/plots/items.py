"""Charts of the items and of agreement: label entropy, p_disagree, the batch-level
agreement figures and each annotator's correlation with the crowd."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from analysis.plots.base import (
    HISTOGRAM_COLOURS,
    LOG2_3,
    LOG2_5,
    NEUTRAL,
    Drawing,
    _finite,
    _histogram,
)

# --------------------------------------------------------------------------- per item


def entropy_drawing(items: Sequence[dict]) -> Drawing | None:
    """Histogram of the items' label entropy in bits, 0 … log2 5 (the study's Fig. 7/9)."""
    values = _finite(item.get("entropy_bits") for item in items)
    if values.size == 0:
        return None

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        mean = _histogram(
            ax, values, np.linspace(0, LOG2_5, 21), color=HISTOGRAM_COLOURS["entropy"]
        )
        ax.set_xlim(0, LOG2_5)
        ticks = [0, 0.5, 1, 1.5, 2, LOG2_5]
        ax.set_xticks(ticks, ["0", "0.5", "1", "1.5", "2", "log₂5"])
        ax.set_xlabel(f"Shannon entropy (bits)\ndashed line: mean = {mean:.2f} bits")
        ax.set_ylabel("items")
        ax.set_title(f"Label entropy per item ({values.size:,} items)", loc="left")

    return Drawing(draw, (6.4, 3.8), "Histogram of label entropy per item")


def all_tie_items(items: Sequence[dict]) -> int:
    """Pairwise items whose every label is a tie (0): their p_disagree is 0.5 by definition
    (each tie counts half for A and half for B), though nobody disagreed."""
    return sum(
        1 for item in items if item.get("n") and (item.get("counts") or {}).get("0", 0) == item["n"]
    )


def p_disagree_drawing(items: Sequence[dict]) -> Drawing | None:
    """Pairwise batches: histogram of p_disagree = 1 − max(C_A + C_tie/2, C_B + C_tie/2)/n."""
    values = _finite(item.get("p_disagree") for item in items)
    if values.size == 0:
        return None
    ties = all_tie_items(items)

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        mean = _histogram(
            ax, values, np.linspace(0, 0.5, 21), color=HISTOGRAM_COLOURS["p_disagree"]
        )
        ax.set_xlim(0, 0.5)
        label = f"p_disagree (dashed line: mean = {mean:.2f})"
        if ties:
            label += f"\n{ties:,} of them all ties: p_disagree = 0.5 by definition"
        ax.set_xlabel(label)
        ax.set_ylabel("items")
        ax.set_title(f"Disagreement per pair ({values.size:,} items)", loc="left")

    return Drawing(draw, (6.4, 3.8), "Histogram of p_disagree per item")


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class AgreementScale:
    """One panel of the agreement chart: measures that share a range and a unit."""

    title: str
    axis_label: str
    limits: tuple[float, float]
    ticks: tuple[tuple[float, str], ...]
    colour: str
    measures: tuple[tuple[str, str], ...]  # (report key, label)


AGREEMENT_SCALES = (
    AgreementScale(
        "Krippendorff's α",
        "1 = perfect agreement, 0 = chance level",
        (-1.0, 1.0),
        ((-1, "−1"), (-0.5, "−0.5"), (0, "0"), (0.5, "0.5"), (1, "1")),
        "#3d5a80",
        (
            ("krippendorff_alpha_ordinal", "ordinal"),
            ("krippendorff_alpha_interval", "interval"),
        ),
    ),
    AgreementScale(
        "Entropy in bits (mean over items)",
        "0 = all agree; most: log₂3 (3 groups), log₂5 (5 labels)",
        (0.0, LOG2_5),
        ((0, "0"), (0.5, "0.5"), (1, "1"), (LOG2_3, "log₂3"), (2, "2"), (LOG2_5, "log₂5")),
        "#4c6a92",
        (
            ("mean_entropy_bits", "5 labels"),
            ("mean_grouped_entropy_bits", "3 groups"),
        ),
    ),
    AgreementScale(
        "Shares (mean over items)",
        "0 = all agree",
        (0.0, 1.0),
        ((0, "0"), (0.25, "0.25"), (0.5, "0.5"), (0.75, "0.75"), (1, "1")),
        "#8a6d3b",
        (
            ("mean_gini_impurity", "Gini impurity"),
            ("mean_pairwise_annotator_disagreement", "annotator pairs that differ"),
            ("mean_majority_share", "1 − share of the top label"),
            ("mean_p_disagree", "p_disagree"),
        ),
    ),
)


def _value_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}".replace("-", "−")


def agreement_drawing(agreement: dict) -> Drawing | None:
    """The batch-level agreement figures as small multiples, one panel per scale:
    Krippendorff's α on −1 … 1, entropies in bits on 0 … log₂5, shares on 0 … 1. The value
    of each bar is written in its label, never on the plot."""
    panels = []
    for scale in AGREEMENT_SCALES:
        rows = [(label, agreement.get(key)) for key, label in scale.measures if key in agreement]
        if rows:
            panels.append((scale, rows))
    if not panels or all(value is None for _, rows in panels for _, value in rows):
        return None

    def draw(figure: Figure) -> None:
        heights = [len(rows) + 1.6 for _, rows in panels]
        axes = figure.subplots(len(panels), 1, squeeze=False, height_ratios=heights)[:, 0]
        for ax, (scale, rows) in zip(axes, panels, strict=True):
            y = np.arange(len(rows))[::-1]
            values = np.array([np.nan if v is None else v for _, v in rows], dtype=float)
            ax.barh(y, np.nan_to_num(values), color=scale.colour, height=0.6)
            ax.set_yticks(y, [f"{label} = {_value_text(value)}" for label, value in rows])
            ax.set_ylim(-0.6, len(rows) - 0.4)
            ax.set_xlim(*scale.limits)
            ax.set_xticks([tick for tick, _ in scale.ticks], [text for _, text in scale.ticks])
            if scale.limits[0] < 0:
                ax.axvline(0, color=NEUTRAL, linewidth=0.8)
            ax.set_xlabel(scale.axis_label, fontsize=9.5)
            ax.set_title(scale.title, loc="left", fontsize=11)
            ax.grid(axis="y", visible=False)

    total_rows = sum(len(rows) for _, rows in panels)
    return Drawing(
        draw,
        (7.2, 0.42 * total_rows + 1.35 * len(panels) + 0.3),
        "Bar charts of the batch-level agreement figures, one per scale: "
        "Krippendorff's alpha, entropy in bits, and shares",
    )


def crowd_spearman_drawing(annotators: Sequence[dict]) -> Drawing | None:
    """Histogram of each annotator's Spearman ρ with the leave-one-out crowd mean."""
    values = _finite(entry.get("crowd_spearman") for entry in annotators)
    if values.size == 0:
        return None
    missing = len(annotators) - values.size

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        mean = _histogram(ax, values, np.linspace(-1, 1, 21), color=HISTOGRAM_COLOURS["crowd"])
        ax.set_xlim(-1, 1)
        label = f"Spearman ρ with the other annotators' mean (dashed line: mean = {mean:.2f})"
        if missing:
            label += f"\n{missing:,} without a value (too few shared items)"
        ax.set_xlabel(label)
        ax.set_ylabel("annotators")
        ax.set_title(f"Annotator vs crowd ({values.size:,} annotators)", loc="left")

    return Drawing(
        draw, (6.4, 3.8), "Histogram of the annotators' Spearman correlation with the crowd"
    )
