"""Report dict → rows for the report page and the CSV downloads (ANALYSIS.md).

Pure: these functions take the report JSON of ``analysis.reports`` (and, for the page,
plain values such as the subset names a visitor picked or how many rows to show) and
return display rows, figures and CSV tables. No requests, no queries: ``analysis.views``
parses the request, fetches the report and renders what comes back.

The CSV tables are ``(columns, rows)`` with each row a list in column order;
``csv_stream`` writes them with the dataset exports' CSV writer
(``annotation.services.exporting.csv_chunks``: CRLF line ends, formula cells neutralised).
"""

from collections.abc import Iterable, Iterator

from analysis import plots
from analysis.report_kind import compares_two
from analysis.stats.subsets import ROLE_TITLES, families_for
from annotation.services.exports.formats import csv_chunks

KIND_NAMES = {
    "lm": "Language models",
    "reward_model": "Reward models",
    "judge": "LLM judges",
    "other": "Other sources",
}
AGREEMENT_FIGURES = [
    ("krippendorff_alpha_ordinal", "Krippendorff α (ordinal)", "1 = perfect agreement"),
    ("krippendorff_alpha_interval", "Krippendorff α (interval)", "1 = perfect agreement"),
    ("mean_entropy_bits", "Mean entropy (bits)", "over the 5 labels; 0 … log₂5 ≈ 2.32"),
    ("mean_grouped_entropy_bits", "Mean entropy, 3 groups (bits)", "low / mid / high"),
    ("mean_gini_impurity", "Mean Gini impurity", "1 − Σ p²"),
    (
        "mean_pairwise_annotator_disagreement",
        "Annotator pairs that differ",
        "share of pairs on an item",
    ),
    ("mean_majority_share", "Outside the top label", "1 − share of the most common label"),
    ("mean_p_disagree", "Mean p_disagree", "pairwise: share against the majority side"),
]
CORRELATION_COLUMNS = [
    "source",
    "kind",
    "subset",
    "n",
    "spearman_r",
    "spearman_p",
    "spearman_ci_low",
    "spearman_ci_high",
    "pearson_r",
    "pearson_p",
    "pearson_ci_low",
    "pearson_ci_high",
    "reason",
]
ANNOTATOR_COLUMNS = [
    "annotator",
    "n_labels",
    "n_compared",
    "crowd_spearman",
    "crowd_spearman_p",
    "median_duration_ms",
    "attention_checks_passed",
    "attention_checks_failed",
    "reason",
]


# --------------------------------------------------------------------------- numbers


def fmt(value, digits: int = 3) -> str:
    """A number for display: fixed decimals, a real minus sign, ``—`` when missing."""
    if value is None:
        return "—"
    return f"{value:.{digits}f}".replace("-", "−")


def _fmt_p(p) -> str:
    if p is None:
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _ci_text(ci) -> str:
    return f"[{fmt(ci[0])}, {fmt(ci[1])}]" if ci else ""


def subset_sizes(report: dict) -> dict[str, int]:
    """Number of items in each of the report's subsets."""
    return {name: len(ids) for name, ids in report.get("subsets", {}).items()}


# --------------------------------------------------------------------------- headline table


def _subset_choice(wanted: str, family, default: str) -> str:
    """The subset of ``family`` to show: the one asked for if it exists, else a default."""
    options = [subset for subset in family.subsets if subset != "full"] if family else []
    if wanted in options:
        return wanted
    if default in options:
        return default
    return options[len(options) // 2] if options else ""


def _source_cell(entry: dict | None) -> dict:
    if entry is None:
        return {"r": "—", "ci": "", "n": "", "reason": "not scored", "missing": True}
    spearman, pearson = entry.get("spearman"), entry.get("pearson")
    n = f"n = {entry['n']:,}"
    if spearman is None:
        return {
            "r": "—",
            "ci": "",
            "n": n,
            "reason": entry.get("reason") or "undefined",
            "missing": True,
        }
    title = f"Spearman ρ = {fmt(spearman['r'])}, p {_fmt_p(spearman['p'])}"
    if pearson is not None:
        title += f"; Pearson r = {fmt(pearson['r'])} {_ci_text(pearson.get('ci95'))}".rstrip()
    return {
        "r": fmt(spearman["r"]),
        "ci": _ci_text(spearman.get("ci95")),
        "n": n,
        "reason": "",
        "title": title,
        "missing": False,
    }


def _kind_cell(entry: dict | None, subset_size: int | None) -> dict:
    if entry is None or entry.get("spearman_mean") is None:
        return {
            "r": "—",
            "ci": "",
            "n": "",
            "reason": "no source of this kind is defined here",
            "missing": True,
        }
    sources = entry["n_sources"]
    n = f"mean of {sources} source{'s' if sources != 1 else ''}"
    if subset_size is not None:
        n += f" · {subset_size:,} items"
    return {
        "r": fmt(entry["spearman_mean"]),
        "ci": "",
        "n": n,
        "reason": "",
        "title": f"Pearson r (mean) = {fmt(entry.get('pearson_mean'))}",
        "missing": False,
    }


def headline_rows(report: dict) -> list[dict]:
    """One row per source and per kind, with a display cell for every subset."""
    subsets = list(report.get("subsets", {}))
    sizes = subset_sizes(report)
    by_source: dict[str, dict[str, dict]] = {}
    kinds_of: dict[str, str] = {}
    for entry in report.get("correlations", []):
        by_source.setdefault(entry["source"], {})[entry["subset"]] = entry
        kinds_of[entry["source"]] = entry["kind"]
    names = [s["source"] for s in report.get("sources", []) if s["source"] in by_source]
    names += [name for name in by_source if name not in names]
    slots = plots.source_slots(by_source)  # the charts' colour of each source
    rows = [
        {
            "label": name,
            "swatch": f"source-colour-{slots[str(name)]}",
            "kind": kinds_of[name],
            "kind_name": plots.KIND_NAMES.get(kinds_of[name], kinds_of[name]),
            "is_kind": False,
            "cells": {subset: _source_cell(by_source[name].get(subset)) for subset in subsets},
        }
        for name in names
    ]
    by_kind: dict[str, dict[str, dict]] = {}
    for entry in report.get("by_kind", []):
        by_kind.setdefault(entry["kind"], {})[entry["subset"]] = entry
    for kind, entries in by_kind.items():
        rows.append(
            {
                "label": KIND_NAMES.get(kind, kind),
                "swatch": f"kind-colour-{kind if kind in plots.KIND_COLOURS else 'other'}",
                "kind": kind,
                "kind_name": "",
                "is_kind": True,
                "cells": {
                    subset: _kind_cell(entries.get(subset), sizes.get(subset)) for subset in subsets
                },
            }
        )
    return rows


def headline(report: dict, similar: str = "", disagree: str = "") -> dict:
    """The headline table: the full set, then one similar-quality and one high-disagreement
    subset (``similar`` / ``disagree`` when the report has them, else the defaults)."""
    families = {
        family.key: family
        for family in plots.subset_families(compares_two(report), report.get("subsets", {}))
    }
    wanted = {"similar": similar, "disagree": disagree}
    sizes = subset_sizes(report)
    columns = [{"key": "full", "subset": "full", "title": "Full set", "options": []}]
    for definition in families_for(compares_two(report)):
        key = definition.role
        family = families.get(key)
        chosen = _subset_choice(wanted[key], family, definition.default_subset)
        if family is None or not chosen:
            continue
        columns.append(
            {
                "key": key,
                "subset": chosen,
                "title": definition.title,
                "options": [
                    {
                        "value": subset,
                        "label": f"{subset} ({sizes.get(subset, 0):,} items)",
                        "selected": subset == chosen,
                    }
                    for subset in family.subsets
                    if subset != "full"
                ],
            }
        )
    rows = headline_rows(report)
    first_kind = next((row for row in rows if row["is_kind"]), None)
    for row in rows:
        row["first_kind"] = row is first_kind
        row["shown"] = [
            {"column": column["key"], **row["cells"][column["subset"]]} for column in columns
        ]
    return {
        "columns": columns,
        "rows": rows,
        "data": [row["cells"] for row in rows],
        "sizes": sizes,
    }


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
                "crowd_p_text": _fmt_p(entry.get("crowd_spearman_p")),
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
            return [None] * 4
        ci = result.get("ci95") or [None, None]
        return [result["r"], result["p"], ci[0], ci[1]]

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


def _category_key(entry: dict) -> list:
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
            row = [*_category_key(entry)]
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
                yield [*_category_key(entry), *row]

    return [*CATEGORY_KEY_COLUMNS, *CORRELATION_COLUMNS], rows()


def category_annotator_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of category_annotators.csv: each annotator's figures over the labels
    of each ``by_category`` entry (attention checks, which have no category, are left out)."""
    names = [c for c in ANNOTATOR_COLUMNS if not c.startswith("attention_checks")]

    def rows():
        for entry in report.get("by_category", []):
            for annotator in entry["annotators"]:
                yield [*_category_key(entry), *[annotator.get(name) for name in names]]

    return [*CATEGORY_KEY_COLUMNS, *names], rows()


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
            "p": _fmt_p(bias["p"]),
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
    return {
        "assumption": section["assumption"],
        "review": section["review"],
        "n_total": len(entries),
        "rows": [
            {
                "annotator": entry["annotator"],
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
    """Columns and rows of competence.csv: one row per annotator with counted labels."""
    entries = (report.get("competence") or {}).get("annotators", [])
    rows = ([entry.get(column) for column in COMPETENCE_COLUMNS] for entry in entries)
    return COMPETENCE_COLUMNS, rows


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
