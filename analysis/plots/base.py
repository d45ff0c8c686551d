"""What every chart of the analysis shares: ``Drawing``, the SVG plumbing, the style, and
one colour per source and per kind of source."""

import hashlib
import html
import io
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import matplotlib
import numpy as np
from cycler import cycler
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

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


def _legend_below(figure: Figure, ax, n_entries: int) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="outside lower center", ncols=min(n_entries, 3))
