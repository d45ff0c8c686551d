"""Charts of the model-human correlations across the subset families, per source and per
kind of source."""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from analysis.plots.base import (
    KIND_MARKERS,
    KIND_NAMES,
    Drawing,
    _legend_below,
    _source_styles,
    _svg,
    chart_text,
    kind_colour,
)
from analysis.stats.subsets import TUKEY_FENCES, families_for

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
