"""The calibration section of the report page (human vs model label distributions) and its
CSV tables."""

from collections.abc import Iterator

from analysis.presentation.base import _ci_text, fmt
from analysis.presentation.pages import category_entries
from analysis.presentation.tables import CATEGORY_KEY_COLUMNS, category_key

# --------------------------------------------------------------------------- calibration

CALIBRATION_MEASURES = [
    ("jsd", "JSD (bits)"),
    ("emd", "EMD (labels)"),
    ("manhattan", "Manhattan"),
    ("cross_entropy", "Cross-entropy (nats)"),
    ("ece", "ECE"),
]
CALIBRATION_COLUMNS = [
    "source",
    "kind",
    "subset",
    "n",
    *[f"{key}{end}" for key, _ in CALIBRATION_MEASURES for end in ("", "_ci_low", "_ci_high")],
    "entropy_spearman_r",
    "entropy_spearman_p",
    "spread_spearman_r",
    "spread_spearman_p",
]


def calibration(report: dict) -> dict | None:
    """The "Calibration to the distribution" card (None when the report has no sources)."""
    section = report.get("calibration")
    if not section:
        return None
    rows = []
    for entry in section["sources"]:
        for subset, figures in entry["subsets"].items():
            rho = figures.get("entropy_spearman") or {}
            rows.append(
                {
                    "source": entry["source"],
                    "subset": subset,
                    "n": figures["n"],
                    "cells": [
                        {"value": fmt(figures[key]["mean"]), "ci": _ci_text(figures[key]["ci"])}
                        for key, _ in CALIBRATION_MEASURES
                    ],
                    "entropy_rho": fmt(rho.get("r")),
                }
            )
    scalar = [
        {
            "source": entry["source"],
            "n": entry["n"],
            "rho": fmt((entry.get("spread_spearman") or {}).get("r")),
            "reason": entry.get("reason"),
        }
        for entry in section["scalar_sources"]
    ]
    return {
        "headers": [title for _, title in CALIBRATION_MEASURES],
        "rows": rows,
        "scalar": scalar,
        "scalar_note": section["scalar_note"],
        "bootstrap": section["bootstrap"],
    }


def calibration_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of calibration.csv: one row per distributional source and subset with
    every measure and its interval, then one row per scalar source with its spread Spearman."""
    section = report.get("calibration") or {}

    def rows():
        for entry in section.get("sources", []):
            for subset, figures in entry["subsets"].items():
                row = [entry["source"], entry["kind"], subset, figures["n"]]
                for key, _ in CALIBRATION_MEASURES:
                    ci = figures[key]["ci"] or [None, None]
                    row += [figures[key]["mean"], *ci]
                rho = figures.get("entropy_spearman") or {}
                yield [*row, rho.get("r"), rho.get("p"), None, None]
        for entry in section.get("scalar_sources", []):
            spread = entry.get("spread_spearman") or {}
            blank = [None] * (len(CALIBRATION_COLUMNS) - 8)
            yield [entry["source"], entry["kind"], "full", entry["n"], *blank, None, None,
                   spread.get("r"), spread.get("p")]  # fmt: skip

    return CALIBRATION_COLUMNS, rows()


def win_probability_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of win_probability.csv: Bradley–Terry–Davidson P(row model beats
    column model), models in rank order (pairwise batches with a fit; else no rows)."""
    fit = (report.get("rankings") or {}).get("bradley_terry") or {}
    matrix = fit.get("win_probability") or {"models": [], "matrix": []}
    columns = ["model", *matrix["models"]]
    rows = ([model, *row] for model, row in zip(matrix["models"], matrix["matrix"], strict=True))
    return columns, rows


# --------------------------------------------------------------------------- by category


def category_calibration(
    report: dict, category: str | None = None, subcategory: str | None = None
) -> dict | None:
    """The calibration card's "By category" table: one row per ``by_category`` entry (of
    ``category`` / ``subcategory`` when given) and one cell per source that gave
    distributions: its mean JSD over the group's items with the interval. None when no
    group has such a source."""
    section = report.get("calibration") or {}
    sources = [entry["source"] for entry in section.get("sources", [])]
    entries = [
        entry
        for entry in category_entries(report, category, subcategory)
        if entry.get("calibration")
    ]
    if not sources or not entries:
        return None
    rows = []
    for entry in entries:
        by_source = {s["source"]: s["subsets"]["full"] for s in entry["calibration"]["sources"]}
        rows.append(
            {
                "category": entry["category"],
                "subcategory": entry["subcategory"],
                "is_subcategory": entry["subcategory"] is not None,
                "small": entry["small"],
                "cells": [
                    {
                        "value": fmt(by_source[name]["jsd"]["mean"]),
                        "ci": _ci_text(by_source[name]["jsd"]["ci"]),
                        "n": by_source[name]["n"],
                    }
                    if name in by_source and by_source[name]["n"]
                    else None
                    for name in sources
                ],
            }
        )
    return {"sources": sources, "rows": rows}


def category_calibration_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of category_calibration.csv: calibration.csv's columns for every
    ``by_category`` entry, each row led by its category, sub-category and ``small``."""

    def rows():
        for entry in report.get("by_category", []):
            if not entry.get("calibration"):
                continue
            _, table = calibration_table({"calibration": entry["calibration"]})
            for row in table:
                yield [*category_key(entry), *row]

    return [*CATEGORY_KEY_COLUMNS, *CALIBRATION_COLUMNS], rows()
