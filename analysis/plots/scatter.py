"""The scatter of the mean human rating against each source's model score."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from analysis.plots.base import (
    HEXBIN_ABOVE,
    KIND_NAMES,
    MAX_SCATTER_PANELS,
    Drawing,
    _svg,
    chart_text,
    source_colours,
)

# --------------------------------------------------------------------------- scatter


@dataclass(frozen=True)
class ScatterPanel:
    source: str
    kind: str
    scores: np.ndarray
    means: np.ndarray


def scatter_drawing(
    panels: Sequence[ScatterPanel],
    *,
    pairwise: bool = False,
    colour_names: Iterable[str] = (),
) -> Drawing | None:
    """Mean human rating against model score, one panel per source (hexbin when dense).

    ``colour_names``: every source of the report, so that a source keeps the colour the
    report's other charts give it. The number of items goes into the axis label."""
    panels = [p for p in panels if (np.isfinite(p.scores) & np.isfinite(p.means)).any()]
    panels = panels[:MAX_SCATTER_PANELS]
    if not panels:
        return None
    colours = source_colours([*colour_names, *(panel.source for panel in panels)])
    columns = min(3, len(panels))
    rows = -(-len(panels) // columns)

    def draw(figure: Figure) -> None:
        axes = figure.subplots(rows, columns, squeeze=False)
        for ax in axes.ravel()[len(panels) :]:
            ax.set_visible(False)
        for ax, panel in zip(axes.ravel(), panels, strict=False):
            known = np.isfinite(panel.scores) & np.isfinite(panel.means)
            x, y = panel.scores[known], panel.means[known]
            if x.size > HEXBIN_ABOVE:
                ax.hexbin(
                    x,
                    y,
                    gridsize=40,
                    cmap="viridis",
                    mincnt=1,
                    bins="log",
                    linewidths=0,
                    rasterized=True,
                )
            else:  # fewer points: bigger and more opaque
                size = float(np.clip(4000 / max(x.size, 1), 6, 28))
                alpha = 0.8 if x.size < 300 else 0.4
                colour = colours[str(panel.source)]
                ax.scatter(x, y, s=size, alpha=alpha, color=colour, linewidths=0, rasterized=True)
            ax.set_title(chart_text(panel.source), loc="left", fontsize=11)
            kind = KIND_NAMES.get(panel.kind, "model")
            ax.set_xlabel(f"{kind} score\n(n = {x.size:,} items)")
            ax.set_ylabel("mean preference for A" if pairwise else "mean human rating")

    return Drawing(
        draw,
        (3.6 * columns, 3.4 * rows + 0.3),
        "Mean human rating against each source's model score",
    )


def score_scatter(
    panels: Sequence[ScatterPanel], *, pairwise: bool = False, colour_names: Iterable[str] = ()
) -> str | None:
    return _svg(scatter_drawing(panels, pairwise=pairwise, colour_names=colour_names))
