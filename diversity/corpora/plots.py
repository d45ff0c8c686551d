"""The corpus page's charts, in the style of ``analysis.plots`` (matplotlib, inline SVG).

* ``intra_histogram_drawing``: the share of (model, query) intra-model similarities in each
  tenth of [0, 1], pooled (bars) and per model (lines);
* ``heatmap_drawing``: the model × model mean similarity in clustering order (diagonal:
  intra-model means);
* ``top_n_drawing``: mean unique models among the N nearest neighbours, N = 1 … 50, with
  its bootstrap band;
* ``projection_svg``: one query's responses on their first two principal axes, drawn by
  hand (not matplotlib) so that every point is a link — focusable by keyboard, its text in
  a tooltip (``<title>``) and, on activation, shown in the table below the chart.

One colour per model in every chart and table (``model_colours``: the analysis report's
``source_colours``, keyed by the name). Names go through ``chart_text``; the hand-drawn SVG
escapes all text. Every function returns ``None`` when there is nothing to draw.
"""

from collections.abc import Sequence

import numpy as np
from django.utils.html import escape
from matplotlib.figure import Figure

from analysis.plots import NEUTRAL, Drawing, _legend_below, chart_text, source_colours

__all__ = [
    "heatmap_drawing",
    "intra_histogram_drawing",
    "model_colours",
    "projection_svg",
    "top_n_drawing",
]

POOLED_COLOUR = "#9aa5b8"
PROJECTION_SIZE = (640, 420)
PROJECTION_MARGIN = 28
TOOLTIP_CHARS = 280


def model_colours(names: Sequence[str]) -> dict[str, str]:
    return source_colours(names)


def _numbers(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def intra_histogram_drawing(report: dict) -> Drawing | None:
    intra = report.get("intra_model") or {}
    pooled = intra.get("pooled")
    if not pooled or not pooled["values"]:
        return None
    models = [m for m in report["models"] if m in intra and intra[m]["values"]]
    colours = model_colours(report["models"])
    edges = np.linspace(0, 1, 11)

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        ax.bar(
            edges[:-1],
            _numbers(pooled["histogram"]),
            width=0.1,
            align="edge",
            color=POOLED_COLOUR,
            edgecolor="white",
            label=f"all models ({pooled['values']} values)",
        )
        centres = edges[:-1] + 0.05
        for model in models:
            ax.plot(
                centres,
                _numbers(intra[model]["histogram"]),
                marker="o",
                markersize=3.5,
                linewidth=1.4,
                color=colours[model],
                label=chart_text(model),
            )
        ax.set_xlim(0, 1)
        ax.set_xticks(edges)
        ax.set_xlabel("mean pairwise similarity among a model's samples to a query")
        ax.set_ylabel("share of (model, query) values")
        ax.set_title(
            f"Intra-model repetition (mean {pooled['mean']:.3f}, all models)"
            if pooled["mean"] is not None
            else "Intra-model repetition",
            loc="left",
        )
        _legend_below(figure, ax, len(models) + 1)

    return Drawing(
        draw,
        (8.4, 5.0),
        "Histogram of intra-model similarity over queries, pooled and per model",
    )


def heatmap_drawing(report: dict) -> Drawing | None:
    inter = report.get("inter_model") or {}
    models = inter.get("models") or []
    if not models:
        return None
    matrix = np.array([_numbers(row) for row in inter["matrix"]]).reshape(len(models), -1)
    colours = model_colours(report["models"])

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        shown = np.ma.masked_invalid(matrix)
        low = min(0.0, float(np.nanmin(matrix))) if np.isfinite(matrix).any() else 0.0
        image = ax.imshow(shown, cmap="viridis", vmin=low, vmax=1, interpolation="nearest")
        ticks = np.arange(len(models))
        ax.set_xticks(ticks, [chart_text(m) for m in models], rotation=60, ha="right")
        ax.set_yticks(ticks, [chart_text(m) for m in models])
        for label, model in zip(ax.get_xticklabels(), models, strict=True):
            label.set_color(colours[model])
        for label, model in zip(ax.get_yticklabels(), models, strict=True):
            label.set_color(colours[model])
        ax.tick_params(labelsize=8.5 if len(models) > 12 else 10)
        ax.grid(visible=False)
        ax.set_title("Model × model mean similarity", loc="left")
        bar = figure.colorbar(image, ax=ax, shrink=0.85)
        bar.set_label("mean cosine similarity")

    side = min(11.0, 4.2 + 0.32 * len(models))
    return Drawing(
        draw,
        (side + 2.0, side),
        "Heat map of the mean similarity of each pair of models, in clustering order",
    )


def top_n_drawing(report: dict) -> Drawing | None:
    section = report.get("top_n") or {}
    n = np.array(section.get("n") or [], dtype=float)
    mean = _numbers(section.get("mean_unique_models") or [])
    if not n.size or np.all(np.isnan(mean)):
        return None
    ci_key = next((key for key in section if key.startswith("ci")), None)
    band = np.array([_numbers(pair) for pair in section.get(ci_key) or []]).reshape(-1, 2)
    n_models = len(report.get("models") or [])

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        if band.size:
            ax.fill_between(
                n, band[:, 0], band[:, 1], color="#1f77b4", alpha=0.2, linewidth=0, label="95 % CI"
            )
        ax.plot(n, mean, color="#1f77b4", linewidth=1.8, label="mean over queries")
        ax.axhline(n_models, color=NEUTRAL, linestyle="--", linewidth=1, label="models")
        ax.set_xlim(1, n.max())
        ax.set_ylim(0.8, max(n_models, 1) + 0.4)
        ax.set_xlabel("N nearest neighbours (the response itself excluded)")
        ax.set_ylabel("distinct models among them")
        ax.set_title(f"Top-N unique models ({n_models} models)", loc="left")
        _legend_below(figure, ax, 3)

    return Drawing(
        draw,
        (8.4, 4.8),
        "Mean number of distinct models among a response's N nearest neighbours, "
        "for N from 1 to 50, with a 95 % bootstrap band",
    )


def projection_svg(responses: Sequence[dict], colours: dict[str, str]) -> str | None:
    """The responses (``x``, ``y``, ``model``, ``sample``, ``text``) as an SVG scatter whose
    points link to ``#response-<i>``."""
    if not responses:
        return None
    width, height = PROJECTION_SIZE
    margin = PROJECTION_MARGIN
    xs = np.array([r["x"] or 0.0 for r in responses], dtype=float)
    ys = np.array([r["y"] or 0.0 for r in responses], dtype=float)

    def scale(values: np.ndarray, low: float, high: float, flip: bool) -> np.ndarray:
        span = values.max() - values.min()
        unit = (values - values.min()) / span if span > 1e-12 else np.full(values.size, 0.5)
        if flip:
            unit = 1 - unit
        return low + unit * (high - low)

    px = scale(xs, margin, width - margin, False)
    py = scale(ys, margin, height - margin, True)
    parts = [
        f'<svg class="chart projection" viewBox="0 0 {width} {height}" role="group" '
        'aria-label="Responses on the first two principal axes; each point is a link to the '
        'response">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
        f'<line x1="{margin}" y1="{height - margin}" x2="{width - margin}" '
        f'y2="{height - margin}" stroke="#c9d0dc"/>',
        f'<line x1="{margin}" y1="{margin}" x2="{margin}" y2="{height - margin}" '
        'stroke="#c9d0dc"/>',
    ]
    for i, response in enumerate(responses):
        text = response["text"]
        short = text if len(text) <= TOOLTIP_CHARS else text[: TOOLTIP_CHARS - 1] + "…"
        label = f"{response['model']}, sample {response['sample']}: {short}"
        parts.append(
            f'<a href="#response-{i}" class="point" data-model="{escape(response["model"])}" '
            f'aria-label="{escape(label)}">'
            f"<title>{escape(label)}</title>"
            f'<circle cx="{px[i]:.1f}" cy="{py[i]:.1f}" r="7" '
            f'fill="{colours.get(response["model"], NEUTRAL)}" fill-opacity="0.85" '
            'stroke="white" stroke-width="1.5"/></a>'
        )
    parts.append("</svg>")
    return "".join(parts)


# --------------------------------------------------------------------------- the page's charts
# (key, title, caption, how to draw it), for the page, its figure downloads and the zip
CHARTS = (
    (
        "intra-histogram",
        "Intra-model repetition",
        "For each model and query: the mean cosine similarity of the model's samples to each "
        "other (distinct pairs). Bars: the share of all (model, query) values in each tenth "
        "of [0, 1]; lines: the same per model.",
        intra_histogram_drawing,
    ),
    (
        "heatmap",
        "Model × model similarity",
        "Off the diagonal: the mean over the queries both models answered of the mean "
        "similarity between their responses. Diagonal: the model's intra-model mean (no "
        "response compared with itself). Models in clustering order (average linkage on "
        "1 − similarity).",
        heatmap_drawing,
    ),
    (
        "top-n",
        "Top-N unique models",
        "For each response, the number of distinct models among its N nearest neighbours "
        "(cosine, within its query, itself excluded), averaged over the query's responses "
        "and then over queries; band: 95 % percentile bootstrap over queries.",
        top_n_drawing,
    ),
)


def drawings(report: dict) -> dict:
    """key -> (title, caption, drawing) of each chart the report can draw, in order."""
    drawings = {}
    for key, title, caption, make in CHARTS:
        drawing = make(report)
        if drawing is not None:
            drawings[key] = (title, caption, drawing)
    return drawings
