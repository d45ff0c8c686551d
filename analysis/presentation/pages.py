"""The report page's tables: items, categories, annotators, sources, agreement and
validity."""

from analysis import plots
from analysis.presentation.base import (
    AGREEMENT_FIGURES,
    _fmt_p,
    _p_phrase,
    fmt,
    min_p_value_n,
)
from analysis.presentation.headline import _source_cell
from analysis.report_kind import compares_two

# --------------------------------------------------------------------------- page tables


def _in_category(entry: dict, category: str | None, subcategory: str | None) -> bool:
    """Whether an item entry is of ``category`` and ``subcategory`` (``None``: any)."""
    return (category is None or entry.get("category", "") == category) and (
        subcategory is None or entry.get("subcategory", "") == subcategory
    )


def report_items(report: dict, category: str | None = None, subcategory: str | None = None):
    """The report's item entries, only those of a category (and sub-category) when given."""
    items = report.get("items", [])
    if category is None and subcategory is None:
        return items
    return [item for item in items if _in_category(item, category, subcategory)]


def category_entries(
    report: dict, category: str | None = None, subcategory: str | None = None
) -> list[dict]:
    """The report's ``by_category`` entries, only those of a category (and sub-category)
    when given."""
    return [
        entry
        for entry in report.get("by_category", [])
        if (category is None or entry["category"] == category)
        and (subcategory is None or entry["subcategory"] == subcategory)
    ]


def filtered_report(
    report: dict, category: str | None = None, subcategory: str | None = None
) -> dict:
    """The report as the report page shows it under a category filter: its ``items`` and
    ``by_category`` entries narrowed to the category (and sub-category); the batch-level
    figures stay the whole batch's."""
    if category is None and subcategory is None:
        return report
    return {
        **report,
        "items": report_items(report, category, subcategory),
        "by_category": category_entries(report, category, subcategory),
    }


def incompleteness(report: dict) -> dict | None:
    """What the page's warning says when the report was computed before every item had its
    N counted labels; None for a complete batch (or a report that does not say)."""
    if report.get("complete") is not False:
        return None
    return {
        "items_complete": report["items_complete"],
        "items_total": report["items_total"],
        "labels_per_item": report.get("labels_per_item"),
    }


def has_categories(report: dict) -> bool:
    return bool(report.get("by_category"))


def item_rows(report: dict, limit: int, items: list[dict] | None = None) -> list[dict]:
    """The first ``limit`` rows of the item table (of ``items``, by default all the report's):
    display text and the raw value to sort by."""
    keys = ["mean", "std", "entropy_bits"]
    if compares_two(report):
        keys += ["agreement", "p_disagree"]
    return [
        {
            "item_id": item["item_id"],
            "category": item.get("category", ""),
            "subcategory": item.get("subcategory", ""),
            "n": item["n"],
            "counts": " · ".join(str(count) for count in item.get("counts", {}).values()),
            "cells": [
                {
                    "value": "" if item.get(key) is None else repr(item[key]),
                    "text": fmt(item.get(key)),
                }
                for key in keys
            ],
        }
        for item in (report.get("items", []) if items is None else items)[:limit]
    ]


def category_rows(
    report: dict, category: str | None = None, subcategory: str | None = None
) -> dict:
    """The "By category" table: one row per ``by_category`` entry (of ``category`` /
    ``subcategory`` when given), with counts, the small-group mark, the mean rating, two
    agreement figures and each source's Spearman ρ on the category's full set; plus the
    source names (the columns) and the threshold below which a group is small."""
    sources = [source["source"] for source in report.get("sources", [])]
    rows = []
    for entry in category_entries(report, category, subcategory):
        full = {
            correlation["source"]: correlation
            for correlation in entry["correlations"]
            if correlation["subset"] == "full"
        }
        figures = entry["agreement"]
        rows.append(
            {
                "category": entry["category"],
                "subcategory": entry["subcategory"],
                "is_subcategory": entry["subcategory"] is not None,
                "n_items": entry["n_items"],
                "n_labels": entry["n_labels"],
                "n_annotators": entry["n_annotators"],
                "small": entry["small"],
                "mean_rating": fmt(entry["mean_rating"]),
                "mean_entropy": fmt(figures.get("mean_entropy_bits")),
                "alpha": fmt(figures.get("krippendorff_alpha_ordinal")),
                "sources": [_source_cell(full.get(name)) for name in sources],
            }
        )
    return {
        "rows": rows,
        "sources": sources,
        "min_items": report.get("category_min_items"),
        "n_small": sum(row["small"] for row in rows),
    }


def annotator_rows(report: dict, limit: int) -> list[dict]:
    """The first ``limit`` rows of the annotator table."""
    rows = []
    minimum = min_p_value_n(report)
    for entry in report.get("annotators", [])[:limit]:
        median = entry.get("median_duration_ms")
        passed = entry.get("attention_checks_passed", 0)
        failed = entry.get("attention_checks_failed", 0)
        rows.append(
            {
                **entry,
                "median_seconds": None if median is None else round(median / 1000, 1),
                "checks": passed + failed,
                "crowd_text": fmt(entry.get("crowd_spearman")),
                "crowd_n": entry.get("n_compared", 0),
                "crowd_p_text": _fmt_p(
                    entry.get("crowd_spearman_p"), entry.get("n_compared"), minimum
                ),
            }
        )
    return rows


def source_rows(coverage: list[dict]) -> list[dict]:
    """Score sources as ``analysis.selectors.coverage`` lists them, with display fields."""
    return [
        {
            **source,
            "coverage_percent": 100 * source["coverage"],
            "kind_name": plots.KIND_NAMES.get(source["kind"], source["kind"]),
        }
        for source in coverage
    ]


def agreement(report: dict) -> list[dict]:
    """The batch's agreement figures that the report has, labelled and formatted."""
    figures_of = report.get("agreement", {})
    figures = []
    for key, label, note in AGREEMENT_FIGURES:
        if key not in figures_of:
            continue
        if key == "mean_grouped_entropy_bits" and compares_two(report):
            note = "B / tie / A"
        figures.append({"key": key, "label": label, "note": note, "value": fmt(figures_of[key])})
    return figures


def validity(report: dict) -> dict | None:
    """The report's validity section as the page shows it (None when it has nothing)."""
    section = report.get("validity") or {}
    bias, retest, groups = (
        section.get("position_bias"),
        section.get("test_retest"),
        section.get("groups"),
    )
    if not (bias or retest or groups):
        return None
    shown: dict = {}
    if bias and bias["n_choices"]:
        shown["bias"] = {
            "n_choices": bias["n_choices"],
            "first_share": fmt(bias["first_share"]),
            "p": _p_phrase(bias["p"]),  # "p = 0.042" or "p < 0.001"
            "mean_a_first": fmt(bias["mean_value_a_first"]),
            "mean_b_first": fmt(bias["mean_value_b_first"]),
            "n_a_first": bias["n_a_first"],
            "n_b_first": bias["n_b_first"],
            "strongly_biased": bias["strongly_biased"],
        }
    if retest:
        batch = retest["batch"]
        shown["retest"] = {
            "n_pairs": batch["n_pairs"],
            "exact_share": fmt(batch["exact_share"]),
            "mean_abs_difference": fmt(batch["mean_abs_difference"]),
            "sign_agreement": fmt(batch["sign_agreement"]),
            "signed": batch["sign_agreement"] is not None,
            "annotators": [
                {
                    "annotator": entry["annotator"],
                    "n_pairs": entry["n_pairs"],
                    "exact_share": fmt(entry["exact_share"]),
                    "mean_abs_difference": fmt(entry["mean_abs_difference"]),
                    "sign_agreement": fmt(entry["sign_agreement"]),
                }
                for entry in retest["annotators"]
            ],
        }
    if groups:
        shown["groups"] = {
            "question": groups["question"],
            "text": groups["text"],
            "min_annotators": groups["min_annotators"],
            "mean_entropy_all": fmt(groups["mean_entropy_all"]),
            "questions": groups["questions"],
            "rows": [
                {
                    **entry,
                    "mean_value": fmt(entry["mean_value"]),
                    "mean_entropy_within": fmt(entry["mean_entropy_within"]),
                }
                for entry in groups["groups"]
            ],
        }
    return shown or None
