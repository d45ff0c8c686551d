"""Server-side SVG charts of an analysis report (ANALYSIS.md), drawn with matplotlib.

Each public function takes parts of the report dict (or plain arrays) and returns an SVG
string ready to be put inline into a page — no ``<?xml?>`` prologue, no file written — or
``None`` when there is nothing to draw.

* Only the object-oriented ``Figure`` API (no pyplot, no global figure manager); rcParams
  are set per chart inside ``rc_context`` under a lock, so concurrent requests neither
  share figures nor see each other's style.
* Text stays text (``svg.fonttype = "none"``): the browser draws it, search finds it, and
  matplotlib's SVG writer escapes it (``<``, ``>``, ``&``, quotes), so a source name like
  ``<script>`` is shown, never run. ``$`` is escaped too, so names never turn into
  mathtext, and a leading ``_`` cannot hide a name from the legend.
* Arrays become a handful of artists (histogram stairs, one line per source, one scatter
  or hexbin per panel), never one artist per item: a chart of 26,000 items renders in
  well under a second.
"""

import html
import io
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import matplotlib
import numpy as np
from cycler import cycler
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from analysis.stats.subsets import TUKEY_FENCES, families_for

LOG2_5 = float(np.log2(5))
HEXBIN_ABOVE = 5_000
MAX_NAME_CHARS = 48
MAX_SCATTER_PANELS = 12

PALETTE = list(matplotlib.colormaps["tab10"].colors)
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
LINESTYLES = ["-", "--", ":", "-."]
KIND_NAMES = {
    "lm": "language model",
    "reward_model": "reward model",
    "judge": "LLM judge",
    "other": "other",
}

STYLE = {
    "svg.fonttype": "none",
    "svg.hashsalt": None,  # random ids per chart: several inline SVGs never share clip ids
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
    "axes.prop_cycle": cycler(color=PALETTE),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#5b6475",
    "axes.labelcolor": "#1d2330",
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.color": "#e3e7ee",
    "grid.linewidth": 0.8,
    "xtick.color": "#5b6475",
    "ytick.color": "#5b6475",
    "text.color": "#1d2330",
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
}
_LOCK = threading.Lock()
_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)


# --------------------------------------------------------------------------- plumbing


def _render(draw: Callable[[Figure], None], *, size: tuple[float, float], description: str) -> str:
    """Draw on a fresh figure and return its SVG, sized by its viewBox (CSS scales it)."""
    buffer = io.StringIO()
    with _LOCK, matplotlib.rc_context(STYLE):
        figure = Figure(figsize=size, layout="constrained")
        draw(figure)
        figure.savefig(buffer, format="svg", dpi=144, metadata={"Date": None, "Creator": None})
    svg = _PROLOGUE.sub("", buffer.getvalue(), count=1)
    label = html.escape(description, quote=True)
    return svg.replace("<svg ", f'<svg class="chart" role="img" aria-label="{label}" ', 1).strip()


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


def _style_of(index: int) -> dict:
    return {
        "color": PALETTE[index % len(PALETTE)],
        "marker": MARKERS[index % len(MARKERS)],
        "linestyle": LINESTYLES[(index // len(PALETTE)) % len(LINESTYLES)],
    }


def _histogram(
    ax, values: np.ndarray, edges: np.ndarray, *, color: str, mean_label: str = "mean"
) -> None:
    counts, _ = np.histogram(values, bins=edges)
    ax.stairs(counts, edges, fill=True, color=color, alpha=0.85, linewidth=0)
    ax.stairs(counts, edges, color="#1d2330", linewidth=0.6)
    mean = float(values.mean())
    ax.axvline(mean, color="#1d2330", linestyle="--", linewidth=1.2)
    ax.annotate(
        f"{mean_label} {mean:.2f}",
        xy=(mean, 1),
        xycoords=("data", "axes fraction"),
        xytext=(4, -2),
        textcoords="offset points",
        ha="left",
        va="top",
        fontsize=10,
    )
    ax.set_ylim(0, max(1, counts.max()) * 1.12)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="x", visible=False)


# --------------------------------------------------------------------------- per item


def entropy_histogram(items: Sequence[dict]) -> str | None:
    """Histogram of the items' label entropy in bits, 0 … log2 5 (the study's Fig. 7/9)."""
    values = _finite(item.get("entropy_bits") for item in items)
    if values.size == 0:
        return None

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        _histogram(ax, values, np.linspace(0, LOG2_5, 21), color=PALETTE[0])
        ax.set_xlim(0, LOG2_5)
        ticks = [0, 0.5, 1, 1.5, 2, LOG2_5]
        ax.set_xticks(ticks, ["0", "0.5", "1", "1.5", "2", "log₂5"])
        ax.set_xlabel("Shannon entropy (bits)")
        ax.set_ylabel("items")
        ax.set_title(f"Label entropy per item ({values.size:,} items)", loc="left")

    return _render(draw, size=(6.4, 3.6), description="Histogram of label entropy per item")


def p_disagree_histogram(items: Sequence[dict]) -> str | None:
    """Pairwise batches: histogram of p_disagree (share of labels against the majority)."""
    values = _finite(item.get("p_disagree") for item in items)
    if values.size == 0:
        return None

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        _histogram(ax, values, np.linspace(0, 0.5, 21), color=PALETTE[1])
        ax.set_xlim(0, 0.5)
        ax.set_xlabel("p_disagree (share of labels against the majority side)")
        ax.set_ylabel("items")
        ax.set_title(f"Disagreement per pair ({values.size:,} items)", loc="left")

    return _render(draw, size=(6.4, 3.6), description="Histogram of p_disagree per item")


# --------------------------------------------------------------------------- correlations


@dataclass(frozen=True)
class SubsetFamily:
    """One x axis of the correlation charts: ``full`` and the report's subsets of one family
    of ``analysis.stats.subsets``, in order; ``key`` is the family's role."""

    key: str
    title: str
    axis_label: str
    subsets: tuple[str, ...]


def subset_families(kind: str, subset_names: Iterable[str]) -> list[SubsetFamily]:
    """The report's subsets, grouped as the study plots them (order of the report kept)."""
    names = list(subset_names)
    families = []
    for family in families_for(kind):
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


def correlation_chart(
    correlations: Sequence[dict],
    families: Sequence[SubsetFamily],
    *,
    subset_sizes: dict[str, int] | None = None,
) -> str | None:
    """Spearman ρ of each source across each subset family, with its 95 % CI as a band."""
    sources: dict[str, dict[str, dict]] = {}
    for entry in correlations:
        sources.setdefault(entry["source"], {})[entry["subset"]] = entry
    if not families or all(entry.get("spearman") is None for entry in correlations):
        return None

    def draw(figure: Figure) -> None:
        axes = figure.subplots(1, len(families), sharey=True, squeeze=False)[0]
        for ax, family in zip(axes, families, strict=True):
            x = np.arange(len(family.subsets))
            for index, (source, by_subset) in enumerate(sources.items()):
                r, low, high = (np.full(x.size, np.nan) for _ in range(3))
                for position, subset in enumerate(family.subsets):
                    spearman = (by_subset.get(subset) or {}).get("spearman")
                    if spearman is None:
                        continue
                    r[position] = spearman["r"]
                    if spearman.get("ci95"):
                        low[position], high[position] = spearman["ci95"]
                style = _style_of(index)
                ax.fill_between(x, low, high, color=style["color"], alpha=0.14, linewidth=0)
                ax.plot(x, r, markersize=5, linewidth=1.8, label=chart_text(source), **style)
            _subset_ticks(ax, family, subset_sizes)
            ax.set_title(family.title, loc="left")
        axes[0].set_ylabel("Spearman ρ")
        for ax in axes:
            _zero_line(ax)
        _legend_below(figure, axes[0], len(sources))

    return _render(
        draw,
        size=(10, 4.4 + 0.25 * ((len(sources) - 1) // 3)),
        description="Spearman correlation of each score source across the subsets, "
        "with 95 % bootstrap confidence bands",
    )


def by_kind_chart(
    by_kind: Sequence[dict],
    families: Sequence[SubsetFamily],
    *,
    subset_sizes: dict[str, int] | None = None,
) -> str | None:
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
            for index, (kind, by_subset) in enumerate(kinds.items()):
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
                ax.plot(x, r, markersize=6, linewidth=2, label=label, **_style_of(index))
            _subset_ticks(ax, family, subset_sizes)
            ax.set_title(family.title + " — by kind", loc="left")
        axes[0].set_ylabel("Spearman ρ (mean over sources)")
        for ax in axes:
            _zero_line(ax)
        _legend_below(figure, axes[0], len(kinds))

    return _render(
        draw,
        size=(10, 4.4),
        description="Mean Spearman correlation per kind of score source across the subsets",
    )


def _legend_below(figure: Figure, ax, n_entries: int) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="outside lower center", ncols=min(n_entries, 3))


# --------------------------------------------------------------------------- agreement

AGREEMENT_LABELS = [
    ("krippendorff_alpha_ordinal", "Krippendorff α (ordinal)"),
    ("krippendorff_alpha_interval", "Krippendorff α (interval)"),
    ("mean_entropy_bits", "Entropy, 5 labels (bits)"),
    ("mean_grouped_entropy_bits", "Entropy, 3 groups (bits)"),
    ("mean_gini_impurity", "Gini impurity"),
    ("mean_pairwise_annotator_disagreement", "Annotator pairs that differ"),
    ("mean_majority_share", "1 − share of the top label"),
    ("mean_p_disagree", "p_disagree"),
]


def agreement_chart(agreement: dict) -> str | None:
    """Horizontal bars of the batch-level agreement figures (α and the item means)."""
    rows = [(label, agreement.get(key)) for key, label in AGREEMENT_LABELS if key in agreement]
    if not rows or all(value is None for _, value in rows):
        return None

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        y = np.arange(len(rows))[::-1]
        values = np.array([np.nan if v is None else v for _, v in rows], dtype=float)
        colours = [PALETTE[0] if index < 2 else PALETTE[7] for index in range(len(rows))]
        ax.barh(y, np.nan_to_num(values), color=colours, height=0.62)
        high = max(1.0, float(np.nanmax(values)))
        low = min(0.0, float(np.nanmin(values)))
        ax.set_xlim(low - 0.05 * (high - low), high * 1.18)
        for position, value in zip(y, values, strict=True):
            text = "n/a" if np.isnan(value) else f"{value:.3f}"
            anchor = 0 if np.isnan(value) else max(value, 0)
            ax.text(anchor + 0.02 * high, position, text, va="center", fontsize=10)
        ax.set_yticks(y, [label for label, _ in rows])
        ax.axvline(0, color="#5b6475", linewidth=0.8)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("value")
        ax.set_title("Krippendorff α and disagreement (item means)", loc="left")

    return _render(
        draw,
        size=(6.4, 0.42 * len(rows) + 1.4),
        description="Bar chart of the batch-level agreement figures",
    )


def crowd_spearman_histogram(annotators: Sequence[dict]) -> str | None:
    """Histogram of each annotator's Spearman ρ with the leave-one-out crowd mean."""
    values = _finite(entry.get("crowd_spearman") for entry in annotators)
    if values.size == 0:
        return None
    missing = len(annotators) - values.size

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        _histogram(ax, values, np.linspace(-1, 1, 21), color=PALETTE[2])
        ax.set_xlim(-1, 1)
        ax.set_xlabel("Spearman ρ with the other annotators' mean")
        ax.set_ylabel("annotators")
        title = f"Annotator vs crowd ({values.size:,} annotators)"
        ax.set_title(title, loc="left")
        if missing:
            ax.text(
                0.0,
                -0.3,
                f"{missing:,} without a value (too few shared items)",
                transform=ax.transAxes,
                fontsize=10,
                color="#5b6475",
            )

    return _render(
        draw,
        size=(6.4, 3.6),
        description="Histogram of the annotators' Spearman correlation with the crowd",
    )


# --------------------------------------------------------------------------- scatter


@dataclass(frozen=True)
class ScatterPanel:
    source: str
    kind: str
    scores: np.ndarray
    means: np.ndarray


def score_scatter(panels: Sequence[ScatterPanel], *, pairwise: bool = False) -> str | None:
    """Mean human rating against model score, one panel per source (hexbin when dense)."""
    panels = [p for p in panels if (np.isfinite(p.scores) & np.isfinite(p.means)).any()]
    panels = panels[:MAX_SCATTER_PANELS]
    if not panels:
        return None
    columns = min(3, len(panels))
    rows = -(-len(panels) // columns)

    def draw(figure: Figure) -> None:
        axes = figure.subplots(rows, columns, squeeze=False)
        for ax in axes.ravel()[len(panels) :]:
            ax.set_visible(False)
        for index, (ax, panel) in enumerate(zip(axes.ravel(), panels, strict=False)):
            known = np.isfinite(panel.scores) & np.isfinite(panel.means)
            x, y = panel.scores[known], panel.means[known]
            colour = _style_of(index)["color"]
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
                ax.scatter(x, y, s=size, alpha=alpha, color=colour, linewidths=0, rasterized=True)
            ax.set_title(chart_text(panel.source), loc="left", fontsize=11)
            ax.set_xlabel(f"{KIND_NAMES.get(panel.kind, 'model')} score")
            ax.set_ylabel("mean preference for A" if pairwise else "mean human rating")
            ax.text(
                0.98,
                0.03,
                f"n={x.size:,}",
                transform=ax.transAxes,
                ha="right",
                fontsize=10,
                color="#5b6475",
            )

    return _render(
        draw,
        size=(3.6 * columns, 3.2 * rows + 0.3),
        description="Mean human rating against each source's model score",
    )
