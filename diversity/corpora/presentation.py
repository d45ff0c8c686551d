"""The corpus report shaped for people: the tables of the corpus page, each also a CSV file.

Every ``*_table(report)`` returns ``(columns, rows)``; the page shows the rows and the
download writes the same rows (``TABLES``), so a figure on the page and in the file never
differ. Numbers stay numbers (``None`` for undefined); ``number_text`` formats them for
the page only.
"""

import numpy as np

from diversity.corpora.services.analyses import QUERY_TABLE_N

__all__ = [
    "QUERY_TABLE_POINTS",
    "TABLES",
    "category_table",
    "human_table",
    "inter_model_table",
    "model_table",
    "number_text",
    "off_diagonal_mean",
    "top_n_table",
]

QUERY_TABLE_POINTS = QUERY_TABLE_N
LEXICAL_KEYS = ("distinct_1", "distinct_2", "distinct_3", "duplicate_share")


def number_text(value, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def _ci_key(section: dict) -> str:
    return next((key for key in section if key.startswith("ci")), "ci95")


def off_diagonal_mean(inter: dict) -> float | None:
    """Mean of the model-pair entries (off the diagonal) that are defined."""
    matrix = np.array(
        [[np.nan if v is None else v for v in row] for row in inter["matrix"]], dtype=float
    ).reshape(len(inter["models"]), len(inter["models"]))
    values = matrix[~np.eye(matrix.shape[0], dtype=bool)]
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else None


def model_table(report: dict) -> tuple[list[str], list[list]]:
    """Per model: intra-model repetition and its own lexical figures."""
    thresholds = [f"share_above_{t:g}" for t in report["settings"]["thresholds"]]
    columns = ["model", "intra_model_mean", "values", *thresholds, *LEXICAL_KEYS]
    lexical = (report.get("lexical") or {}).get("by_model", {})
    rows = []
    for model in report["models"]:
        figures = report["intra_model"].get(model)
        if figures is None:
            continue
        own = lexical.get(model, {})
        rows.append(
            [model, figures["mean"], figures["values"]]
            + [figures.get(key) for key in thresholds]
            + [own.get(key) for key in LEXICAL_KEYS]
        )
    return columns, rows


def histogram_table(report: dict) -> tuple[list[str], list[list]]:
    """Share of (model, query) values per tenth of [0, 1], pooled and per model."""
    columns = ["model", *[f"bin_{b / 10:.1f}_{(b + 1) / 10:.1f}" for b in range(10)]]
    rows = [
        [name, *figures["histogram"]]
        for name, figures in report["intra_model"].items()
        if name != "pooled"
    ]
    rows.insert(0, ["pooled", *report["intra_model"]["pooled"]["histogram"]])
    return columns, rows


def inter_model_table(report: dict) -> tuple[list[str], list[list]]:
    """One row per ordered pair of models, in clustering order; the diagonal rows hold the
    intra-model means (``diagonal`` = 1)."""
    inter = report["inter_model"]
    models = inter["models"]
    rows = []
    for a, first in enumerate(models):
        for b, second in enumerate(models):
            rows.append([first, second, int(a == b), inter["matrix"][a][b], inter["queries"][a][b]])
    return ["model_a", "model_b", "diagonal", "similarity", "queries"], rows


def top_n_table(report: dict) -> tuple[list[str], list[list]]:
    section = report["top_n"]
    ci = section[_ci_key(section)]
    rows = [
        [n, mean, low_high[0], low_high[1], queries]
        for n, mean, low_high, queries in zip(
            section["n"], section["mean_unique_models"], ci, section["queries"], strict=True
        )
    ]
    return ["n", "mean_unique_models", "ci_low", "ci_high", "queries"], rows


def _group_row(category: str, subcategory: str, group: dict) -> list:
    top = group["top_n"]["mean_unique_models"]
    lexical = (group.get("lexical") or {}).get("by_query", {})
    return [
        category,
        subcategory,
        group["queries"],
        group["responses"],
        int(bool(group["small"])),
        group["intra_model"]["pooled"]["mean"],
        off_diagonal_mean(group["inter_model"]),
        *[top[n - 1] if n <= len(top) else None for n in QUERY_TABLE_POINTS],
        *[lexical.get(key) for key in LEXICAL_KEYS],
    ]


def category_table(report: dict) -> tuple[list[str], list[list]]:
    """The corpus, then each category and its sub-categories (``small`` = fewer queries
    than ``settings.min_group_queries``)."""
    columns = [
        "category",
        "subcategory",
        "queries",
        "responses",
        "small",
        "intra_model_mean",
        "inter_model_mean",
        *[f"unique_models_n{n}" for n in QUERY_TABLE_POINTS],
        *LEXICAL_KEYS,
    ]
    rows = [_group_row("(all)", "", report)]
    subcategories = report.get("by_subcategory", {})
    for category, group in report.get("by_category", {}).items():
        rows.append(_group_row(category, "", group))
        for subcategory, subgroup in subcategories.get(category, {}).items():
            rows.append(_group_row(category, subcategory, subgroup))
    return columns, rows


def human_table(report: dict) -> tuple[list[str], list[list]]:
    """Per linked batch, pooled and per category: Spearman's rho of typicality against the
    mean rating and against the item's entropy, with the 95 % interval."""
    columns = [
        "batch",
        "category",
        "items",
        "rated_items",
        "small",
        "rho_rating",
        "rho_rating_ci_low",
        "rho_rating_ci_high",
        "n_rating",
        "rho_entropy",
        "rho_entropy_ci_low",
        "rho_entropy_ci_high",
        "n_entropy",
    ]

    def row(batch: str, category: str, section: dict) -> list:
        out = [batch, category, section["items"], section["rated_items"], int(section["small"])]
        for key in ("typicality_vs_mean_rating", "typicality_vs_entropy"):
            figures = section[key]
            ci = figures["ci95"] or [None, None]
            out += [figures["rho"], ci[0], ci[1], figures["n"]]
        return out

    rows = []
    for link in (report.get("human_judgments") or {}).get("batches", []):
        rows.append(row(link["batch"], "(all)", link))
        for category, section in link["by_category"].items():
            rows.append(row(link["batch"], category, section))
    return columns, rows


TABLES = {
    "models": model_table,
    "histogram": histogram_table,
    "inter-model": inter_model_table,
    "top-n": top_n_table,
    "categories": category_table,
    "human": human_table,
}
