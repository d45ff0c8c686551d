"""Server-side charts of an analysis report (ANALYSIS.md), drawn with matplotlib.

Each chart is a ``Drawing``: how to draw it, its size and its text alternative. The page
puts ``Drawing.svg()`` inline (no ``<?xml?>`` prologue, no file written); "Download
figures" writes ``Drawing.file("svg" | "pdf")``, standalone files for a paper. The public
``*_chart`` / ``*_histogram`` functions return the inline SVG (``None`` when there is
nothing to draw); their ``*_drawing`` twins return the ``Drawing``.

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

import hashlib
import html
import io
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import matplotlib
import numpy as np
from cycler import cycler
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from analysis.stats.subsets import TUKEY_FENCES, families_for

LOG2_3 = float(np.log2(3))
LOG2_5 = float(np.log2(5))
HEXBIN_ABOVE = 5_000
MAX_NAME_CHARS = 48
MAX_SCATTER_PANELS = 12
FILE_FORMATS = ("svg", "pdf")

PALETTE = list(matplotlib.colormaps["tab10"].colors)
# Score sources: tab10 without its grey (kept for neutral elements), colour-blind-safe
# enough that marker shapes, which follow the colour, tell the rest apart.
SOURCE_PALETTE = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#bcbd22",
    "#17becf",
]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<"]
LINESTYLES = ["-", "--", ":", "-."]
# Kinds of source: darker colours of their own, never a source's.
KIND_COLOURS = {
    "reward_model": "#1b5e20",
    "lm": "#0d47a1",
    "judge": "#8e2463",
    "other": "#5d4037",
}
KIND_MARKERS = {"reward_model": "s", "lm": "o", "judge": "^", "other": "D"}
NEUTRAL = "#5b6475"
KIND_NAMES = {
    "lm": "language model",
    "reward_model": "reward model",
    "judge": "LLM judge",
    "other": "other",
}
# The per-item and batch-level charts are about the human labels, not a source: each
# measure has a colour of its own that no source takes.
HISTOGRAM_COLOURS = {
    "entropy": "#4c6a92",
    "p_disagree": "#8a6d3b",
    "crowd": "#5f7f5f",
    "competence": "#7a5c8e",
}
# The model rankings: the full set and each subset family's default subset.
RANKING_COLOURS = {"full": "#333333", "similar": "#4c6a92", "disagree": "#b5533c"}

STYLE = {
    "svg.fonttype": "none",
    "svg.hashsalt": None,  # random ids per chart: several inline SVGs never share clip ids
    "pdf.fonttype": 42,  # TrueType: text in a downloaded PDF stays editable
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial", "Liberation Sans"],
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "legend.frameon": False,
    "axes.prop_cycle": cycler(color=SOURCE_PALETTE),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": NEUTRAL,
    "axes.labelcolor": "#1d2330",
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.color": "#e3e7ee",
    "grid.linewidth": 0.8,
    "xtick.color": NEUTRAL,
    "ytick.color": NEUTRAL,
    "text.color": "#1d2330",
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
}
_LOCK = threading.Lock()
_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)


# --------------------------------------------------------------------------- plumbing


@dataclass(frozen=True)
class Drawing:
    """A chart ready to be written: ``draw`` fills a fresh figure of ``size`` inches;
    ``description`` is its text alternative."""

    draw: Callable[[Figure], None]
    size: tuple[float, float]
    description: str

    def figure(self) -> Figure:
        """The drawn figure, laid out (for measuring it; the writers make their own)."""
        with _LOCK, matplotlib.rc_context(STYLE):
            figure = Figure(figsize=self.size, layout="constrained")
            FigureCanvasAgg(figure)
            self.draw(figure)
            figure.canvas.draw()
        return figure

    def svg(self) -> str:
        """Inline SVG for a page, sized by its viewBox (CSS scales it)."""
        return _render(self.draw, size=self.size, description=self.description)

    def file(self, fmt: str) -> bytes:
        """A standalone ``svg`` or ``pdf`` file of the chart, the same for the same data."""
        if fmt not in FILE_FORMATS:
            raise ValueError(f"format must be one of {', '.join(FILE_FORMATS)}, got {fmt!r}")
        buffer = io.BytesIO()
        # Fixed ids and no date: the same report gives byte-identical files.
        style = {**STYLE, "svg.hashsalt": "dense-judgments"}
        metadata = {"Date": None, "Creator": None} if fmt == "svg" else {"Creator": None}
        if fmt == "pdf":
            metadata["CreationDate"] = None
        with _LOCK, matplotlib.rc_context(style):
            figure = Figure(figsize=self.size, layout="constrained")
            self.draw(figure)
            figure.savefig(buffer, format=fmt, dpi=300, metadata=metadata)
        return buffer.getvalue()


def _render(draw: Callable[[Figure], None], *, size: tuple[float, float], description: str) -> str:
    """Draw on a fresh figure and return its SVG, sized by its viewBox (CSS scales it)."""
    buffer = io.StringIO()
    with _LOCK, matplotlib.rc_context(STYLE):
        figure = Figure(figsize=size, layout="constrained")
        draw(figure)
        figure.savefig(buffer, format="svg", dpi=144, metadata={"Date": None, "Creator": None})
    svg = _as_presentation_attributes(_PROLOGUE.sub("", buffer.getvalue(), count=1))
    label = html.escape(description, quote=True)
    return svg.replace("<svg ", f'<svg class="chart" role="img" aria-label="{label}" ', 1).strip()


_STYLE_ATTRIBUTE = re.compile(r'\sstyle="([^"]*)"')
_STYLE_ELEMENT = re.compile(r'<style type="text/css">\s*\*\s*\{([^}]*)\}\s*</style>')


def _as_presentation_attributes(svg: str) -> str:
    """matplotlib's ``style="fill: …; stroke: …"`` as SVG presentation attributes
    (``fill="…" stroke="…"``), and its one ``<style>`` rule (``*{…}``, properties that
    inherit) as attributes of the root element.

    A page's Content-Security-Policy without ``'unsafe-inline'`` styles (ours) drops
    inline ``style`` attributes and ``<style>`` elements, which would leave an inline chart
    black; presentation attributes are part of the SVG itself and always apply. Every
    property matplotlib writes (fill, stroke and their widths, dashes and opacities,
    font-family / -size / -weight, text-anchor, opacity) exists as an attribute."""

    def attributes(declarations: str) -> str:
        written = []
        for declaration in declarations.split(";"):
            name, colon, value = declaration.partition(":")
            if colon and name.strip():
                written.append(f' {name.strip()}="{value.strip()}"')
        return "".join(written)

    inherited = ""
    rule = _STYLE_ELEMENT.search(svg)
    if rule is not None:
        inherited = attributes(rule.group(1))
        svg = svg[: rule.start()] + svg[rule.end() :]
    svg = _STYLE_ATTRIBUTE.sub(lambda match: attributes(match.group(1)), svg)
    return svg.replace("<svg ", f"<svg{inherited} ", 1)


def _svg(drawing: "Drawing | None") -> str | None:
    return drawing.svg() if drawing is not None else None


def chart_text(value) -> str:
    """User text (a source name) as matplotlib shows it literally: no mathtext, no hiding."""
    text = str(value)
    if len(text) > MAX_NAME_CHARS:
        text = text[: MAX_NAME_CHARS - 1] + "…"
    text = text.replace("$", r"\$")
    if text.startswith("_"):
        text = "\u200b" + text  # legend() skips labels that start with "_"
    return text


def _finite(values: Iterable) -> np.ndarray:
    array = np.array([np.nan if v is None else v for v in values], dtype=float)
    return array[np.isfinite(array)]


# --------------------------------------------------------------------------- colours


def _home_slot(name: str) -> int:
    """The palette slot a name asks for: from a hash of the name, the same in every run
    (Python's own ``hash`` of a string changes from process to process)."""
    digest = hashlib.sha256(str(name).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % len(SOURCE_PALETTE)


def source_slots(names: Iterable[str]) -> dict[str, int]:
    """Each source's palette slot: the one its name asks for; when two names of the same
    report ask for one slot, the later in alphabetical order takes the next free one (so
    the assignment depends only on the set of names, never on their order)."""
    unique = sorted({str(name) for name in names})
    slots: dict[str, int] = {}
    taken: set[int] = set()
    for name in unique:
        slot = _home_slot(name)
        if len(unique) <= len(SOURCE_PALETTE):
            while slot in taken:
                slot = (slot + 1) % len(SOURCE_PALETTE)
        taken.add(slot)
        slots[name] = slot
    return slots


def source_colours(names: Iterable[str]) -> dict[str, str]:
    """Each source's colour (``#rrggbb``), stable across charts, pages and runs."""
    return {name: SOURCE_PALETTE[slot] for name, slot in source_slots(names).items()}


def _source_styles(names: Iterable[str]) -> dict[str, dict]:
    """Colour, marker and line style of each source, all following its slot; past nine
    sources in one report, names that share a colour differ in marker and line style."""
    styles = {}
    for position, (name, slot) in enumerate(sorted(source_slots(names).items())):
        styles[name] = {
            "color": SOURCE_PALETTE[slot],
            "marker": MARKERS[slot % len(MARKERS)],
            "linestyle": LINESTYLES[(position // len(SOURCE_PALETTE)) % len(LINESTYLES)],
        }
    return styles


def kind_colour(kind: str) -> str:
    return KIND_COLOURS.get(kind, KIND_COLOURS["other"])


def _histogram(ax, values: np.ndarray, edges: np.ndarray, *, color: str) -> float:
    """Stairs of the values' histogram and a dashed line at their mean (returned, for the
    axis label: no text inside the plotting area)."""
    counts, _ = np.histogram(values, bins=edges)
    ax.stairs(counts, edges, fill=True, color=color, alpha=0.85, linewidth=0)
    ax.stairs(counts, edges, color="#1d2330", linewidth=0.6)
    mean = float(values.mean())
    ax.axvline(mean, color="#1d2330", linestyle="--", linewidth=1.2)
    ax.set_ylim(0, max(1, counts.max()) * 1.08)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="x", visible=False)
    return mean


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


def entropy_histogram(items: Sequence[dict]) -> str | None:
    return _svg(entropy_drawing(items))


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


def p_disagree_histogram(items: Sequence[dict]) -> str | None:
    return _svg(p_disagree_drawing(items))


# --------------------------------------------------------------------------- correlations


@dataclass(frozen=True)
class SubsetFamily:
    """One x axis of the correlation charts: ``full`` and the report's subsets of one family
    of ``analysis.stats.subsets``, in order; ``key`` is the family's role."""

    key: str
    title: str
    axis_label: str
    subsets: tuple[str, ...]


def subset_families(signed: bool, subset_names: Iterable[str]) -> list[SubsetFamily]:
    """The report's subsets, grouped as the study plots them (order of the report kept):
    the families of signed preferences (``signed``, pairwise) or of ratings."""
    names = list(subset_names)
    families = []
    for family in families_for(signed):
        members = [name for name in names if name.startswith(family.prefix)]
        if members:
            full = ("full",) if "full" in names else ()
            families.append(
                SubsetFamily(
                    family.role, family.title, family.threshold_label, full + tuple(members)
                )
            )
    return families


def subset_label(name: str) -> str:
    """Short tick label: ``tukey_k1.5`` → ``k=1.5``, ``top_entropy_10pct`` → ``10 %``."""
    if name.startswith(TUKEY_FENCES.prefix):
        return "k=" + name.removeprefix(TUKEY_FENCES.prefix)
    match = re.search(r"_(\d+)pct$", name)
    if match:
        return f"{match.group(1)} %"
    return name


def compact_count(n: int) -> str:
    """``950`` → ``950``, ``1_161`` → ``1.2k``, ``26_000`` → ``26k``: fits under a tick."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n / 1000:.0f}k"
    return f"{n / 1_000_000:.1f}M"


def _subset_ticks(ax, family: SubsetFamily, subset_sizes: dict[str, int] | None) -> None:
    labels = []
    for name in family.subsets:
        label = subset_label(name)
        if subset_sizes is not None and name in subset_sizes:
            label += "\nn=" + compact_count(subset_sizes[name])
        labels.append(label)
    ax.set_xticks(range(len(family.subsets)), labels)
    ax.tick_params(axis="x", labelsize=9 if subset_sizes else 10)
    ax.set_xlabel(family.axis_label)
    ax.set_xlim(-0.4, len(family.subsets) - 0.6)
    ax.grid(axis="x", visible=False)


def _zero_line(ax) -> None:
    low, high = ax.get_ylim()
    if low < 0 < high:
        ax.axhline(0, color="#5b6475", linewidth=0.8)


def correlation_drawing(
    correlations: Sequence[dict],
    families: Sequence[SubsetFamily],
    *,
    subset_sizes: dict[str, int] | None = None,
) -> Drawing | None:
    """Spearman ρ of each source across each subset family, with its 95 % CI as a band."""
    sources: dict[str, dict[str, dict]] = {}
    for entry in correlations:
        sources.setdefault(entry["source"], {})[entry["subset"]] = entry
    if not families or all(entry.get("spearman") is None for entry in correlations):
        return None
    styles = _source_styles(sources)

    def draw(figure: Figure) -> None:
        axes = figure.subplots(1, len(families), sharey=True, squeeze=False)[0]
        for ax, family in zip(axes, families, strict=True):
            x = np.arange(len(family.subsets))
            for source, by_subset in sources.items():
                r, low, high = (np.full(x.size, np.nan) for _ in range(3))
                for position, subset in enumerate(family.subsets):
                    spearman = (by_subset.get(subset) or {}).get("spearman")
                    if spearman is None:
                        continue
                    r[position] = spearman["r"]
                    if spearman.get("ci95"):
                        low[position], high[position] = spearman["ci95"]
                style = styles[str(source)]
                ax.fill_between(x, low, high, color=style["color"], alpha=0.14, linewidth=0)
                ax.plot(x, r, markersize=5, linewidth=1.8, label=chart_text(source), **style)
            _subset_ticks(ax, family, subset_sizes)
            ax.set_title(family.title, loc="left")
        axes[0].set_ylabel("Spearman ρ")
        for ax in axes:
            _zero_line(ax)
        _legend_below(figure, axes[0], len(sources))

    return Drawing(
        draw,
        (10, 4.4 + 0.25 * ((len(sources) - 1) // 3)),
        "Spearman correlation of each score source across the subsets, "
        "with 95 % bootstrap confidence bands",
    )


def correlation_chart(
    correlations: Sequence[dict],
    families: Sequence[SubsetFamily],
    *,
    subset_sizes: dict[str, int] | None = None,
) -> str | None:
    return _svg(correlation_drawing(correlations, families, subset_sizes=subset_sizes))


def by_kind_drawing(
    by_kind: Sequence[dict],
    families: Sequence[SubsetFamily],
    *,
    subset_sizes: dict[str, int] | None = None,
) -> Drawing | None:
    """Mean Spearman ρ of each source kind across each subset family (Fig. 10/11)."""
    kinds: dict[str, dict[str, dict]] = {}
    for entry in by_kind:
        kinds.setdefault(entry["kind"], {})[entry["subset"]] = entry
    if not families or all(entry.get("spearman_mean") is None for entry in by_kind):
        return None

    def draw(figure: Figure) -> None:
        axes = figure.subplots(1, len(families), sharey=True, squeeze=False)[0]
        for ax, family in zip(axes, families, strict=True):
            x = np.arange(len(family.subsets))
            for kind, by_subset in kinds.items():
                r = np.array(
                    [
                        np.nan
                        if (by_subset.get(s) or {}).get("spearman_mean") is None
                        else by_subset[s]["spearman_mean"]
                        for s in family.subsets
                    ]
                )
                n_sources = max((row.get("n_sources") or 0) for row in by_subset.values())
                name = KIND_NAMES.get(kind, chart_text(kind))
                label = f"{name} (mean of {n_sources})" if n_sources > 1 else name
                ax.plot(
                    x,
                    r,
                    markersize=6,
                    linewidth=2,
                    label=label,
                    color=kind_colour(kind),
                    marker=KIND_MARKERS.get(kind, "D"),
                )
            _subset_ticks(ax, family, subset_sizes)
            ax.set_title(family.title + " — by kind", loc="left")
        axes[0].set_ylabel("Spearman ρ (mean over sources)")
        for ax in axes:
            _zero_line(ax)
        _legend_below(figure, axes[0], len(kinds))

    return Drawing(
        draw,
        (10, 4.4),
        "Mean Spearman correlation per kind of score source across the subsets",
    )


def by_kind_chart(
    by_kind: Sequence[dict],
    families: Sequence[SubsetFamily],
    *,
    subset_sizes: dict[str, int] | None = None,
) -> str | None:
    return _svg(by_kind_drawing(by_kind, families, subset_sizes=subset_sizes))


def _legend_below(figure: Figure, ax, n_entries: int) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="outside lower center", ncols=min(n_entries, 3))


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


def agreement_chart(agreement: dict) -> str | None:
    return _svg(agreement_drawing(agreement))


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


def crowd_spearman_histogram(annotators: Sequence[dict]) -> str | None:
    return _svg(crowd_spearman_drawing(annotators))


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
