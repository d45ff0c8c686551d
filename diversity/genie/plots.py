"""The Genie set page's charts as inline SVG (matplotlib), in the style of ``analysis.plots``.

* ``novelty_profiles``: one line per document across the features (Genie(doc, feature));
* ``feature_summary_chart``: each feature's mean novelty with its bootstrap interval, one
  marker per judgment source.

A document keeps its colour and line style in every chart (``document_colours``: by its
position in the report), a source its colour too (``SOURCE_COLOURS``). User text goes through
``chart_text``: shown literally, escaped by matplotlib's SVG writer.
"""

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

# The analysis charts' renderer: the same style, and the same lock around matplotlib's
# global rcParams, so charts of several apps never draw with each other's settings.
from analysis.plots import PALETTE, _render, chart_text

__all__ = [
    "MAX_LEGEND_DOCUMENTS",
    "SOURCE_COLOURS",
    "SOURCE_NAMES",
    "difference_forest",
    "document_colours",
    "feature_summary_chart",
    "novelty_profiles",
]

SOURCE_NAMES = {"llm": "LLM judgments", "human": "human judgments"}
SOURCE_COLOURS = {"llm": PALETTE[0], "human": PALETTE[1]}
LINESTYLES = ["-", "--", ":", "-."]
MAX_LEGEND_DOCUMENTS = 20


def document_label(entry: dict) -> str:
    return f"{entry['prompt_id']}/{entry['document_id']}"


def document_colours(per_document: Sequence[dict]) -> dict[str, dict]:
    """A colour and line style per document (``prompt/document``), the same in every chart
    of a report: ten colours, then the same ten with the next line style."""
    return {
        document_label(entry): {
            "color": PALETTE[index % len(PALETTE)],
            "linestyle": LINESTYLES[(index // len(PALETTE)) % len(LINESTYLES)],
        }
        for index, entry in enumerate(per_document)
    }


def novelty_profiles(
    source: str, per_document: Sequence[dict], features: Sequence[str], colours: Mapping
) -> str | None:
    """Genie(doc, feature) for each document, one line per document over ``features``."""
    if not per_document or not features:
        return None

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        x = np.arange(len(features))
        for entry in per_document:
            y = np.array(
                [
                    entry["features"][f]["novelty"] if f in entry["features"] else np.nan
                    for f in features
                ]
            )
            label = document_label(entry)
            ax.plot(
                x,
                y,
                marker="o",
                markersize=4,
                linewidth=1.4,
                **colours[label],
                label=chart_text(label),
            )
        ax.set_xticks(x, [chart_text(f) for f in features])
        ax.set_xlim(-0.3, len(features) - 0.7)
        ax.set_ylim(0, 1)
        ax.set_ylabel("Genie novelty (0 = like the population, 1 = unlike)")
        ax.grid(axis="x", visible=False)
        ax.set_title(
            f"Novelty profiles from the {SOURCE_NAMES[source]} ({len(per_document)} documents)",
            loc="left",
        )
        if len(per_document) <= MAX_LEGEND_DOCUMENTS:
            figure.legend(loc="outside right upper", fontsize=8.5)

    return _render(
        draw,
        size=(9.6, 4.6),
        description=f"Novelty of each document per feature, from the {SOURCE_NAMES[source]}",
    )


def feature_summary_chart(scores: Mapping[str, dict | None], features: Sequence[str]) -> str | None:
    """Each feature's mean novelty across documents with its interval, per source."""
    sources = [source for source in SOURCE_NAMES if scores.get(source)]
    if not sources or not features:
        return None

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        x = np.arange(len(features))
        width = 0.32
        for index, source in enumerate(sources):
            summary = scores[source]["per_feature"]
            mean = np.array([summary[f]["mean"] if f in summary else np.nan for f in features])
            low = np.array([summary[f]["ci"][0] if f in summary else np.nan for f in features])
            high = np.array([summary[f]["ci"][1] if f in summary else np.nan for f in features])
            offset = (index - (len(sources) - 1) / 2) * width
            ax.errorbar(
                x + offset,
                mean,
                yerr=np.clip(np.vstack([mean - low, high - mean]), 0, None),
                fmt="o",
                color=SOURCE_COLOURS[source],
                capsize=3,
                elinewidth=1.4,
                label=SOURCE_NAMES[source],
            )
        ax.set_xticks(x, [chart_text(f) for f in features])
        ax.set_xlim(-0.5, len(features) - 0.5)
        ax.set_ylim(0, 1)
        ax.set_ylabel("mean novelty across documents")
        ax.grid(axis="x", visible=False)
        ax.set_title("Novelty per feature", loc="left")
        figure.legend(loc="outside lower center", ncols=len(sources))

    return _render(
        draw,
        size=(8.4, 4.2),
        description="Mean novelty per feature with bootstrap intervals, per judgment source",
    )


def difference_forest(rows: Sequence[dict], title: str) -> str | None:
    """A forest plot: each difference of two groups (``comparison_rows`` rows with a
    ``versus``) with its interval, one line per (feature, pair), a rule at 0."""
    rows = [row for row in rows if row["versus"]]
    if not rows:
        return None

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        y = np.arange(len(rows))[::-1]
        value = np.array([row["value"] for row in rows])
        low = np.array([row["ci"][0] for row in rows])
        high = np.array([row["ci"][1] for row in rows])
        ax.errorbar(
            value,
            y,
            xerr=np.clip(np.vstack([value - low, high - value]), 0, None),
            fmt="o",
            color=PALETTE[0],
            capsize=3,
            elinewidth=1.4,
        )
        ax.axvline(0, color="#888888", linewidth=1, linestyle="--")
        labels = [chart_text(f"{row['feature']}: {row['group']} − {row['versus']}") for row in rows]
        ax.set_yticks(y, labels)
        ax.set_xlabel("difference in mean Genie novelty (interval: prompts, then documents)")
        ax.grid(axis="y", visible=False)
        ax.set_title(title, loc="left")

    return _render(
        draw,
        size=(8.4, 1.2 + 0.32 * len(rows)),
        description=f"{title}: differences in mean novelty with bootstrap intervals",
    )
