"""Charts of the model rankings, annotator competence and calibration."""

from collections.abc import Iterable

import numpy as np
from matplotlib.figure import Figure

from analysis.plots.base import (
    HISTOGRAM_COLOURS,
    RANKING_COLOURS,
    Drawing,
    _finite,
    _histogram,
    _legend_below,
    _source_styles,
    chart_text,
)
from analysis.plots.correlations import compact_count

# --------------------------------------------------------------------------- rankings


def ranking_drawing(rankings: dict | None) -> Drawing | None:
    """Each model's score with its 95 % annotator-bootstrap interval, best on top: the
    full set and each subset's refit (offset below it)."""
    if not rankings:
        return None
    pairwise = rankings.get("bradley_terry") is not None
    fitted = rankings["bradley_terry"] if pairwise else rankings.get("absolute")
    if not fitted or not fitted.get("models"):
        return None
    score_key = "log_strength" if pairwise else "mean"
    models = [entry["model"] for entry in fitted["models"]]
    parts = [("full", "full set", fitted["models"])]
    parts += [
        (entry["role"], name, entry["models"])
        for name, entry in fitted.get("by_subset", {}).items()
    ]

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        step = 0.8 / max(len(parts), 1)
        for number, (role, label, entries) in enumerate(parts):
            by_model = {entry["model"]: entry for entry in entries}
            y, x, low, high = [], [], [], []
            for row, model in enumerate(models):
                entry = by_model.get(model)
                if entry is None or entry.get(score_key) is None:
                    continue
                y.append(row + number * step)
                x.append(entry[score_key])
                ci = entry.get("ci") or [entry[score_key], entry[score_key]]
                low.append(entry[score_key] - ci[0])
                high.append(ci[1] - entry[score_key])
            colour = RANKING_COLOURS.get(role, RANKING_COLOURS["full"])
            ax.errorbar(
                x, y, xerr=[low, high], fmt="o", color=colour, markersize=4, capsize=2,
                label=chart_text(label),
            )  # fmt: skip
        ax.set_yticks(range(len(models)), [chart_text(model) for model in models])
        ax.invert_yaxis()
        if pairwise:
            ax.axvline(0, color="#999999", linewidth=0.8, linestyle=":")
            ax.set_xlabel("log-strength (natural log, sums to zero) with 95 % interval")
            ax.set_title("Bradley–Terry–Davidson strength per model", loc="left")
        else:
            ax.set_xlabel("mean rating with 95 % interval")
            ax.set_title("Mean rating per model", loc="left")
        _legend_below(figure, ax, len(parts))

    height = 1.6 + 0.35 * len(models) * max(1, len(parts) / 2)
    return Drawing(draw, (6.4, min(height, 12)), "Model strengths with their intervals")


def competence_drawing(competence: dict | None) -> Drawing | None:
    """Histogram of the annotators' MACE competence (share of labels that are not guesses)."""
    annotators = (competence or {}).get("annotators", [])
    values = _finite(entry.get("mace_competence") for entry in annotators)
    if values.size == 0:
        return None

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        mean = _histogram(ax, values, np.linspace(0, 1, 21), color=HISTOGRAM_COLOURS["competence"])
        ax.set_xlim(0, 1)
        ax.set_xlabel(f"MACE competence (dashed line: mean = {mean:.2f})")
        ax.set_ylabel("annotators")
        ax.set_title(f"Annotator competence ({values.size:,} annotators)", loc="left")

    return Drawing(draw, (6.4, 3.8), "Histogram of the annotators' MACE competence")


def calibration_drawing(calibration: dict | None, colour_names: Iterable[str]) -> Drawing | None:
    """Mean Jensen–Shannon divergence between each source's distributions and the items'
    human histograms, per bin of human entropy (full set): do sources miss most where people
    disagree? One line per source in its colour."""
    sources = (calibration or {}).get("sources", [])
    if not sources:
        return None
    styles = _source_styles(list(colour_names) + [entry["source"] for entry in sources])

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        edges = None
        for entry in sources:
            bins = entry["subsets"]["full"]["entropy_bins"]
            if not bins:
                continue
            edges = [b["low"] for b in bins] + [bins[-1]["high"]]
            centres = [(b["low"] + b["high"]) / 2 for b in bins]
            values = [np.nan if b["mean_jsd"] is None else b["mean_jsd"] for b in bins]
            style = styles[entry["source"]]
            rho = (entry["subsets"]["full"].get("entropy_spearman") or {}).get("r")
            label = chart_text(entry["source"]) + (f" (ρ = {rho:.2f})" if rho is not None else "")
            ax.plot(
                centres, values, color=style["color"], marker=style["marker"],
                linestyle=style["linestyle"], label=label,
            )  # fmt: skip
        if edges is not None:
            ax.set_xlim(edges[0], edges[-1])
            counts = [b["n"] for b in sources[0]["subsets"]["full"]["entropy_bins"]]
            spans = list(zip(edges, edges[1:], counts, strict=False))
            ax.set_xticks(
                [(a + b) / 2 for a, b, _ in spans],
                [f"{a:.1f}–{b:.1f}\n{compact_count(n)}" for a, b, n in spans],
            )
        ax.set_ylim(bottom=0)
        ax.set_xlabel("human label entropy (bits), items per bin below")
        ax.set_ylabel("mean JSD (bits)")
        ax.set_title("Distance from the human distribution by disagreement", loc="left")
        _legend_below(figure, ax, len(sources))

    return Drawing(
        draw, (6.4, 4.2), "Mean Jensen–Shannon divergence by human entropy, one line per source"
    )
