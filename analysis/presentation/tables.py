"""The CSV downloads of a report: items, correlations, annotators and the per-category
tables, as ``(columns, rows)``."""

from collections.abc import Iterable, Iterator

from analysis.presentation.base import (
    AGREEMENT_FIGURES,
    ANNOTATOR_COLUMNS,
    CORRELATION_COLUMNS,
)
from analysis.report_kind import compares_two
from annotation.services.exports.formats import csv_chunks

# --------------------------------------------------------------------------- CSV tables


def csv_stream(columns: list[str], rows: Iterable[list]) -> Iterator[str]:
    """CSV text of a table in chunks, written by the dataset exports' ``csv_chunks``."""
    return csv_chunks((dict(zip(columns, row, strict=True)) for row in rows), columns)


def item_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of items.csv: the per-item figures (with the item's category and
    sub-category) and subset membership (1/0)."""
    items = report.get("items", [])
    labels = list(items[0]["counts"]) if items else []
    pairwise = compares_two(report)
    subsets = {name: set(ids) for name, ids in report.get("subsets", {}).items()}
    columns = ["item_id", "category", "subcategory", "n", *[f"count_{label}" for label in labels]]
    columns += ["mean", "std", "entropy_bits"]
    if pairwise:
        columns += ["agreement", "p_disagree"]
    columns += [f"in_{name}" for name in subsets]

    def rows():
        for item in items:
            row = [item["item_id"], item.get("category", ""), item.get("subcategory", "")]
            row += [item["n"], *[item["counts"].get(lb) for lb in labels]]
            row += [item.get("mean"), item.get("std"), item.get("entropy_bits")]
            if pairwise:
                row += [item.get("agreement"), item.get("p_disagree")]
            row += [int(item["item_id"] in members) for members in subsets.values()]
            yield row

    return columns, rows()


def correlation_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of correlations.csv: one row per source and subset."""

    def figures(result):
        if result is None:
            return [None] * 5
        ci = result.get("ci95") or [None, None]
        return [result["r"], result["p"], result.get("p_method"), ci[0], ci[1]]

    def rows():
        for entry in report.get("correlations", []):
            yield [
                entry["source"],
                entry["kind"],
                entry["subset"],
                entry["n"],
                *figures(entry.get("spearman")),
                *figures(entry.get("pearson")),
                entry.get("reason"),
            ]

    return CORRELATION_COLUMNS, rows()


def annotator_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of annotators.csv: one row per annotator."""
    rows = ([entry.get(column) for column in ANNOTATOR_COLUMNS] for entry in report["annotators"])
    return ANNOTATOR_COLUMNS, rows


CATEGORY_KEY_COLUMNS = ["category", "subcategory", "small"]
CATEGORY_COLUMNS = [
    *CATEGORY_KEY_COLUMNS,
    "n_items",
    "n_labels",
    "n_annotators",
    "mean_rating",
    "mean_std",
]
POSITION_BIAS_COLUMNS = [
    "n_choices",
    "first_share",
    "p",
    "mean_value_a_first",
    "mean_value_b_first",
    "n_a_first",
    "n_b_first",
]
RETEST_COLUMNS = ["n_pairs", "exact_share", "mean_abs_difference", "sign_agreement"]


def category_key(entry: dict) -> list:
    """A ``by_category`` entry's key cells: a whole category has an empty sub-category."""
    return [entry["category"], entry["subcategory"] or "", int(entry["small"])]


def category_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of categories.csv: one row per ``by_category`` entry with its counts,
    ``small`` (1/0), mean rating, every agreement figure, the subset sizes
    (``n_<subset>``), position bias (``position_bias_*``, pairwise), test–retest
    (``retest_*``) and the questionnaire groups' overall entropy."""
    entries = report.get("by_category", [])
    agreement_keys = [key for key, _, _ in AGREEMENT_FIGURES]
    agreement_keys = [k for k in agreement_keys if any(k in e["agreement"] for e in entries)]
    subsets = list(report.get("subsets", {}))
    columns = [*CATEGORY_COLUMNS, *agreement_keys, *[f"n_{subset}" for subset in subsets]]
    columns += [f"position_bias_{key}" for key in POSITION_BIAS_COLUMNS]
    columns += [f"retest_{key}" for key in RETEST_COLUMNS]
    columns += ["groups_question", "groups_mean_entropy_all"]

    def rows():
        for entry in entries:
            validity = entry.get("validity") or {}
            bias = validity.get("position_bias") or {}
            retest = (validity.get("test_retest") or {}).get("batch") or {}
            groups = validity.get("groups") or {}
            row = [*category_key(entry)]
            row += [entry[key] for key in CATEGORY_COLUMNS[len(CATEGORY_KEY_COLUMNS) :]]
            row += [entry["agreement"].get(key) for key in agreement_keys]
            row += [entry["subset_sizes"].get(subset) for subset in subsets]
            row += [bias.get(key) for key in POSITION_BIAS_COLUMNS]
            row += [retest.get(key) for key in RETEST_COLUMNS]
            row += [groups.get("question"), groups.get("mean_entropy_all")]
            yield row

    return columns, rows()


def category_correlation_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of category_correlations.csv: correlations.csv's columns for every
    ``by_category`` entry, each row led by the entry's category, sub-category and ``small``."""

    def rows():
        for entry in report.get("by_category", []):
            _, table = correlation_table({"correlations": entry["correlations"]})
            for row in table:
                yield [*category_key(entry), *row]

    return [*CATEGORY_KEY_COLUMNS, *CORRELATION_COLUMNS], rows()


def category_annotator_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of category_annotators.csv: each annotator's figures over the labels
    of each ``by_category`` entry (attention checks, which have no category, are left out)."""
    names = [c for c in ANNOTATOR_COLUMNS if not c.startswith("attention_checks")]

    def rows():
        for entry in report.get("by_category", []):
            for annotator in entry["annotators"]:
                yield [*category_key(entry), *[annotator.get(name) for name in names]]

    return [*CATEGORY_KEY_COLUMNS, *names], rows()
