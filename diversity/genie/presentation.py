"""The Genie report as the set page shows it: table rows and the CSV tables
(``documents.csv``, ``features.csv``, ``agreement.csv``). Pure functions of the report."""

from collections.abc import Iterator

from analysis.presentation import fmt

__all__ = [
    "AGREEMENT_COLUMNS",
    "chosen_rows",
    "COMPARISON_COLUMNS",
    "QUESTION_COLUMNS",
    "comparison_rows",
    "comparison_table",
    "question_table",
    "DOCUMENT_COLUMNS",
    "FEATURE_COLUMNS",
    "agreement_rows",
    "agreement_table",
    "document_rows",
    "document_table",
    "feature_rows",
    "feature_table",
]

DOCUMENT_COLUMNS = [
    "source",
    "prompt_id",
    "document_id",
    "source_document_id",
    "model",
    "method",
    "feature",
    "novelty",
    "n_questions",
]
QUESTION_COLUMNS = [
    "source",
    "prompt_id",
    "document_id",
    "question_id",
    "feature",
    "question",
    "target_answer",
    "q_genie",
    "n_pairs",
]
COMPARISON_COLUMNS = [
    "source",
    "by",
    "feature",
    "group",
    "versus",
    "value",
    "ci_low",
    "ci_high",
    "p",
    "n_prompts",
    "n_documents",
]
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


def _p_text(p) -> str:
    return "" if p is None else ("< 0.001" if p < 0.001 else f"{p:.3f}")


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
                    "model": entry.get("model") or "",
                    "method": entry.get("method") or "",
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
            entry.get("source_document_id"),
            entry.get("model"),
            entry.get("method"),
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


def comparison_rows(report: dict) -> list[dict]:
    """One row per group mean (``versus`` empty) and per difference of two groups, by
    source, then model/method, then feature."""
    rows = []
    for source, scores in _sources(report):
        for by, table in (scores.get("comparisons") or {}).items():
            if not table:
                continue
            for feature, figures in table["per_feature"].items():
                for m in figures["means"]:
                    rows.append(
                        {
                            "source": source,
                            "by": by,
                            "feature": feature,
                            "group": m["group"],
                            "versus": "",
                            "value": m["mean"],
                            "ci": m["ci"],
                            "p": None,
                            "n_prompts": m["n_prompts"],
                            "n_documents": m["n_documents"],
                        }
                    )
                for d in figures["differences"]:
                    rows.append(
                        {
                            "source": source,
                            "by": by,
                            "feature": feature,
                            "group": d["first"],
                            "versus": d["second"],
                            "value": d["difference"],
                            "ci": d["ci"],
                            "p": d["p"],
                            "n_prompts": d["n_prompts"],
                            "n_documents": None,
                        }
                    )
    for row in rows:
        row["value_text"] = fmt(row["value"])
        row["ci_text"] = f"[{fmt(row['ci'][0])}, {fmt(row['ci'][1])}]"
        row["p_text"] = _p_text(row["p"])
    return rows


def comparison_table(report: dict) -> tuple[list[str], Iterator[list]]:
    rows = (
        [
            r["source"],
            r["by"],
            r["feature"],
            r["group"],
            r["versus"],
            r["value"],
            r["ci"][0],
            r["ci"][1],
            r["p"],
            r["n_prompts"],
            r["n_documents"],
        ]
        for r in comparison_rows(report)
    )
    return COMPARISON_COLUMNS, rows


def question_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Q(doc, q) (GENIE's ``Q_GENIE``) per source, document and question."""
    rows = (
        [source, *(row[column] for column in QUESTION_COLUMNS[1:])]
        for source, scores in _sources(report)
        for row in scores.get("per_question", [])
    )
    return QUESTION_COLUMNS, rows


def chosen_rows(result: dict) -> list[dict]:
    """The chosen comparison (``choice.compared``) as the page's table, one row per feature
    and one for all features: each group's mean with its interval, the difference with its
    interval and p, and the rows ``plots.difference_forest`` draws."""

    def mean_text(entry):
        if entry is None:
            return {"value": "—", "ci": "", "n": ""}
        low, high = entry["ci"]
        return {
            "value": fmt(entry["mean"]),
            "ci": f"[{fmt(low)}, {fmt(high)}]",
            "n": f"{entry['n_prompts']} prompts, {entry['n_documents']} documents",
        }

    rows = []
    for entry in result["per_feature"]:
        difference = entry["difference"]
        row = {
            "feature": entry["feature"],
            "first": mean_text(entry["first"]),
            "second": mean_text(entry["second"]),
            "difference": None,
            "versus": "",
        }
        if difference is not None:
            low, high = difference["ci"]
            row["difference"] = {
                "value": fmt(difference["difference"]),
                "ci": f"[{fmt(low)}, {fmt(high)}]",
                "p": _p_text(difference["p"]),
                "exact": difference["exact"],
                "n_prompts": difference["n_prompts"],
            }
            # what the forest plot reads
            row.update(
                group=difference["first"],
                versus=difference["second"],
                value=difference["difference"],
                ci=difference["ci"],
            )
        rows.append(row)
    return rows
