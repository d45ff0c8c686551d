"""The census page's charts as inline SVG (matplotlib), in the style of ``analysis.plots``.

One colour per answerer type in every chart (``TYPE_COLOURS``) and one per field in the
modal-share bars (``SERIES``); user text (model and category names) goes through
``chart_text``, so it is shown literally and escaped by matplotlib's SVG writer. Each
function takes parts of the census report and returns an SVG string, or ``None`` when there
is nothing to draw.
"""

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

# The analysis charts' renderer: the same style, and the same lock around matplotlib's
# global rcParams, so charts of both apps never draw with each other's settings.
from analysis.plots import PALETTE, _render, chart_text

__all__ = [
    "SERIES",
    "TYPE_COLOURS",
    "TYPE_ORDER",
    "modal_share_bars",
    "surprisal_ranking",
    "type_scatter",
]

TYPE_ORDER = ("explorer", "true-contrarian", "consensus-sampler", "consensus-fixed")
TYPE_COLOURS = {
    "explorer": PALETTE[1],
    "true-contrarian": PALETTE[3],
    "consensus-sampler": PALETTE[2],
    "consensus-fixed": PALETTE[0],
}
# key in the bar rows -> (legend label, colour); the order of the bars in each group
SERIES = {
    "model_computed": ("Models, computed from the stored replies", PALETTE[9]),
    "model_published": ("Models, as published with the norms", "#9edae5"),
    "human_published": ("People, imported norms", PALETTE[4]),
    "human_batch": ("People, human batch", PALETTE[6]),
}


def _type_legend(figure: Figure, types: Sequence[str]) -> None:
    handles = [
        Line2D([], [], marker="o", linestyle="", color=TYPE_COLOURS[kind], label=kind)
        for kind in TYPE_ORDER
        if kind in types
    ]
    figure.legend(handles=handles, loc="outside lower center", ncols=len(handles))


def surprisal_ranking(per_model: Mapping[str, dict], ci_level: float = 0.9) -> str | None:
    """Models ranked by mean surprisal (highest on top), with their bootstrap intervals."""
    ranked = sorted(per_model.items(), key=lambda entry: entry[1]["surprisal"])
    if not ranked:
        return None
    names = [chart_text(name) for name, _ in ranked]
    values = np.array([metrics["surprisal"] for _, metrics in ranked])
    bounds = np.array([metrics["surprisal_ci90"] for _, metrics in ranked], dtype=float)
    types = [metrics["type"] for _, metrics in ranked]

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        y = np.arange(len(ranked))
        for kind in TYPE_ORDER:
            rows = np.array([t == kind for t in types])
            if not rows.any():
                continue
            error = np.vstack([values[rows] - bounds[rows, 0], bounds[rows, 1] - values[rows]])
            ax.errorbar(
                values[rows],
                y[rows],
                xerr=np.clip(error, 0, None),
                fmt="o",
                color=TYPE_COLOURS[kind],
                ecolor=TYPE_COLOURS[kind],
                elinewidth=1.4,
                capsize=2.5,
                markersize=5,
            )
        ax.set_yticks(y, names)
        ax.tick_params(axis="y", labelsize=8.5)
        ax.set_ylim(-0.7, len(ranked) - 0.3)
        ax.set_xlabel(f"mean surprisal (bits), {ci_level:.0%} bootstrap interval")
        ax.grid(axis="y", visible=False)
        ax.set_title(f"Models ranked by surprisal ({len(ranked)} models)", loc="left")
        _type_legend(figure, types)

    return _render(
        draw,
        size=(8.4, 1.6 + 0.2 * len(ranked)),
        description="Models ranked by mean surprisal with 90 % bootstrap intervals",
    )


def type_scatter(per_model: Mapping[str, dict], medians: Mapping[str, float]) -> str | None:
    """Surprisal against self-distinctness, coloured by type, with the two median lines."""
    if not per_model or medians.get("surprisal") is None:
        return None
    entries = list(per_model.items())

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        for kind in TYPE_ORDER:
            points = [(m["surprisal"], m["self_distinct"]) for _, m in entries if m["type"] == kind]
            if points:
                x, y = zip(*points, strict=True)
                ax.scatter(x, y, s=34, color=TYPE_COLOURS[kind], edgecolor="white", linewidth=0.6)
        ax.axvline(medians["surprisal"], color="#5b6475", linestyle="--", linewidth=1)
        ax.axhline(medians["self_distinct"], color="#5b6475", linestyle="--", linewidth=1)
        ax.set_xlabel("mean surprisal (bits)")
        ax.set_ylabel("self-distinctness")
        ax.set_title("Surprisal × self-distinctness (dashed: medians)", loc="left")
        _type_legend(figure, [m["type"] for _, m in entries])

    return _render(
        draw,
        size=(7.2, 5.2),
        description="Scatter of surprisal against self-distinctness, coloured by type",
    )


def modal_share_bars(rows: Sequence[dict], series: Mapping[str, str]) -> str | None:
    """Per category, the modal share of each field present (``series``: key -> legend text,
    overriding ``SERIES``' label); rows hold ``category`` and a share (or ``None``) per key."""
    keys = [
        key for key in SERIES if key in series and any(row.get(key) is not None for row in rows)
    ]
    if not rows or not keys:
        return None
    ordered = sorted(rows, key=lambda row: -(row.get("model_computed") or 0))

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        height = 0.8 / len(keys)
        y = np.arange(len(ordered))
        for index, key in enumerate(keys):
            shares = np.array(
                [np.nan if row.get(key) is None else row[key] for row in ordered], dtype=float
            )
            offset = (index - (len(keys) - 1) / 2) * height
            ax.barh(
                y + offset,
                shares,
                height=height,
                color=SERIES[key][1],
                label=chart_text(series[key]),
            )
        ax.set_yticks(y, [chart_text(row["category"]) for row in ordered])
        ax.tick_params(axis="y", labelsize=8.5)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("modal share (count of the most frequent answer / answers)")
        ax.grid(axis="y", visible=False)
        ax.set_title(f"Modal share per category ({len(ordered)} categories)", loc="left")
        figure.legend(loc="outside lower center", ncols=min(len(keys), 2))

    return _render(
        draw,
        size=(8.4, 1.8 + len(ordered) * (0.14 + 0.1 * len(keys))),
        description="Modal share of each category for the model field and for people",
    )
