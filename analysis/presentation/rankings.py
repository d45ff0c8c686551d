"""The rankings and competence sections of the report page, and their CSV tables."""

from collections.abc import Iterator

from analysis.presentation.base import _ci_text, fmt
from analysis.presentation.pages import category_entries
from analysis.presentation.tables import CATEGORY_KEY_COLUMNS, category_key
from analysis.stats.subsets import ROLE_TITLES

# --------------------------------------------------------------------------- rankings


def _rank_text(entry: dict) -> str:
    rank_ci = entry.get("rank_ci")
    if not rank_ci or rank_ci[0] == rank_ci[1]:
        return str(entry["rank"])
    return f"{entry['rank']} ({rank_ci[0]}–{rank_ci[1]})"


def rankings(report: dict) -> dict:
    """The "Model rankings" section as the page shows it; ``missing`` when the report has
    none (its items name fewer than two models, or it predates rankings)."""
    section = report.get("rankings")
    if not section:
        return {"missing": True}
    bradley_terry = section.get("bradley_terry")
    if bradley_terry is not None:
        fitted, score_key, count_key = bradley_terry, "log_strength", "n_comparisons"
    else:
        fitted, score_key, count_key = section["absolute"], "mean", "n_labels"
    rows = []
    for entry in fitted["models"]:
        row = {
            "model": entry["model"],
            "score": fmt(entry[score_key]),
            "ci": _ci_text(entry.get("ci")),
            "rank": _rank_text(entry),
            "n": entry[count_key],
        }
        if bradley_terry is None:
            row["centred"] = fmt(entry.get("centred_mean"))
            row["centred_ci"] = _ci_text(entry.get("centred_ci"))
            row["centred_rank"] = _rank_text(
                {"rank": entry.get("centred_rank"), "rank_ci": entry.get("centred_rank_ci")}
            )
        rows.append(row)
    subsets = []
    for name, entry in fitted.get("by_subset", {}).items():
        tau = entry["kendall_tau"]
        subsets.append(
            {
                "name": name,
                "label": name,
                "title": ROLE_TITLES.get(entry["role"], entry["role"]),
                "order": " > ".join(model["model"] for model in entry["models"]),
                "tau": fmt(tau["tau"]),
                "tau_ci": _ci_text(tau.get("ci")),
                "n_models": tau["n_models"],
                "reason": entry.get("reason"),
            }
        )
    return {
        "missing": False,
        "pairwise": bradley_terry is not None,
        "rows": rows,
        "tie_parameter": fmt(fitted.get("tie_parameter")) if bradley_terry else None,
        "bootstrap": fitted["bootstrap"],
        "n_without": fitted.get("n_items_without_models", 0),
        "reason": fitted.get("reason"),
        "subsets": subsets,
    }


RANKING_COLUMNS = [
    "subset",
    "role",
    "model",
    "score",
    "value",
    "ci_low",
    "ci_high",
    "rank",
    "rank_ci_low",
    "rank_ci_high",
    "n",
    "kendall_tau",
    "kendall_tau_ci_low",
    "kendall_tau_ci_high",
]


def ranking_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of rankings.csv: one row per subset (``full`` first), model and score
    (``log_strength``; absolute batches ``mean`` and ``centred_mean``), with the intervals,
    ranks and, for a subset, Kendall's tau against the full ranking. No rows without a
    ranking."""
    section = report.get("rankings") or {}
    fitted = section.get("bradley_terry") or section.get("absolute")

    def figures(entry: dict, score: str) -> list:
        prefix = "centred_" if score == "centred_mean" else ""
        ci = entry.get(f"{prefix}ci") or [None, None]
        rank_ci = entry.get(f"{prefix}rank_ci") or [None, None]
        count = entry.get("n_comparisons", entry.get("n_labels"))
        return [entry.get(score), *ci, entry.get(f"{prefix}rank"), *rank_ci, count]

    def rows():
        if not fitted:
            return
        scores = ["log_strength"] if section.get("bradley_terry") else ["mean", "centred_mean"]
        parts = [("full", "", fitted["models"], None)]
        for name, entry in fitted.get("by_subset", {}).items():
            parts.append((name, entry["role"], entry["models"], entry["kendall_tau"]))
        for subset, role, models, tau in parts:
            tau_cells = [None, None, None]
            if tau is not None:
                tau_cells = [tau.get("tau"), *(tau.get("ci") or [None, None])]
            for entry in models:
                for score in scores:
                    yield [subset, role, entry["model"], score, *figures(entry, score), *tau_cells]

    return RANKING_COLUMNS, rows()


# --------------------------------------------------------------------------- competence

COMPETENCE_COLUMNS = [
    "annotator",
    "n_labels",
    "dawid_skene_competence",
    "mace_competence",
    "mace_spam_share",
    "mace_strategy_label",
    "majority_agreement",
]


def competence(report: dict, limit: int) -> dict | None:
    """The "Annotator competence" card: the assumption, the review list and the first
    ``limit`` annotators, lowest MACE competence first (None without the section)."""
    section = report.get("competence")
    if not section:
        return None
    entries = sorted(
        section["annotators"],
        key=lambda entry: (entry["mace_competence"] is None, entry["mace_competence"] or 0),
    )
    review = section["review"]
    listed = set(review["lowest"])
    return {
        "assumption": section["assumption"],
        "review": review,
        # a report made before the batch setting existed has no "size": it listed 10 anyway
        "review_not_asked": "size" in review and review["size"] is None,
        "n_total": len(entries),
        "rows": [
            {
                "annotator": entry["annotator"],
                "for_review": entry["annotator"] in listed,
                "n_labels": entry["n_labels"],
                "mace": fmt(entry["mace_competence"], 2),
                "spam": fmt(entry["mace_spam_share"], 2),
                "strategy": entry["mace_strategy_label"],
                "dawid_skene": fmt(entry["dawid_skene_competence"], 2),
                "majority": fmt(entry["majority_agreement"], 2),
            }
            for entry in entries[:limit]
        ],
    }


def competence_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of competence.csv: one row per annotator with counted labels;
    ``review_position`` is the annotator's place (from 1) in the batch's review list, empty
    when not on it."""
    section = report.get("competence") or {}
    place = {name: n for n, name in enumerate((section.get("review") or {}).get("lowest", []), 1)}
    rows = (
        [*(entry.get(column) for column in COMPETENCE_COLUMNS), place.get(entry["annotator"])]
        for entry in section.get("annotators", [])
    )
    return [*COMPETENCE_COLUMNS, "review_position"], rows


# --------------------------------------------------------------------------- by category


def category_rankings(
    report: dict, category: str | None = None, subcategory: str | None = None
) -> dict | None:
    """The rankings card's "By category" table: one row per ``by_category`` entry (of
    ``category`` / ``subcategory`` when given) and one cell per model, the models in the
    batch's rank order; each cell the model's rank (interval) and score [interval] in that
    group. None when no group has a ranking."""
    section = report.get("rankings") or {}
    fitted = section.get("bradley_terry") or section.get("absolute")
    entries = [
        entry for entry in category_entries(report, category, subcategory) if entry.get("rankings")
    ]
    if not fitted or not entries:
        return None
    pairwise = section.get("bradley_terry") is not None
    score_key = "log_strength" if pairwise else "mean"
    models = [entry["model"] for entry in fitted["models"]]
    rows = []
    for entry in entries:
        group = entry["rankings"].get("bradley_terry" if pairwise else "absolute") or {}
        by_model = {row["model"]: row for row in group.get("models", [])}
        rows.append(
            {
                "category": entry["category"],
                "subcategory": entry["subcategory"],
                "is_subcategory": entry["subcategory"] is not None,
                "small": entry["small"],
                "n_items": entry["n_items"],
                "reason": group.get("reason"),
                "cells": [
                    {
                        "rank": _rank_text(by_model[model]),
                        "score": fmt(by_model[model][score_key]),
                        "ci": _ci_text(by_model[model].get("ci")),
                    }
                    if model in by_model
                    else None
                    for model in models
                ],
            }
        )
    return {"models": models, "score": score_key, "rows": rows}


def category_ranking_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of category_rankings.csv: rankings.csv's columns for every
    ``by_category`` entry with a ranking, each row led by its category, sub-category and
    ``small``."""

    def rows():
        for entry in report.get("by_category", []):
            if not entry.get("rankings"):
                continue
            _, table = ranking_table({"rankings": entry["rankings"]})
            for row in table:
                yield [*category_key(entry), *row]

    return [*CATEGORY_KEY_COLUMNS, *RANKING_COLUMNS], rows()
