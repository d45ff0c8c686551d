"""The census report as the page shows it: table rows, comparison summaries, bar rows and
the CSV tables (``models.csv``, ``categories.csv``). Pure functions of the report dict."""

from collections.abc import Iterator

from analysis.presentation import fmt

__all__ = [
    "CATEGORY_COLUMNS",
    "MODEL_COLUMNS",
    "bar_rows",
    "bar_series",
    "category_rows",
    "category_table",
    "comparisons",
    "model_rows",
    "model_table",
]

MODEL_COLUMNS = [
    "rank",
    "model",
    "type",
    "surprisal",
    "surprisal_ci90_low",
    "surprisal_ci90_high",
    "modal_avoid",
    "novel_rate",
    "self_distinct",
    "n_answers",
]
CATEGORY_COLUMNS = [
    "category",
    "modal",
    "modal_share",
    "second_share",
    "n_distinct",
    "n_answers",
    "n_ge5",
    "norms_human_modal",
    "norms_human_share",
    "norms_model_modal",
    "norms_model_share",
    "wording_mismatch",
    "batch_human_modal",
    "batch_human_share",
    "batch_n_answers",
]


def _percent(share) -> str:
    return "—" if share is None else f"{100 * share:.1f} %"


def _ranked(report: dict) -> list[tuple[str, dict]]:
    """Models by mean surprisal, highest first (ties by name)."""
    return sorted(report.get("per_model", {}).items(), key=lambda e: (-e[1]["surprisal"], e[0]))


def model_rows(report: dict) -> list[dict]:
    rows = []
    for rank, (model, metrics) in enumerate(_ranked(report), start=1):
        low, high = metrics["surprisal_ci90"]
        rows.append(
            {
                "rank": rank,
                "model": model,
                **metrics,
                "surprisal_text": fmt(metrics["surprisal"]),
                "ci_text": f"[{fmt(low)}, {fmt(high)}]",
                "modal_avoid_text": _percent(metrics["modal_avoid"]),
                "novel_rate_text": _percent(metrics["novel_rate"]),
                "self_distinct_text": fmt(metrics["self_distinct"]),
            }
        )
    return rows


def _norm_rows(report: dict) -> dict[str, dict]:
    norms = report.get("norms") or {}
    published = {
        row["category"]: row for row in (norms.get("published") or {}).get("per_category", [])
    }
    mismatched = set(norms.get("wording_mismatch", []))
    return {
        category: {
            "norms_human_modal": row["human_modal"],
            "norms_human_share": row["human_share"],
            "norms_model_modal": row["model_modal"],
            "norms_model_share": row["model_share"],
            "wording_mismatch": category in mismatched,
        }
        for category, row in published.items()
    }


def _batch_rows(report: dict) -> dict[str, dict]:
    batch = report.get("human_batch") or {}
    return {
        category: {
            "batch_human_modal": figures["modal"],
            "batch_human_share": figures["modal_share"],
            "batch_n_answers": figures["n_answers"],
        }
        for category, figures in batch.get("per_category", {}).items()
    }


def category_rows(report: dict) -> list[dict]:
    """Every category of the census (report order) with the human figures beside it."""
    norms, batch = _norm_rows(report), _batch_rows(report)
    rows = []
    for category, figures in report.get("per_category", {}).items():
        row = {
            "category": category,
            **figures,
            **norms.get(category, {}),
            **batch.get(category, {}),
        }
        row["modal_share_text"] = _percent(figures["modal_share"])
        row["second_share_text"] = _percent(figures.get("second_share"))
        row["norms_human_share_text"] = _percent(row.get("norms_human_share"))
        row["norms_model_share_text"] = _percent(row.get("norms_model_share"))
        row["batch_human_share_text"] = _percent(row.get("batch_human_share"))
        rows.append(row)
    return rows


def comparisons(report: dict) -> list[dict]:
    """The "more concentrated than people" summaries, each saying which fields it compares."""
    found = []
    norms = report.get("norms") or {}
    mismatched = len(norms.get("wording_mismatch", []))
    candidates = [
        (
            "published",
            norms.get("published"),
            "Imported norms against the model column published with them",
            "As published with the norms"
            + (
                f" ({mismatched} of its categories come from a separate run with the norms' "
                "exact wording, which is not among the stored replies)."
                if mismatched
                else "."
            ),
        ),
        (
            "computed",
            norms.get("computed"),
            "Imported norms against the model field computed here",
            "The model field computed from this census's stored replies.",
        ),
    ]
    batch = report.get("human_batch")
    if batch:
        candidates.append(
            (
                "batch",
                batch.get("computed"),
                f"Human batch {batch['batch']} against the model field computed here",
                f"People's norms computed from the counted answers of batch {batch['batch']} "
                f"({batch['n_labels']} labels, {batch['n_annotators']} annotators).",
            )
        )
    for key, comparison, title, note in candidates:
        if not comparison:
            continue
        found.append(
            {
                "key": key,
                "title": title,
                "note": note,
                "n_categories": comparison["n_categories"],
                "n_more": comparison["n_model_more_concentrated"],
                "mean_model": fmt(comparison["mean_model_share"]),
                "mean_human": fmt(comparison["mean_human_share"]),
            }
        )
    return found


def bar_series(report: dict) -> dict[str, str]:
    """The fields the modal-share bars show, with the legend text that says which is which."""
    series = {"model_computed": "Models, computed from the stored replies"}
    if report.get("norms"):
        series["model_published"] = "Models, as published with the norms"
        series["human_published"] = "People, imported norms"
    if report.get("human_batch"):
        series["human_batch"] = f"People, batch {report['human_batch']['batch']}"
    return series


def bar_rows(report: dict) -> list[dict]:
    return [
        {
            "category": row["category"],
            "model_computed": row["modal_share"],
            "model_published": row.get("norms_model_share"),
            "human_published": row.get("norms_human_share"),
            "human_batch": row.get("batch_human_share"),
        }
        for row in category_rows(report)
    ]


def model_table(report: dict) -> tuple[list[str], Iterator[list]]:
    rows = (
        [
            rank,
            model,
            metrics["type"],
            metrics["surprisal"],
            metrics["surprisal_ci90"][0],
            metrics["surprisal_ci90"][1],
            metrics["modal_avoid"],
            metrics["novel_rate"],
            metrics["self_distinct"],
            metrics["n_answers"],
        ]
        for rank, (model, metrics) in enumerate(_ranked(report), start=1)
    )
    return MODEL_COLUMNS, rows


def category_table(report: dict) -> tuple[list[str], Iterator[list]]:
    rows = ([row.get(column) for column in CATEGORY_COLUMNS] for row in category_rows(report))
    return CATEGORY_COLUMNS, rows
