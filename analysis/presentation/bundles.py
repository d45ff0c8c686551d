"""The bundle sections of a bundled batch's report page (ANALYSIS.md, "Bundles") and their
CSV tables: position within the bundle, Kendall's W per bundle, the two-way decomposition
with its ICCs, and each participant's idiosyncrasy. A report without a ``bundles``
section (an unbundled batch) gives ``None`` and no rows."""

from collections.abc import Iterator

from analysis.presentation.base import _fmt_p, fmt, min_p_value_n

POSITION_COLUMNS = ["position_in_bundle", "n_labels", "mean_label"]
CONCORDANCE_COLUMNS = [
    "bundle",
    "n_items",
    "n_participants",
    "n_complete",
    "kendalls_w",
    "mean_item_entropy",
]
DECOMPOSITION_FIGURES = [
    "ms_items",
    "ms_participants",
    "ms_residual",
    "participant_share",
    "icc_2_1",
    "icc_3_1",
]
DECOMPOSITION_COLUMNS = ["bundle", "n_items", "n_participants", *DECOMPOSITION_FIGURES]
IDIOSYNCRASY_COLUMNS = ["annotator", "bundle", "n_items", "spearman_with_others"]
DECOMPOSITION_SUMMARIES = {
    "icc_2_1": "ICC(2,1)",
    "icc_3_1": "ICC(3,1)",
    "participant_share": "Participant share",
}
NO_W = "fewer than 2 complete participants"


def _number(value, digits: int = 3) -> str:
    """``fmt``, without a "−0.000" for a value that is zero to the digits shown."""
    return fmt(None if value is None else round(value, digits) + 0.0, digits)


def _raw(value) -> str:
    """A value for the page's sorting (``data-value``): empty when missing."""
    return "" if value is None else repr(value)


def _p_clause(p, n: int, minimum: int) -> str:
    """ "p = 0.042", "p < 0.001" or "no p-value: too few (n = 4)"."""
    text = _fmt_p(p, n, minimum)
    if text.startswith("too few"):
        return f"no p-value: {text}"
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def position_sentence(effect: dict, minimum: int) -> str:
    """The test of no trend in one sentence, with what it rests on."""
    n = sum(effect.get("n_labels", []))
    if effect.get("spearman_rho") is None:
        return (
            f"no test over {n:,} labels: it needs 3 labels at 2 positions or more, "
            "and labels that differ"
        )
    rho = f"Spearman ρ = {_number(effect['spearman_rho'])} over {n:,} labels"
    if not effect.get("permutations"):  # an analysis run with 0 resamples shuffles nothing
        return f"{rho}; no permutation p-value (the analysis ran with 0 resamples)"
    clause = _p_clause(effect["permutation_p"], n, minimum)
    if not clause.startswith("no p"):
        clause = f"permutation {clause} ({effect['permutations']:,} shuffles)"
    return f"{rho}; {clause}"


def relation_sentence(relation: dict, minimum: int) -> str:
    """W against the mean item entropy over the bundles that have both, in one sentence."""
    n = relation.get("n_bundles", 0)
    bundles = "bundle" if n == 1 else "bundles"
    if relation.get("spearman_rho") is None:
        return f"Spearman ρ undefined over {n:,} {bundles} (it needs 3 that differ)"
    clause = _p_clause(relation.get("p"), n, minimum)
    return f"Spearman ρ = {_number(relation['spearman_rho'])} over {n:,} {bundles}; {clause}"


def _summary(spread: dict | None, total: int, unit: str) -> str:
    """How a figure spreads over the ``total`` bundles (or rankings), with how many of them
    have it."""
    if not spread:
        return f"none of the {total:,} {unit} has one"
    return (
        f"median {_number(spread['median'], 2)} (quartiles {_number(spread['q1'], 2)} to "
        f"{_number(spread['q3'], 2)}), mean {_number(spread['mean'], 2)}, range "
        f"{_number(spread['low'], 2)} to {_number(spread['high'], 2)}; "
        f"n = {spread['n']:,} of {total:,} {unit}"
    )


def _participant_entries(section: dict) -> list[tuple[str, dict]]:
    return [
        (person["annotator"], entry)
        for person in section.get("participants", [])
        for entry in person["bundles"]
    ]


def bundles(report: dict, charts: dict[str, dict] | None = None, limit: int = 2000) -> dict | None:
    """The four bundle sections as the page shows them, with their charts (``charts``: the
    page's drawn bundle charts by key) and at most ``limit`` rows per table; ``None`` for a
    report without bundles."""
    section = report.get("bundles")
    if section is None:
        return None
    minimum = min_p_value_n(report)
    charts = charts or {}
    summary = section.get("summary") or {}
    entries = section.get("bundles", [])
    effect = section.get("position_effect") or {}
    people = _participant_entries(section)
    return {
        "bundle_by": section.get("bundle_by"),
        "bundle_order": section.get("bundle_order"),
        "note": section.get("note"),
        "n_bundles": len(entries),
        "position": {
            "rows": [
                {"position": place + 1, "n": n, "mean": _number(mean), "value": _raw(mean)}
                for place, n, mean in zip(
                    effect.get("positions", []),
                    effect.get("n_labels", []),
                    effect.get("mean_label", []),
                    strict=True,
                )
            ],
            "sentence": position_sentence(effect, minimum) if effect else "",
            "chart": charts.get("bundle-positions"),
        },
        "concordance": {
            "rows": [
                {
                    "bundle": entry["bundle"],
                    "n_items": entry["n_items"],
                    "n_participants": entry["n_participants"],
                    "n_complete": entry["n_complete"],
                    "w": _number(entry["kendalls_w"]),
                    "w_value": _raw(entry["kendalls_w"]),
                    "w_reason": _no_w_reason(entry),
                    "entropy": _number(entry["mean_item_entropy"]),
                    "entropy_value": _raw(entry["mean_item_entropy"]),
                }
                for entry in entries[:limit]
            ],
            "summary": _summary(summary.get("kendalls_w"), len(entries), "bundles"),
            "relation": relation_sentence(section.get("w_versus_entropy") or {}, minimum),
            "charts": [charts[key] for key in ("bundle-w", "bundle-w-entropy") if key in charts],
        },
        "decomposition": {
            "rows": [_decomposition_row(entry) for entry in entries[:limit]],
            "summaries": [
                {
                    "title": title,
                    "text": _summary(summary.get(key), len(entries), "bundles"),
                }
                for key, title in DECOMPOSITION_SUMMARIES.items()
            ],
            "chart": charts.get("bundle-decomposition"),
        },
        "idiosyncrasy": {
            "rows": [
                {
                    "annotator": annotator,
                    "bundle": entry["bundle"],
                    "n_items": entry.get("n_items"),
                    "rho": _number(entry["spearman_with_others"]),
                    "value": _raw(entry["spearman_with_others"]),
                }
                for annotator, entry in people[:limit]
            ],
            "n_total": len(people),
            "summary": _summary(summary.get("spearman_with_others"), len(people), "rankings"),
            "chart": charts.get("bundle-idiosyncrasy"),
        },
        "capped": len(entries) > limit or len(people) > limit,
        "limit": limit,
    }


def _no_w_reason(entry: dict) -> str:
    if entry["n_complete"] < 2:
        return NO_W
    return "a single item" if entry["n_items"] < 2 else "every label the same"


def _decomposition_row(entry: dict) -> dict:
    two_way = entry.get("two_way")
    row = {"bundle": entry["bundle"], "n_items": entry["n_items"], "defined": two_way is not None}
    if two_way is None:
        reason = NO_W if entry["n_complete"] < 2 else "a single item"
        return {**row, "k": entry["n_complete"], "reason": reason}
    cells = [
        {"text": _number(two_way[key]), "value": _raw(two_way[key])}
        for key in DECOMPOSITION_FIGURES
    ]
    return {**row, "k": two_way["n_participants"], "cells": cells}


# --------------------------------------------------------------------------- CSV tables


def bundle_position_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of bundle_positions.csv: one row per position (0 first, as
    ``position_in_bundle`` in the exports) with its number of labels and mean label."""
    effect = (report.get("bundles") or {}).get("position_effect") or {}
    rows = (
        list(row)
        for row in zip(
            effect.get("positions", []),
            effect.get("n_labels", []),
            effect.get("mean_label", []),
            strict=True,
        )
    )
    return POSITION_COLUMNS, rows


def bundle_concordance_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of bundle_concordance.csv: one row per bundle with its Kendall's W
    (over its complete participants) and the mean label entropy of its items."""
    entries = (report.get("bundles") or {}).get("bundles", [])
    return CONCORDANCE_COLUMNS, ([entry[key] for key in CONCORDANCE_COLUMNS] for entry in entries)


def bundle_decomposition_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of bundle_decomposition.csv: one row per bundle with the two-way
    decomposition of its complete participants (``n_participants``: k) — mean squares,
    participant share, ICC(2,1) and ICC(3,1) — empty where it is undefined."""
    entries = (report.get("bundles") or {}).get("bundles", [])

    def rows():
        for entry in entries:
            two_way = entry.get("two_way") or {}
            k = two_way.get("n_participants", entry["n_complete"])
            figures = [two_way.get(key) for key in DECOMPOSITION_FIGURES]
            yield [entry["bundle"], entry["n_items"], k, *figures]

    return DECOMPOSITION_COLUMNS, rows()


def bundle_idiosyncrasy_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of bundle_participants.csv: one row per participant and bundle with
    the Spearman ρ of their labels against the others' mean and the items it rests on."""
    people = _participant_entries(report.get("bundles") or {})
    rows = (
        [annotator, entry["bundle"], entry.get("n_items"), entry["spearman_with_others"]]
        for annotator, entry in people
    )
    return IDIOSYNCRASY_COLUMNS, rows
