"""Charts of a bundled batch (ANALYSIS.md, "Bundles"): the mean label by position within
the bundle, Kendall's W per bundle (its distribution, and against the bundle's mean item
entropy), the two-way decomposition's ICCs and participant share per bundle, and each
participant's idiosyncrasy.

Each takes the report's ``bundles`` entries as they are and, where a test statistic goes
into an axis label, the sentence that says it (``stats_line``), written by the caller with
the report's own rule for small n, so every figure on the chart says what it rests on."""

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from analysis.plots.base import NEUTRAL, Drawing, _finite, _histogram
from analysis.plots.correlations import compact_count

# Colours of the bundle figures: of the human labels, never a source's.
BUNDLE_COLOURS = {
    "position": "#2f6f73",
    "concordance": "#8a4f7d",
    "idiosyncrasy": "#6b5b3e",
    "icc_2_1": "#3d5a80",
    "icc_3_1": "#b5533c",
    "participant_share": "#5f7f5f",
}


def _spread(count: int) -> np.ndarray:
    """Vertical offsets for ``count`` points of one strip: deterministic (the golden-ratio
    sequence), so the same report draws the same file."""
    return ((np.arange(count) * 0.6180339887) % 1.0 - 0.5) * 0.45


def position_drawing(
    effect: dict | None, stats_line: str, scale: Sequence[float] = ()
) -> Drawing | None:
    """The mean label at each position within the bundle (1 = shown first), with the
    number of labels at each position under its tick, on the whole label ``scale`` (its
    values; without them, the means' own range) so that a small drift looks small."""
    if not effect or not effect.get("positions"):
        return None
    places = [place + 1 for place in effect["positions"]]
    means = [np.nan if mean is None else mean for mean in effect["mean_label"]]
    counts = effect["n_labels"]

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        ax.plot(places, means, marker="o", color=BUNDLE_COLOURS["position"], linewidth=1.6)
        ticks = [f"{place}\n{compact_count(n)}" for place, n in zip(places, counts, strict=True)]
        ax.set_xticks(places, ticks)
        ax.set_xlim(places[0] - 0.5, places[-1] + 0.5)
        finite = _finite(means)
        if len(scale) >= 2:
            ax.set_yticks(list(scale), [f"{value:g}".replace("-", "−") for value in scale])
            ax.set_ylim(min(scale) - 0.25, max(scale) + 0.25)
        elif finite.size:
            pad = max(0.25, 0.15 * float(np.ptp(finite)))
            ax.set_ylim(float(finite.min()) - pad, float(finite.max()) + pad)
        ax.set_xlabel(f"position in the bundle (1 = shown first), labels below\n{stats_line}")
        ax.set_ylabel("mean label")
        ax.set_title(f"Mean label by position ({sum(counts):,} labels)", loc="left")

    return Drawing(draw, (6.4, 3.9), "Line chart of the mean label at each position in the bundle")


def _histogram_drawing(
    values: np.ndarray, missing: int, edges: np.ndarray, colour: str, text: dict[str, str]
) -> Drawing:
    """A histogram of ``values`` on ``edges`` with its mean dashed; ``text`` holds the
    ``axis`` label (``{mean}`` filled in), the ``missing`` note (``{missing}``), the y axis
    ``unit``, the ``title`` (``{n}``) and the ``description``."""

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        mean = _histogram(ax, values, edges, color=colour)
        ax.set_xlim(edges[0], edges[-1])
        label = text["axis"].format(mean=mean)
        if missing:
            label += "\n" + text["missing"].format(missing=missing)
        ax.set_xlabel(label)
        ax.set_ylabel(text["unit"])
        ax.set_title(text["title"].format(n=values.size), loc="left")

    return Drawing(draw, (6.4, 3.8), text["description"])


def concordance_drawing(bundles: Sequence[dict]) -> Drawing | None:
    """Histogram of Kendall's W over the bundles that have one (0 … 1)."""
    values = _finite(entry.get("kendalls_w") for entry in bundles)
    if values.size == 0:
        return None
    text = {
        "axis": "Kendall's W (1 = the same ranking; dashed line: mean = {mean:.2f})",
        "missing": "{missing:,} without W (fewer than 2 complete participants, or no variation)",
        "unit": "bundles",
        "title": "Concordance per bundle ({n:,} bundles)",
        "description": "Histogram of Kendall's W over the bundles",
    }
    colour = BUNDLE_COLOURS["concordance"]
    return _histogram_drawing(
        values, len(bundles) - values.size, np.linspace(0, 1, 11), colour, text
    )


def concordance_entropy_drawing(bundles: Sequence[dict], stats_line: str) -> Drawing | None:
    """Each bundle's Kendall's W against the mean label entropy of its items."""
    points = [
        (entry["mean_item_entropy"], entry["kendalls_w"])
        for entry in bundles
        if entry.get("kendalls_w") is not None and entry.get("mean_item_entropy") is not None
    ]
    if not points:
        return None
    entropy = np.array([x for x, _ in points], dtype=float)
    concordance = np.array([y for _, y in points], dtype=float)

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        size = float(np.clip(3000 / max(len(points), 1), 12, 40))
        ax.scatter(entropy, concordance, s=size, color=BUNDLE_COLOURS["concordance"],
                   alpha=0.85, linewidths=0)  # fmt: skip
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlim(left=0)
        ax.set_xlabel(f"mean label entropy of the bundle's items (bits)\n{stats_line}")
        ax.set_ylabel("Kendall's W")
        ax.set_title(f"Concordance against disagreement ({len(points):,} bundles)", loc="left")

    return Drawing(
        draw, (6.4, 3.9), "Scatter of each bundle's Kendall's W against its mean item entropy"
    )


DECOMPOSITION_STRIPS = (
    ("icc_2_1", "ICC(2,1)"),
    ("icc_3_1", "ICC(3,1)"),
    ("participant_share", "participant share"),
)


def decomposition_drawing(bundles: Sequence[dict]) -> Drawing | None:
    """One strip per figure of the two-way decomposition — ICC(2,1), ICC(3,1) and the
    share of the variance explained by the participant — with a point per bundle and a
    bar at the mean; each strip's mean and number of bundles in its label."""
    strips = []
    for key, label in DECOMPOSITION_STRIPS:
        values = _finite((entry.get("two_way") or {}).get(key) for entry in bundles)
        if values.size:
            strips.append((key, label, values))
    if not strips:
        return None
    lowest = min(float(values.min()) for _, _, values in strips)

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        for row, (key, _, values) in enumerate(strips):
            y = row + _spread(values.size)
            colour = BUNDLE_COLOURS[key]
            ax.scatter(values, y, s=22, color=colour, alpha=0.85, linewidths=0)
            ax.vlines(float(values.mean()), row - 0.32, row + 0.32, color="#1d2330", linewidth=1.6)
        ax.set_yticks(
            range(len(strips)),
            [
                f"{label}\nmean {values.mean():.2f}, n = {values.size:,}".replace("-", "−")
                for _, label, values in strips
            ],
        )
        ax.set_ylim(len(strips) - 0.5, -0.5)
        ax.set_xlim(min(0.0, lowest) - 0.05, 1.05)
        ax.axvline(0, color=NEUTRAL, linewidth=0.8)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("value per bundle (a point each; bar: the mean over bundles)")
        ax.set_title("Two-way decomposition per bundle", loc="left")

    return Drawing(
        draw,
        (6.4, 1.0 * len(strips) + 1.6),
        "Strip chart of ICC(2,1), ICC(3,1) and the participant share per bundle",
    )


def idiosyncrasy_drawing(entries: Sequence[dict]) -> Drawing | None:
    """Histogram of the participants' Spearman ρ with the others' mean (leave one out),
    one value per participant and bundle."""
    values = _finite(entry.get("spearman_with_others") for entry in entries)
    if values.size == 0:
        return None
    text = {
        "axis": "Spearman ρ with the others' mean ranking (dashed line: mean = {mean:.2f})",
        "missing": "{missing:,} without a value (fewer than 3 shared items, or no variation)",
        "unit": "rankings (participant × bundle)",
        "title": "Idiosyncrasy ({n:,} rankings)",
        "description": "Histogram of each participant's Spearman correlation with the others",
    }
    colour = BUNDLE_COLOURS["idiosyncrasy"]
    return _histogram_drawing(
        values, len(entries) - values.size, np.linspace(-1, 1, 21), colour, text
    )
