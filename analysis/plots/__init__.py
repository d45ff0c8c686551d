"""Server-side charts of an analysis report (ANALYSIS.md), drawn with matplotlib.

Each chart is a ``Drawing``: how to draw it, its size and its text alternative. The page
puts ``Drawing.svg()`` inline (no ``<?xml?>`` prologue, no file written); "Download
figures" writes ``Drawing.file("svg" | "pdf")``, standalone files for a paper. Each
``*_drawing`` function returns the ``Drawing`` (``None`` when there is nothing to draw);
``correlation_chart`` and ``score_scatter`` return the inline SVG itself.

One module per family of figures (``base``: the plumbing and the colours; ``items``;
``correlations``; ``rankings``; ``scatter``; ``bundles``); this package's names are the
public ones.

* Only the object-oriented ``Figure`` API (no pyplot, no global figure manager); rcParams
  are set per chart inside ``rc_context`` under a lock, so concurrent requests neither
  share figures nor see each other's style.
* Inline SVG carries no ``style`` (``_as_presentation_attributes``), so the pages'
  Content-Security-Policy, which forbids inline styles, cannot strip its colours.
* Text stays text (``svg.fonttype = "none"``; TrueType in PDF): the browser draws it,
  search finds it, and matplotlib's SVG writer escapes it (``<``, ``>``, ``&``, quotes),
  so a source name like ``<script>`` is shown, never run. ``$`` is escaped too, so names
  never turn into mathtext, and a leading ``_`` cannot hide a name from the legend.
* One colour per source and per kind of source, in every chart, on every page and in
  every run: ``source_colours`` keys a fixed palette by the source's name, ``KIND_COLOURS``
  names the kinds' colours.
* No text inside a plotting area: counts, means and notes go into titles, axis labels and
  tick labels, so a label never covers a point or a bar.
* Arrays become a handful of artists (histogram stairs, one line per source, one scatter
  or hexbin per panel), never one artist per item: a chart of 26,000 items renders in
  well under a second.
"""

import matplotlib

from analysis.plots.base import (
    FILE_FORMATS,
    HEXBIN_ABOVE,
    HISTOGRAM_COLOURS,
    KIND_COLOURS,
    KIND_MARKERS,
    KIND_NAMES,
    LINESTYLES,
    LOG2_3,
    LOG2_5,
    MARKERS,
    MAX_NAME_CHARS,
    MAX_SCATTER_PANELS,
    NEUTRAL,
    PALETTE,
    RANKING_COLOURS,
    SOURCE_PALETTE,
    STYLE,
    Drawing,
    _legend_below,
    _render,
    chart_text,
    kind_colour,
    source_colours,
    source_slots,
)
from analysis.plots.bundles import (
    BUNDLE_COLOURS,
    concordance_drawing,
    concordance_entropy_drawing,
    decomposition_drawing,
    idiosyncrasy_drawing,
    position_drawing,
)
from analysis.plots.correlations import (
    SubsetFamily,
    by_kind_drawing,
    compact_count,
    correlation_chart,
    correlation_drawing,
    subset_families,
    subset_label,
)
from analysis.plots.items import (
    AGREEMENT_SCALES,
    AgreementScale,
    agreement_drawing,
    all_tie_items,
    crowd_spearman_drawing,
    entropy_drawing,
    p_disagree_drawing,
)
from analysis.plots.rankings import calibration_drawing, competence_drawing, ranking_drawing
from analysis.plots.scatter import ScatterPanel, scatter_drawing, score_scatter

__all__ = [
    "matplotlib",
    "LOG2_3",
    "LOG2_5",
    "HEXBIN_ABOVE",
    "MAX_NAME_CHARS",
    "MAX_SCATTER_PANELS",
    "FILE_FORMATS",
    "PALETTE",
    "SOURCE_PALETTE",
    "MARKERS",
    "LINESTYLES",
    "KIND_COLOURS",
    "KIND_MARKERS",
    "NEUTRAL",
    "KIND_NAMES",
    "HISTOGRAM_COLOURS",
    "RANKING_COLOURS",
    "STYLE",
    "Drawing",
    "_render",
    "chart_text",
    "source_slots",
    "source_colours",
    "kind_colour",
    "_legend_below",
    "entropy_drawing",
    "all_tie_items",
    "p_disagree_drawing",
    "AgreementScale",
    "AGREEMENT_SCALES",
    "agreement_drawing",
    "crowd_spearman_drawing",
    "SubsetFamily",
    "subset_families",
    "subset_label",
    "compact_count",
    "correlation_drawing",
    "correlation_chart",
    "by_kind_drawing",
    "ranking_drawing",
    "competence_drawing",
    "calibration_drawing",
    "ScatterPanel",
    "scatter_drawing",
    "score_scatter",
    "BUNDLE_COLOURS",
    "position_drawing",
    "concordance_drawing",
    "concordance_entropy_drawing",
    "decomposition_drawing",
    "idiosyncrasy_drawing",
]
