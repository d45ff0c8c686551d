"""The Genie report as the set page shows it: table rows and the CSV tables
(``documents.csv``, ``features.csv``, ``agreement.csv``). Pure functions of the report."""

from collections.abc import Iterator

from analysis.presentation import fmt

__all__ = [
    "AGREEMENT_COLUMNS",
    "DOCUMENT_COLUMNS",
    "FEATURE_COLUMNS",
    "agreement_rows",
    "agreement_table",
    "document_rows",
    "document_table",
    "feature_rows",
    "feature_table",
]

DOCUMENT_COLUMNS = ["source", "prompt_id", "document_id", "feature", "novelty", "n_questions"]
FEATURE_COLUMNS = ["source", "feature", "mean", "ci_low", "ci_high", "ci_level", "n_documents"]
AGREEMENT_COLUMNS = [
    "feature",
    "n_pairs",
    "spearman_rho",
    "spearman_p",
    "alpha_interval",
    "alpha_ordinal",
    "reason",
]


def _sources(report: dict) -> list[tuple[str, dict]]:
    return [(source, scores) for source, scores in report.get("scores", {}).items() if scores]


def document_rows(report: dict) -> list[dict]:
    """One row per (source, document): its novelty per feature, in the report's features."""
    features = report.get("features", [])
    rows = []
    for source, scores in _sources(report):
        for entry in scores["per_document"]:
            rows.append(
                {
                    "source": source,
                    "prompt_id": entry["prompt_id"],
                    "document_id": entry["document_id"],
                    "cells": [
                        {
                            "value": entry["features"][f]["novelty"],
                            "text": fmt(entry["features"][f]["novelty"]),
                            "n_questions": entry["features"][f]["n_questions"],
                        }
                        if f in entry["features"]
                        else {"value": "", "text": "—", "n_questions": 0}
                        for f in features
                    ],
                }
            )
    return rows


def feature_rows(report: dict) -> list[dict]:
    rows = []
    for source, scores in _sources(report):
        for feature, summary in scores["per_feature"].items():
            rows.append(
                {
                    "source": source,
                    "feature": feature,
                    **summary,
                    "mean_text": fmt(summary["mean"]),
                    "ci_text": f"[{fmt(summary['ci'][0])}, {fmt(summary['ci'][1])}]",
                }
            )
    return rows


def _agreement_row(feature: str, figures: dict) -> dict:
    rho = figures.get("spearman")
    return {
        "feature": feature,
        "n_pairs": figures["n_pairs"],
        "spearman_rho": rho["rho"] if rho else None,
        "spearman_p": rho["p"] if rho else None,
        "alpha_interval": figures["alpha_interval"],
        "alpha_ordinal": figures["alpha_ordinal"],
        "reason": figures.get("spearman_reason") or "",
    }


def agreement_rows(report: dict) -> list[dict]:
    """Per feature, then ``(all features)``; empty without pairs judged by both sources."""
    agreement = report.get("agreement")
    if not agreement:
        return []
    rows = [_agreement_row(f, figures) for f, figures in agreement["per_feature"].items()]
    rows.append(_agreement_row("(all features)", agreement["overall"]))
    for row in rows:
        row["rho_text"] = fmt(row["spearman_rho"])
        p = row["spearman_p"]
        row["p_text"] = "—" if p is None else ("< 0.001" if p < 0.001 else f"{p:.3f}")
        row["interval_text"] = fmt(row["alpha_interval"])
        row["ordinal_text"] = fmt(row["alpha_ordinal"])
    return rows


def document_table(report: dict) -> tuple[list[str], Iterator[list]]:
    rows = (
        [
            source,
            entry["prompt_id"],
            entry["document_id"],
            feature,
            cell["novelty"],
            cell["n_questions"],
        ]
        for source, scores in _sources(report)
        for entry in scores["per_document"]
        for feature, cell in entry["features"].items()
    )
    return DOCUMENT_COLUMNS, rows


def feature_table(report: dict) -> tuple[list[str], Iterator[list]]:
    rows = (
        [
            row["source"],
            row["feature"],
            row["mean"],
            row["ci"][0],
            row["ci"][1],
            row["ci_level"],
            row["n_documents"],
        ]
        for row in feature_rows(report)
    )
    return FEATURE_COLUMNS, rows


def agreement_table(report: dict) -> tuple[list[str], Iterator[list]]:
    rows = ([row[column] for column in AGREEMENT_COLUMNS] for row in agreement_rows(report))
    return AGREEMENT_COLUMNS, rows
